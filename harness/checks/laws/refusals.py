"""`refusals` (law 5 of issue 36): unknown string attr values are refused, int64 attrs and
inputs stay exact at 2^53 + 1 (docs/harness.md, "Laws every op obeys"). Bug class: `if mode ==
"reflect": ... else: constant`, ids, ranges and cumulative sums computed through float64."""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.checks.laws import shared as laws
from harness.backend.case import as_value, map_inputs, normalize_slots
from harness.checks.base import Check, RawException, WrongValue
from harness.reporting.messages import raised

UNKNOWN = "opkit-unknown-value"
BIG = 2 ** 53 + 1


class RefusalsCheck(Check):
    name = "refusals"
    description = ("a string attr value the op does not handle is refused; int64 attrs and "
                   "values exact at 2^53 + 1")
    order = 152

    def verdict(self, derived, context):
        case = derived.case
        proto = backends.proto(case.op_type)
        if proto is None:
            return [self.skipped(case, "the op has no proto")]
        out = list(self._strings(derived, proto)) + list(self._exact(derived, proto))
        return out or [self.skipped(case, "no string attr that picks the behaviour, no "
                                    "int64 attr or input to derive with a reference()")]

    # -- unknown string values ---------------------------------------------------------------
    def _strings(self, derived, proto):
        case = derived.case
        combo = laws.numeric_combo(case)
        attrs = dict(case.attrs or {})
        for a in proto.attrs:
            if a.type != "string" or a.extra or a.generated:
                continue
            if a.name not in attrs and not a.has_default:
                continue
            known = [attrs.get(a.name, a.default)]
            if a.has_default and a.default not in known:
                known.append(a.default)
            d = a.domain
            if d is not None and d.kind in ("set", "dtype"):
                known += [v for v in d.values if v not in known and isinstance(v, str)]
            try:
                _, got = laws.run(laws.with_case(case, attrs=dict(attrs, **{a.name: UNKNOWN})),
                                  combo)
            except Exception as exc:  # noqa: BLE001
                if laws.refused(exc):
                    yield self.passed(derived, combo, f"{a.name} = {UNKNOWN!r} refused")
                else:
                    yield self.failed(derived, combo, f"attr {a.name} = {UNKNOWN!r} (a value "
                                      f"the op does not handle): it must be refused with a "
                                      f"typed opkit error naming the attr, but the op raised "
                                      f"{raised(exc)}", kind=RawException)
                continue
            runs = {}
            for v in known[:4]:
                try:
                    _, runs[v] = laws.run(laws.with_case(case, attrs=dict(attrs, **{a.name: v})),
                                          combo)
                except Exception:  # noqa: BLE001 - a known value this case cannot take
                    continue
            vals = list(runs)
            if len(vals) < 2 or all(_same(runs[vals[0]], runs[v]) for v in vals[1:]):
                continue           # the attr does not pick the outputs here: free text
            twin = next((v for v in vals if _same(runs[v], got)), None)
            how = (f"silently treated as {a.name} = {twin!r} (the same outputs)" if twin is not
                   None else "a result no known value gives")
            yield self.failed(derived, combo, f"attr {a.name} = {UNKNOWN!r} (a value the op "
                              f"does not handle; known: {', '.join(map(repr, vals))}, which "
                              f"give different outputs) computed {how}: it must be refused "
                              f"when the op is built (in_set on the attr, or a typed opkit "
                              f"error naming attr and value)", kind=WrongValue)

    # -- int64 exactness ---------------------------------------------------------------------
    def _exact(self, derived, proto):
        case = derived.case
        if case.reference is None:
            return
        combo = laws.numeric_combo(case)
        attrs = dict(case.attrs or {})
        plans = []
        for a in proto.attrs:
            if a.extra or a.generated or a.type not in ("long", "longs"):
                continue
            v = attrs.get(a.name, a.default if a.has_default else None)
            if a.type == "long" and isinstance(v, (int, np.integer)):
                plans.append((laws.with_case(case, attrs=dict(attrs, **{a.name: BIG})),
                              f"attr {a.name} = 2^53 + 1"))
            elif a.type == "longs" and isinstance(v, (list, tuple)) and v:
                new = [BIG + int(x) for x in v]
                plans.append((laws.with_case(case, attrs=dict(attrs, **{a.name: new})),
                              f"attr {a.name} shifted by 2^53 + 1"))
        for specs in normalize_slots(case.inputs).values():
            for s in specs:
                if isinstance(s.data, np.ndarray) and s.data.dtype == np.int64 and s.data.size:
                    def shift(spec, name=s.name):
                        return as_value(spec, spec.data + np.int64(BIG)) if spec.name == name \
                            else as_value(spec)

                    plans.append((laws.with_case(case, inputs=map_inputs(case.inputs, shift)),
                                  f"input {s.name} shifted by 2^53 + 1"))
        for c, what in plans:
            try:
                want = laws.reference(c, combo)
            except laws.ReferenceRaised:
                continue
            try:
                _, got = laws.run(c, combo)
            except Exception:  # noqa: BLE001 - refused or raising: not judged here
                continue
            problem = laws.compare_to_reference(c, combo, got, want)
            if problem:
                yield self.failed(derived, combo, f"with {what} (no float64 holds it): "
                                  f"{problem}", kind=WrongValue)
            else:
                yield self.passed(derived, combo, f"{what}: exact")


def _same(a: dict, b: dict) -> bool:
    for n, x in a.items():
        y = b.get(n)
        if x is None or y is None:
            if (x is None) != (y is None):
                return False
            continue
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype or \
                not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True


CHECK = RefusalsCheck()
