"""A Case (one op configuration to check: what an OpTest's setUp describes) and the
Case of an OpTest instance (`case_from_test`); `Derived` / `Unsupported` (a variant of a
case, or why it cannot apply); the variables of a case (`VarSpec`, `normalize_slots`, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from harness.spec import knob
from opkit.framework import errors
from opkit.framework.dtypes import is_float
from opkit.framework.tensor import LoDTensor, LoDTensorArray, lengths_to_offsets

__all__ = ["Case", "case_from_test", "Derived", "Unsupported", "VarSpec", "normalize_slots",
           "map_inputs", "as_value", "case_inputs", "output_structure",
           "attr_float_dtype", "case_attrs", "DTYPE_ATTR", "has_float_inputs"]


@dataclass
class Case:
    """Everything the checks need about one configuration of one op.

    `inputs`/`outputs` are in Paddle's OpTest format (see normalize_slots below).
    `reference(inputs, attrs) -> outputs` is optional; `grad_inputs`/`grad_outputs` say what
    check_grad compares (recorded from the OpTest's own calls when `opkit test` runs it).
    """

    name: str
    op_type: str
    inputs: dict
    attrs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    reference: Callable | None = None
    no_check_set: tuple = ()
    grad_inputs: list = field(default_factory=list)
    grad_outputs: list = field(default_factory=list)
    no_grad_set: tuple = ()
    options: dict = field(default_factory=dict)   # atol, rtol, max_relative_error, ...
    source: str = ""                               # "path/to/test_x.py::TestClass"


def case_from_test(test, source: str = "") -> Case:
    """The Case an OpTest instance describes (its own `to_case()` when it has one)."""
    to_case = knob(test, "to_case")
    if callable(to_case):
        case = to_case()
    else:
        reference = knob(test, "reference")
        case = Case(name=type(test).__name__, op_type=test.op_type,
                    inputs=getattr(test, "inputs", {}) or {},
                    attrs=getattr(test, "attrs", {}) or {},
                    outputs=getattr(test, "outputs", {}) or {},
                    reference=reference if callable(reference) else None)
    if source and not case.source:
        case.source = source
    if callable(case.reference):
        from harness.backend.dispatch import reference_on_stored_attrs

        case.reference = reference_on_stored_attrs(case.op_type, case.reference)
    skips, complexity = knob(test, "opkit_skip"), knob(test, "opkit_complexity")
    if skips or complexity != "linear":
        case.options = dict(case.options or {})
    if skips:
        case.options.setdefault("skip", {}).update(skips)
    if complexity != "linear":
        case.options["complexity"] = complexity
    return case


# -- derived cases (harness.inputs.variants makes them, the checks judge them) --------------
@dataclass
class Derived:
    """One variant of a case: what a check runs."""

    variant: str            # "case" for the case itself
    case: object            # harness.backend.case.Case (the derived one)
    base: object            # the original Case
    note: str = ""          # what was derived, e.g. "X fed transposed (Fortran order)"
    info: dict = field(default_factory=dict)   # variant-specific facts for the check
    seed: int | None = None  # the run's seed (set by Check.__call__): in `reproduce:` lines


@dataclass
class Unsupported:
    """A variant that cannot apply to this case, with the reason (reported as skip)."""

    variant: str
    reason: str


# -- the variables of a case --------------------------------------------------------------
@dataclass
class VarSpec:
    """One variable of a case: its name, data and LoD (length based)."""

    name: str
    data: object  # ndarray, or another value (SelectedRows, ...) passed through
    lengths: list | None = None

    @property
    def lod(self) -> list:
        return lengths_to_offsets(self.lengths) if self.lengths else []


def normalize_slots(slots: dict | None) -> dict[str, list[VarSpec]]:
    """Paddle's OpTest input/output format -> {slot: [VarSpec, ...]} (absent slots dropped)."""
    out: dict[str, list[VarSpec]] = {}
    for slot, value in (slots or {}).items():
        if value is None:
            continue
        if isinstance(value, list) and not isinstance(value, LoDTensorArray):
            # duplicable: [(name, array or (array, lengths)), ...]
            for item in value:
                if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                    raise errors.InvalidArgument(
                        "slot '%s': a duplicable slot is a list of (name, array) pairs, got %r",
                        slot, type(item).__name__)
            out[slot] = [_spec(name, data) for name, data in value]
        else:
            out[slot] = [_spec(slot, value)]
    return out


def output_structure(outputs) -> dict:
    """Each output slot and, for a duplicable slot (a list), how many variables it holds."""
    return {slot: (len(v) if isinstance(v, list) else None) for slot, v in (outputs or {}).items()}


def map_inputs(inputs: dict, fn) -> dict:
    """`inputs` (Paddle's OpTest format) with every variable replaced by `fn(spec)`: an
    array, or `(array, recursive_sequence_lengths)`. Absent slots are kept; a duplicable slot
    stays a list of (name, value) pairs. The inverse of `normalize_slots`, for variants."""
    specs = normalize_slots(inputs)
    out = {}
    for slot, value in inputs.items():
        items = specs.get(slot)
        if items is None:
            out[slot] = value
            continue
        new = [(s.name, fn(s)) for s in items]
        out[slot] = new if isinstance(value, list) else new[0][1]
    return out


def as_value(spec: VarSpec, data=None):
    """`spec` in Paddle's format (`data` replacing its array when given)."""
    data = spec.data if data is None else data
    return (data, spec.lengths) if spec.lengths else data


def _spec(name: str, value) -> VarSpec:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], (list, tuple)):
        return VarSpec(name, np.asarray(value[0]), [list(level) for level in value[1]])
    if isinstance(value, LoDTensor):
        return VarSpec(name, value.numpy(), value.recursive_sequence_lengths() or None)
    if isinstance(value, LoDTensorArray):  # passed through (array_read's Array)
        return VarSpec(name, value)
    if isinstance(value, (np.ndarray, np.generic, list, float, int, bool)):
        return VarSpec(name, np.asarray(value))
    return VarSpec(name, value)


def case_inputs(case, dtype: str) -> dict:
    """The case's inputs as VarSpecs, always fresh copies: float arrays cast to `dtype`
    (when given), other arrays copied, anything else passed through."""
    def fresh(data):
        if not isinstance(data, np.ndarray):
            return data
        return data.astype(dtype) if dtype and is_float(data.dtype) else data.copy()

    return {slot: [VarSpec(s.name, fresh(s.data), s.lengths) for s in items]
            for slot, items in normalize_slots(case.inputs).items()}


def has_float_inputs(case) -> bool:
    """Whether any input of the case is a float array."""
    return any(isinstance(s.data, np.ndarray) and is_float(s.data.dtype)
               for specs in normalize_slots(case.inputs).values() for s in specs)


# -- a dtype attr selecting the float kernel (ops without a float input) ----------------------
DTYPE_ATTR = "dtype"
_FLOAT_NAMES = ("float32", "float64")
_VAR_TYPE_FLOATS = {5: "float32", 6: "float64"}    # Paddle's VarType numbers (FP32, FP64)


def _float_name(value) -> str | None:
    """"float32" / "float64" for a dtype attr value naming one (a name, a numpy dtype or
    type, Paddle's VarType number), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        return _VAR_TYPE_FLOATS.get(int(value))
    if isinstance(value, (str, np.dtype, type)):
        try:
            name = np.dtype(value).name
        except TypeError:
            return None
        return name if name in _FLOAT_NAMES else None
    return None


def attr_float_dtype(case) -> str | None:
    """The float dtype the case's `dtype` attr selects when no input is a float array (a
    creation op: fill_constant, gaussian_random, uniform_random): its kernel is chosen by the
    attr, so the case runs in float32 and float64 by setting the attr (`case_attrs`). None:
    the case has a float input (its inputs choose the dtype), or no float dtype attr."""
    attrs = case.attrs or {}
    if DTYPE_ATTR not in attrs or has_float_inputs(case):
        return None
    return _float_name(attrs[DTYPE_ATTR])


def case_attrs(case, dtype: str) -> dict:
    """The case's attrs for a run in float `dtype`: where the dtype attr selects the kernel
    (attr_float_dtype), set to `dtype` in the form the case gave it (name, numpy dtype,
    VarType number); otherwise the case's attrs unchanged."""
    attrs = case.attrs or {}
    if not dtype or dtype not in _FLOAT_NAMES or attr_float_dtype(case) in (None, dtype):
        return attrs
    given = attrs[DTYPE_ATTR]
    if isinstance(given, (int, np.integer)):
        value = {v: k for k, v in _VAR_TYPE_FLOATS.items()}[dtype]
    elif isinstance(given, str):
        value = dtype
    elif isinstance(given, np.dtype):
        value = np.dtype(dtype)
    else:
        value = np.dtype(dtype).type
    return {**attrs, DTYPE_ATTR: value}


def other_inputs(name: str, array):
    """Other values of the same shape and dtype: every float input rotated by one element
    (scaled by 0.5 when that changes nothing, e.g. a constant input)."""
    if not isinstance(array, np.ndarray) or array.dtype.kind != "f" or array.size == 0:
        return array
    new = np.roll(array.reshape(-1), 1).reshape(array.shape)
    if np.array_equal(new, array):
        new = array * 0.5 if np.any(array) else array + 0.5
    return np.ascontiguousarray(new).astype(array.dtype)


def shifted_case(case):
    """The case on other inputs of the same shapes and dtypes (every float input rotated)."""
    return replace(case, inputs=map_inputs(case.inputs, lambda s: as_value(
        s, other_inputs(s.name, s.data))))
