"""How fast is check_grad? opkit's numeric-gradient engine against Paddle's algorithm.

    python benchmarks/gradcheck.py [--repeat 3] [--budget 60] [--write FILE]  (figures: docs/performance.md)

For an elementwise op (square), row-wise softmax and `mul` (X and Y both checked) at about
1e2, 1e3, 1e4 and 1e5 checked elements, times (medians over --repeat runs, OMP/OpenBLAS
threads pinned to 1, CPU float64 only on both sides):
  * opkit: harness.judging.grad_judge.check_grad(case, ...) in its default mode ("auto"), and in
    "exact" mode (colouring) where that differs;
  * baseline: Paddle's OpTest algorithm -- one central difference per element (2N forward
    runs of the loss sum(cot * out)), on the same op and executor path (a PreparedOp, prepared
    once), then the analytic backward and Paddle's comparison. Where the baseline would take
    longer than --budget seconds, it is timed on a sample of elements and extrapolated (said
    so in the table).
Verdicts: both sides also run on broken variants of each op (registered with
opkit.registry.scratch(): the grad kernel multiplies one element of the gradient by 3, or
flips the sign of the whole gradient); the table lists both verdicts.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["OPKIT_NO_GPU"] = "1"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from harness.backend.case import Case  # noqa: E402
from harness.judging.grad_judge import check_grad  # noqa: E402
from harness.judging.output_judge import prepare_case  # noqa: E402
from harness.judging.numeric_gradient import relative_error  # noqa: E402
from harness.reporting.report import FAIL  # noqa: E402
from harness.backend.seam import make_cotangents  # noqa: E402

SIZES = (100, 1000, 10_000, 100_000)


def make_case(op: str, n: int) -> tuple[Case, list[str]]:
    rng = np.random.default_rng(n)
    if op in ("square", "softmax"):
        rows = {100: 10, 1000: 25, 10_000: 100, 100_000: 250}[n]
        x = rng.uniform(0.5, 1.5, (rows, n // rows))
        if op == "square":
            return Case(f"square_{n}", "square", {"X": x}, {}, {"Out": x * x}), ["X"]
        e = np.exp(x - x.max(1, keepdims=True))
        return Case(f"softmax_{n}", "softmax", {"X": x}, {"axis": -1},
                    {"Out": e / e.sum(1, keepdims=True)}), ["X"]
    s = int(round((n / 2) ** 0.5))
    x, y = rng.uniform(-1, 1, (s, s)), rng.uniform(-1, 1, (s, s))
    return Case(f"mul_{n}", "mul", {"X": x, "Y": y}, {}, {"Out": x @ y}), ["X", "Y"]


def checked_elements(case, names):
    return sum(np.asarray(case.inputs[n]).size for n in names)


# -- Paddle's algorithm on the same executor path ---------------------------------------------
def baseline(case, names, budget):
    """(seconds, verdict or None, extrapolated?): per-element central differences."""
    prepared = prepare_case(case, "CPU", "float64")
    t0 = time.perf_counter()
    outs = prepared.forward()
    cot = make_cotangents(outs, ["Out"])
    total = checked_elements(case, names)
    # time a sample first to decide whether the whole loop fits in the budget
    probe = min(total, 50)
    t_probe = time.perf_counter()
    _loop(prepared, case, names, cot, limit=probe)
    per_element = (time.perf_counter() - t_probe) / probe
    if per_element * total > budget:
        return (time.perf_counter() - t0) - per_element * probe + per_element * total, None, True
    numeric = _loop(prepared, case, names, cot)
    prepared.forward()                      # the loop left perturbed outputs in the scope
    analytic = prepared.backward(cot, names)
    verdict = "pass"
    for n in names:
        if (relative_error(analytic[n], numeric[n]) > 0.005).any():
            verdict = "fail"
    return time.perf_counter() - t0, verdict, False


def _loop(prepared, case, names, cot, limit=None, delta=0.005):
    grads, done = {}, 0
    cot_out = cot["Out"]
    for n in names:
        base = np.array(case.inputs[n], dtype=np.float64)
        g = np.zeros(base.size)
        x = base.copy()
        flat = x.reshape(-1)
        for i in range(base.size):
            if limit is not None and done >= limit:
                break
            orig = flat[i]
            flat[i] = orig + delta
            prepared.set_input(n, x)
            lp = float(np.sum(prepared.forward()["Out"] * cot_out))
            flat[i] = orig - delta
            prepared.set_input(n, x)
            lm = float(np.sum(prepared.forward()["Out"] * cot_out))
            flat[i] = orig
            g[i] = (lp - lm) / (2 * delta)
            done += 1
        prepared.set_input(n, base)
        grads[n] = g.reshape(base.shape)
    return grads


# -- opkit -----------------------------------------------------------------------------------
def opkit(case, names, mode):
    t0 = time.perf_counter()
    results = check_grad(case, names, ["Out"], mode=mode, places=("CPU",), dtypes=("float64",))
    elapsed = time.perf_counter() - t0
    verdict = "fail" if any(r.status == FAIL for r in results) else "pass"
    method = next((r.message for r in results if r.message.startswith("numeric")), "")
    return elapsed, verdict, method, results


# -- broken variants -------------------------------------------------------------------------
def broken(op: str, how: str):
    """Context: the op's grad kernels replaced by broken ones (inside registry.scratch())."""
    import contextlib

    from opkit.framework import registry
    from opkit.framework.grad_maker import grad_var_name

    @contextlib.contextmanager
    def guard():
        with registry.scratch():
            table = registry._KERNELS[op + "_grad"]
            for key, entry in list(table.items()):
                def wrong(ctx, _fn=entry.fn):
                    _fn(ctx)
                    for slot in list(ctx.op.outputs):
                        if not slot.endswith("@GRAD") or not ctx.op.outputs[slot]:
                            continue
                        t = ctx.output_tensor(slot)
                        if t is None or not t.is_initialized():
                            continue
                        g = np.array(t.data, copy=True)
                        if how == "sign":
                            g = -g
                        else:
                            g.reshape(-1)[7] *= 3.0
                        ctx.set_output(slot, g)
                        break          # one gradient output is enough
                table[key] = dataclasses.replace(entry, fn=wrong)
            yield
    _ = grad_var_name
    return guard()


def median_time(fn, repeat):
    times, last = [], None
    for _ in range(repeat):
        last = fn()
        times.append(last[0])
    return statistics.median(times), last


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0,
                    help="longest baseline run (s) before it is extrapolated")
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    ap.add_argument("--ops", default="square,softmax,mul")
    ap.add_argument("--write", default=None, help="append the figures to this markdown file")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for op in args.ops.split(","):
        for n in sizes:
            case, names = make_case(op, n)
            opkit(case, names, "auto")          # warm-up (imports, first-call costs)
            total = checked_elements(case, names)
            t_auto, (_, v_auto, method, _) = median_time(lambda case=case, names=names: opkit(case, names, "auto"),
                                                         args.repeat)
            t_exact, (_, v_exact, m_exact, _) = median_time(
                lambda case=case, names=names: opkit(case, names, "exact"), args.repeat)
            reps = args.repeat if total <= 1000 else 1
            t_base, (_, v_base, extrap) = median_time(
                lambda case=case, names=names: baseline(case, names, args.budget), reps)
            verdicts = {}
            for how in ("element", "sign"):
                with broken(op, how):
                    _, vb, _, res = opkit(case, names, "auto")
                    bb = baseline(case, names, args.budget)[1]
                verdicts[how] = (vb, bb)
            row = dict(op=op, n=total, auto=t_auto, exact=t_exact, base=t_base, extrap=extrap,
                       method=method, m_exact=m_exact, v=(v_auto, v_exact, v_base),
                       broken=verdicts)
            rows.append(row)
            print(f"{op:8s} N={total:7d} auto {t_auto:8.4f}s exact {t_exact:8.4f}s baseline "
                  f"{t_base:9.3f}s{' (extrapolated)' if extrap else ''} speedup(auto) "
                  f"{t_base / t_auto:8.1f}x verdicts correct {v_auto}/{v_exact}/{v_base} "
                  f"broken-elem {verdicts['element']} broken-sign {verdicts['sign']}  "
                  f"[{method}]", flush=True)
    text = render(rows, args)
    print(text)
    if args.write:
        path = Path(args.write)
        old = path.read_text() if path.exists() else ""
        path.write_text(old + ("\n" if old else "") + text)


def render(rows, args) -> str:
    import numpy

    lines = ["## check_grad: numeric-gradient engine vs Paddle's per-element loop", "",
             f"`python benchmarks/gradcheck.py --repeat {args.repeat} --budget {args.budget:g}`"
             f" on {platform.processor() or platform.machine()}, Python "
             f"{platform.python_version()}, numpy {numpy.__version__}, OMP/OpenBLAS threads = 1, "
             "CPU float64 only on both sides; medians. Baseline = Paddle's OpTest algorithm "
             "(2N forward runs, one central difference per element) on the same PreparedOp; "
             "`*` = extrapolated from a timed sample of 50 elements because the full loop "
             f"would exceed {args.budget:g} s.", "",
             "| op | checked elements | opkit auto (s) | opkit exact (s) | baseline (s) | "
             "speedup auto | speedup exact | verdict correct (auto/exact/base) | "
             "broken 1 element (opkit/base) | broken sign (opkit/base) | auto used |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |"]
    for r in rows:
        star = "*" if r["extrap"] else ""
        nb = lambda v: v or "n/a"  # noqa: E731
        used = r["method"].split(": ", 1)[-1] if r["method"] else ""
        lines.append(
            f"| {r['op']} | {r['n']} | {r['auto']:.4f} | {r['exact']:.4f} | "
            f"{r['base']:.3f}{star} | {r['base'] / r['auto']:.0f}x | "
            f"{r['base'] / r['exact']:.0f}x | {r['v'][0]}/{r['v'][1]}/{nb(r['v'][2])} | "
            f"{r['broken']['element'][0]}/{nb(r['broken']['element'][1])} | "
            f"{r['broken']['sign'][0]}/{nb(r['broken']['sign'][1])} | {used} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
