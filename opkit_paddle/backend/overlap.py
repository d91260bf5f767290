"""The op types both opkit's built-in ops and PaddlePaddle's legacy op registry have: what
`opkit test --backend paddle` can judge without an OpTest of the user's own.

    python -m opkit_paddle.backend.overlap      # prints them, one line
"""
from __future__ import annotations

from opkit_paddle.backend import env as paddle_env
from opkit.registry import all_op_types

__all__ = ["overlap_ops", "CONTROL_FLOW"]

# ops whose case is a sub-block program, which the one-op backend cannot build
CONTROL_FLOW = ("while", "conditional_block", "recurrent")


def overlap_ops(include_control_flow: bool = False) -> list[str]:
    ops = [t for t in all_op_types() if not t.endswith("_grad") and paddle_env.has_op(t)]
    if not include_control_flow:
        ops = [t for t in ops if t not in CONTROL_FLOW]
    return sorted(ops)


if __name__ == "__main__":
    print(" ".join(overlap_ops()))
