"""The red team measured: opkit (`opkit test --backend torch`) against PyTorch's own tools
(`torch.library.opcheck` + `torch.autograd.gradcheck`) on the same ops and the same samples
(each OpTest's inputs, float64). Prints a markdown table: which tool catches each broken op,
and any false alarm on a twin.

    python tests/torch_backend/red_team/measure.py [--saved-run FILE] [--seed N]

Without --saved-run it runs opkit itself (one `opkit test` over every red-team op).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT)]


def _samples():
    """{op type: (inputs {slot: [VarSpec]}, attrs, grad inputs, no_grad sets)} of the OpTests."""
    from harness.backend.case import case_inputs, case_from_test
    from harness.selecting.discovery import discover, instantiate

    out = {}
    for t in discover([HERE / "test_red_team.py"], seed=2024).tests:
        test = instantiate(t.cls, 2024)
        case = case_from_test(test)
        grads = "test_check_grad" in dir(t.cls) and getattr(t.cls, "grad", True)
        out[case.op_type] = (case_inputs(case, "float64"), dict(case.attrs or {}), grads)
    return out


def _opcheck(op_type, inputs, attrs) -> str:
    """'' (opcheck passes) or the failing tests."""
    from opkit_torch.describe import has_grad
    from opkit_torch.opcheck import run_opcheck, sample

    failed = []
    for requires_grad in (False, True) if has_grad(op_type) else (False,):
        args, kwargs = sample(op_type, inputs, attrs, requires_grad)
        try:
            got = run_opcheck(op_type, args, kwargs)
        except Exception as exc:  # noqa: BLE001
            failed.append(f"raised {type(exc).__name__}")
            continue
        failed += [k for k, v in got.items() if v != "SUCCESS"]
    return ", ".join(sorted(set(failed)))


def _gradcheck(op_type, inputs, attrs, grads: bool) -> str:
    """'' (passes), 'n/a' (no gradient to check) or why it fails."""
    import torch

    from opkit_torch import env
    from opkit_torch.describe import has_grad
    from opkit_torch.opcheck import sample

    if not grads or not has_grad(op_type):
        return "n/a"
    args, kwargs = sample(op_type, inputs, attrs, True)
    op = env.resolve(op_type)
    try:
        ok = torch.autograd.gradcheck(lambda *a: op(*a, **kwargs), tuple(args),
                                      raise_exception=False)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}"
    return "" if ok else "gradcheck fails"


def _opkit(seed: int, json_file: str | None) -> dict:
    """{op type: [failed checks]} of one opkit run over the red team."""
    if json_file:
        doc = json.loads(Path(json_file).read_text())
    else:
        import red_team_ops

        ops = [f"rt::{n}{t}" for n in red_team_ops.BROKEN for t in ("", "_ok")]
        # the ops by name: `--all` would add opkit's built-in ops (the project registers
        # none of its own in opkit's registry)
        cmd = [sys.executable, "-m", "opkit.cli.main", "test", *ops, "--backend", "torch",
               "--ops", str(HERE / "red_team_ops.py"), "--tests", str(HERE / "test_red_team.py"),
               "--format", "json", "--seed", str(seed)]
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep +
                   os.environ.get("PYTHONPATH", ""))
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        doc = json.loads(out.stdout)
    found = {}
    for op in doc["ops"]:
        # a check the harness could not run on a torch op (a harness module reading opkit's
        # own registry: "op 'rt::...' is not registered") is not a finding about the op
        failed = sorted({r["check"] for r in op.get("checks", []) if r["status"] == "fail"
                         and "is not registered" not in r.get("message", "")})
        found[op["op"]] = failed
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saved-run")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    import red_team_ops

    samples = _samples()
    opkit = _opkit(args.seed, args.saved_run)
    rows = ["| op | broken in | opcheck | gradcheck | opkit (failing checks) |",
            "|---|---|---|---|---|"]
    for name in red_team_ops.BROKEN:
        for op in (f"rt::{name}", f"rt::{name}_ok"):
            inputs, attrs, grads = samples[op]
            oc = _opcheck(op, inputs, attrs) or "pass"
            gc = _gradcheck(op, inputs, attrs, grads) or "pass"
            ok = ", ".join(opkit.get(op, ["(not run)"])) or "pass"
            rows.append(f"| `{op}` | {'twin' if op.endswith('_ok') else name} | {oc} | "
                        f"{gc} | {ok} |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
