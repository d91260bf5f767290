"""`opcheck`: PyTorch's own registration tests (`torch.library.opcheck`) on the OpTest's
sample, for custom ops (a namespace other than aten / prims).

`torch.library.opcheck(op, args, kwargs)` runs its tests (the schema's mutation and
aliasing claims, the autograd registration, the fake kernel against the real one, AOT
dispatch) on one sample: this check builds that sample from the OpTest's inputs and attrs
(CPU float64, float inputs once without and once with `requires_grad` when the op has a
gradient) and calls it; nothing of what opcheck does is rewritten here. Each failing test
becomes one failure naming opcheck's test, the sample (shapes, dtypes, attrs) and the first
line of its error. The check runs by default under `--backend torch` only; on another
backend `--checks opcheck` skips with the reason.
"""
from __future__ import annotations

import numpy as np

from harness.backend.dispatch import selected
from harness.checks.base import Check, Mismatch

__all__ = ["OpcheckCheck", "CHECK", "BACKEND", "STOCK_NAMESPACES", "sample", "run_opcheck",
           "describe_sample"]

NAME = "opcheck"
BACKEND = "torch"
#: namespaces of PyTorch's own ops: tested by PyTorch's OpInfo, not by opcheck
STOCK_NAMESPACES = ("aten", "prims", "prim")


def sample(op_type: str, inputs: dict, attrs: dict, requires_grad: bool,
           dtype: str = "float64") -> tuple[list, dict]:
    """(args, kwargs) of a call of the op on `inputs` ({slot: [VarSpec]}) and `attrs`, float
    inputs cast to `dtype` (and requiring grad when `requires_grad`)."""
    from opkit_torch import convert
    from opkit_torch.op import call_args
    from opkit_torch.schema import read

    schema = read(op_type)
    values = {}
    for slot, specs in inputs.items():
        tensors = []
        for s in specs:
            a = np.asarray(s.data)
            if a.dtype.kind == "f":
                a = a.astype(dtype)
            t = convert.to_tensor(a)
            if requires_grad and t.is_floating_point():
                t.requires_grad_(True)
            tensors.append(t)
        arg = schema.arg(slot)
        values[slot] = tensors if arg is not None and arg.kind == "tensors" else \
            (tensors[0] if tensors else None)
    return call_args(schema, values, attrs)


def describe_sample(args: list, kwargs: dict) -> str:
    """One line: each argument's shape and dtype (tensors) or value."""
    import torch

    def one(v):
        if isinstance(v, torch.Tensor):
            grad = ", requires_grad" if v.requires_grad else ""
            return f"Tensor{list(v.shape)} {str(v.dtype).replace('torch.', '')}{grad}"
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor):
            return "[" + ", ".join(one(x) for x in v) + "]"
        return repr(v)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def run_opcheck(op_type: str, args: list, kwargs: dict) -> dict:
    """{opcheck's test name: "SUCCESS" or the exception} (torch.library.opcheck with
    raise_exception=False)."""
    import torch

    from opkit_torch import env

    return torch.library.opcheck(env.resolve(op_type), args, kwargs, raise_exception=False)


def _first_line(exc) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else '(no message)'}"


class OpcheckCheck(Check):
    name = NAME
    description = ("torch.library.opcheck on the OpTest's sample (schema, autograd "
                   "registration, fake kernel, AOT dispatch): custom torch ops")
    order = 95
    needs_float = False

    @property
    def default(self) -> bool:          # by default only where it can apply
        return selected() == BACKEND

    def applies(self, case, context):
        if selected() != BACKEND:
            return f"opcheck judges torch.library registrations: run with --backend {BACKEND}"
        from opkit_torch import env

        namespace = env.split(case.op_type)[0]
        if namespace in STOCK_NAMESPACES:
            return (f"{case.op_type} is one of PyTorch's own ops ({namespace}): opcheck is "
                    f"for custom ops (PyTorch tests its own with OpInfo)")
        return None

    def verdict(self, derived, context):
        from harness.backend.case import case_inputs
        from harness.backend.context import fail, pass_
        from harness.backend.seam import Combo
        from opkit_torch.describe import has_grad

        case = derived.case
        combo = Combo("CPU", "float64")
        from opkit_torch.errors import declared_no_derivative

        results, failures, lacks = [], [], []
        modes = (False, True) if has_grad(case.op_type) else (False,)
        for requires_grad in modes:
            try:
                args, kwargs = sample(case.op_type, case_inputs(case, ""), case.attrs or {},
                                      requires_grad)
            except Exception as exc:  # noqa: BLE001 - the sample cannot be built
                results.append(self.skipped(case, f"the OpTest's sample cannot be passed to "
                                                  f"opcheck: {_first_line(exc)}", combo))
                return results
            shown = describe_sample(args, kwargs)
            try:
                outcome = run_opcheck(case.op_type, args, kwargs)
            except Exception as exc:  # noqa: BLE001 - opcheck itself raising is its verdict
                failures.append(f"opcheck raised on the sample {shown}: {_first_line(exc)}")
                continue
            for test, got in outcome.items():
                if got == "SUCCESS":
                    continue
                if requires_grad and declared_no_derivative(got):
                    lacks.append(f"{test}: {_first_line(got)}")   # a declared lack
                    continue
                failures.append(f"opcheck's {test} fails on the sample {shown}: "
                                f"{_first_line(got)}")
        if failures:
            results.append(self.adopt(derived, [fail(NAME, combo, case, "; ".join(failures),
                                                     kind=Mismatch.kind)])[0])
        else:
            note = f" (with requires_grad the op's autograd declares no derivative: " \
                   f"{'; '.join(lacks)})" if lacks else ""
            results.append(pass_(NAME, combo, case, "opcheck's tests pass" + note))
        return results


CHECK = OpcheckCheck()
