"""THE backend contract: what an implementation of the ops under test promises the harness.

A backend is one framework's kernels behind the harness's op seam. It is an object of a
subclass of `Backend` (registered under a name: the entry-point group `opkit.backends`, or
`harness.backend.dispatch.register`), and it makes `PreparedOp`s: one op with its inputs, ready to
run forward and backward many times. opkit's own framework is one such backend
(opkit_fluid.backend.OpkitBackend), PaddlePaddle's another (opkit_paddle), and the
conformance suite (harness.testing) checks any of them against the promises below.

Importing this module imports nothing of a framework (nor numpy): a backend module may
subclass these classes at import time and load its framework when first called.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

__all__ = ["Backend", "PreparedOp", "OpDescription", "Slot", "OpRefused",
           "CAPABILITIES", "REQUIRED", "GRAD_SUFFIX", "attr_type_of"]

#: the gradient key a backend uses unless it says otherwise (Backend.grad_key)
GRAD_SUFFIX = "@GRAD"

#: what a backend may be unable to do: name -> what it means. `Backend.cannot(name)` gives
#: the backend's reason (None: it can); a check that needs one (harness.checks.base.Check.needs)
#: skips with that reason.
CAPABILITIES = {
    "kernel_hooks": "forward/backward call `hooks` around each kernel (before/after: the "
                    "checks that watch a kernel's reads and writes)",
    "grad_ops": "PreparedOp.grad_ops() lists the grad ops (type, inputs, outputs, attrs)",
    "compile_shapes": "Backend.compile_shapes gives the compile-time output shapes",
    "executor_modes": "the op runs under other executor modes (inplace pass, prepared "
                      "plans) than the plain run",
    "lod": "inputs carry LoD (sequence lengths) and outputs give theirs back",
    "selected_rows": "inputs may be SelectedRows (sparse rows), not only dense arrays",
    "strided_inputs": "a non-contiguous input reaches the kernel as it is (strides kept)",
    "declarations": "opkit's own op declarations (SBP signatures, no_need_buffer, "
                    "inplace maps) describe the op",
    "clean_process": "a fresh interpreter that imports only the op's kernel files runs the "
                     "op (the clean_process check: a kernel patching the harness)",
}

#: sentinel of an attr without a default (OpDescription.attrs)
REQUIRED = object()


@dataclass(frozen=True)
class Slot:
    """An input or output slot of an op."""

    name: str
    duplicable: bool = False      # holds a list of variables
    dispensable: bool = False     # may be left out
    intermediate: bool = False    # an output kept for the backward, not a result


@dataclass(frozen=True)
class OpDescription:
    """What a backend declares about an op type, before any run."""

    op_type: str
    inputs: tuple = ()                    # (Slot, ...)
    outputs: tuple = ()                   # (Slot, ...)
    attrs: dict = field(default_factory=dict)   # {attr: default, or REQUIRED}
    has_grad: bool = False                # the op has a gradient at all
    grad_inputs: tuple | None = None      # input slots that get a gradient (None: unknown)
    writes: dict = field(default_factory=dict)  # {output slot: the input slot it writes}
    #: {attr: its type in opkit's attr vocabulary ("int", "float", "bool", "string",
    #: "ints", "floats", ...)}; an attr left out takes the type of its default
    attr_types: dict = field(default_factory=dict)
    #: why the op's kernels must not run on several threads at once (None: they may)
    not_thread_safe: str | None = None
    #: the op runs without kernels (a control-flow op running a sub-block): no kernel
    #: registered is then no mistake
    kernel_less: bool = False
    #: the Python file that declares the op, which a fresh interpreter loads ("": none)
    source: str = ""

    def input_slot(self, name: str) -> Slot | None:
        return next((s for s in self.inputs if s.name == name), None)

    def output_slot(self, name: str) -> Slot | None:
        return next((s for s in self.outputs if s.name == name), None)

    def required_outputs(self) -> list[str]:
        """The output slots a run must always give (neither duplicable nor dispensable)."""
        return [s.name for s in self.outputs if not s.duplicable and not s.dispensable]

    def to_proto(self):
        """The description as the opkit `OpProto` the case-deriving checks read (slots; attrs
        with the types of `attr_types`, else their default's type, else "scalar", which
        nothing varies; no domains or checkers: nothing declared). Imports opkit's proto
        types when called."""
        from opkit.framework.proto import NO_DEFAULT, AttrProto, OpProto, VarProto

        def var(slot):
            return VarProto(slot.name, duplicable=slot.duplicable,
                            dispensable=slot.dispensable, intermediate=slot.intermediate)

        attrs = [AttrProto(name, self.attr_types.get(name) or attr_type_of(default),
                           default=NO_DEFAULT if default is REQUIRED else default,
                           op_type=self.op_type)
                 for name, default in self.attrs.items()]
        return OpProto(self.op_type, [var(s) for s in self.inputs],
                       [var(s) for s in self.outputs], attrs)


_SCALAR_TYPES = {bool: "bool", int: "int", float: "float", str: "string"}
_LIST_TYPES = {bool: "bools", int: "ints", float: "floats", str: "strings"}


def attr_type_of(default) -> str:
    """opkit's attr type of a default value ("scalar": none fits)."""
    if isinstance(default, (list, tuple)):
        kinds = {type(v) for v in default}
        return _LIST_TYPES.get(kinds.pop(), "scalar") if len(kinds) == 1 else "scalar"
    return _SCALAR_TYPES.get(type(default), "scalar")


class OpRefused(Exception):
    """An op refusing its input or attrs on purpose (a backend may raise it, or its own
    types: Backend.refused decides)."""


class PreparedOp(ABC):
    """One op with its inputs in one backend, ready to run forward and backward repeatedly.

    Names: every input and output is a variable name (`inputs` {slot: [VarSpec]},
    `output_slots` {slot: [names]}); `array(name)` reads any of them after a run (None: not
    written). The harness sets `read_back = True` before a run to have `read_inputs()`
    return the inputs as the run left them (the data the kernels saw afterwards)."""

    op_type: str
    inputs: dict
    attrs: dict
    output_slots: dict
    read_back: bool = False

    # -- data -------------------------------------------------------------------------------
    @abstractmethod
    def set_input(self, name: str, data, lod=None) -> None:
        """Feed `data` (an array, with LoD offsets `lod`) as variable `name`."""

    @abstractmethod
    def value(self, name: str):
        """The backend's value of variable `name` after the last run (None: none)."""

    @abstractmethod
    def array(self, name: str):
        """Variable `name` as a numpy array (None: not written)."""

    def input_names(self) -> list[str]:
        return [s.name for specs in self.inputs.values() for s in specs]

    def output_names(self) -> list[str]:
        return [n for names in self.output_slots.values() for n in names]

    def lod_lengths(self, name: str):
        """The LoD (sequence lengths per level) of variable `name`; None: it has none."""
        return None

    def grad_lod(self, name: str):
        """The LoD of the gradient of input `name`."""
        return None

    def held_attrs(self) -> dict:
        """The attrs as the op holds them (the defaults filled in), after any run."""
        return self.attrs

    def read_inputs(self) -> dict:
        """{input name: array} as the last run left them (set `read_back` before the run)."""
        return {n: self.array(n) for n in self.input_names()}

    # -- running ----------------------------------------------------------------------------
    @abstractmethod
    def forward(self, hooks=None) -> dict:
        """Run the op: {output name: array or None}. `hooks`: kernel hooks (capability
        `kernel_hooks`; a backend without them raises when given some)."""

    @abstractmethod
    def backward(self, cotangents: dict, wrt: list, no_grad_set=(), hooks=None,
                 forward_outputs=None) -> dict:
        """Gradients of sum(cotangent * output) for the input names `wrt` ({name: array or
        None}), after forward. `cotangents` {output: array}: an output without one counts
        as zeros; `no_grad_set` names inputs the gradient is not wanted of;
        `forward_outputs` {output: array}: fed in place of what the forward wrote."""

    def forward_backward(self, cotangents_of, wrt: list, no_grad_set=()) -> tuple:
        """(outputs, gradients): forward(), then backward(cotangents_of(outputs), wrt,
        no_grad_set) -- harness.backend.seam.run_forward_backward's plain run. `cotangents_of`
        ({output: array} -> {output: cotangent}) depends on the outputs' shapes and dtypes
        only. The outputs are those of the forward, copied before the backward runs. A
        backend that can run both in one go overrides it with the same values (Paddle's:
        the forward op and its grad ops in one program)."""
        outs = self.forward()
        kept = {n: None if v is None else v.copy() for n, v in outs.items()}
        return kept, self.backward(cotangents_of(outs), wrt, no_grad_set)

    def grad_ops(self, no_grad_set=()) -> list:
        """The grad ops (objects with .type, .inputs, .outputs, .attrs): capability
        `grad_ops`."""
        raise NotImplementedError(f"{type(self).__name__} does not list its grad ops")

    def reset(self, inputs: dict) -> None:
        """A fresh state fed with `inputs` (the same names)."""
        self.inputs = inputs
        for specs in inputs.values():
            for spec in specs:
                self.set_input(spec.name, spec.data, spec.lod)


class Backend(ABC):
    """One framework's kernels as the harness reaches them. Subclass it, implement the
    abstract methods, list what it cannot do in `lacks`, and register the instance.
    Loading the module that defines it must not import its framework."""

    #: the name it is registered under (`opkit test --backend NAME`)
    name: str = ""
    #: {capability (CAPABILITIES): why this backend cannot}; absent: it can
    lacks: dict = {}
    #: an optional compatibility mode (harness.spec.COMPAT_PROTOCOL) or None
    compat = None

    # -- availability and activation ----------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why this backend cannot run here (a missing package), or None."""
        return None

    def activate(self, op_types) -> None:
        """The backend was selected for a run of `op_types` (a front door)."""
        return None

    def prepare_child(self) -> None:
        """The same, in a fresh interpreter, for every op."""
        return None

    # -- ops ----------------------------------------------------------------------------------
    @abstractmethod
    def make(self, op_type: str, inputs: dict, attrs: dict | None, outputs=None, place=None,
             enable_inplace: bool = False) -> PreparedOp:
        """A PreparedOp of `op_type` fed with `inputs` ({slot: [VarSpec]}), `attrs` (those
        left out take their defaults), `outputs` ({slot: [names]}), on `place`."""

    @abstractmethod
    def has_op(self, op_type: str) -> bool:
        """The backend has the op."""

    @abstractmethod
    def describe(self, op_type: str) -> OpDescription:
        """The op's declarations: its slots, attrs and defaults, gradient, declared writes."""

    def has_grad(self, op_type: str) -> bool:
        """The op has a gradient in this backend."""
        return self.describe(op_type).has_grad

    def declared_by(self) -> "Backend":
        """The backend whose declarations (has_op, describe, proto, kernel_places, has_grad)
        the checks derive and select cases from: itself, unless it runs another backend's
        op vocabulary (Paddle's runs opkit's op types, declared in opkit's registry)."""
        return self

    def proto(self, op_type: str):
        """The op's declaration as the case-deriving checks read it: an opkit
        `OpProto` (slots; attrs with types, defaults and domains), or None for an op it
        does not have. The default: `describe(op_type).to_proto()`."""
        return self.describe(op_type).to_proto() if self.has_op(op_type) else None

    @abstractmethod
    def kernel_places(self, op_type: str) -> dict:
        """{place ("CPU", "GPU"): [float dtype names with a kernel]} ({}: none)."""

    def kernel_functions(self, op_type: str) -> list:
        """The op's kernels as Python functions the harness can name and read (a failure's
        file:line, the files the clean process imports): objects with .place, .dtype, .fn
        and .where ("file:line" or ""). The default: none (compiled kernels)."""
        return []

    def selector(self) -> str:
        """The `opkit test` arguments that select this backend, for a reproduce line: "" for
        the default backend, which needs none."""
        return f"--backend {self.name}"

    def grad_key(self, name: str) -> str:
        """The key of input `name`'s gradient in a run's results (harness.backend.seam.
        run_forward_backward): the backend's business, not the checks'."""
        return name + GRAD_SUFFIX

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict) -> dict:
        """{output: compile-time shape or None} of the op with the inputs `specs`, the dims
        in `unknown` ({input: dim or [dims]}) unknown (-1): capability `compile_shapes`."""
        raise NotImplementedError(self.cannot("compile_shapes") or
                                  f"{type(self).__name__} has no compile-time shapes")

    # -- refusal vs failure ---------------------------------------------------------------------
    def refused(self, exc: BaseException) -> bool:
        """True when `exc` is the op refusing its input on purpose (a typed, intended
        refusal); False when it is a failure (a crash, a raw Python error)."""
        return isinstance(exc, OpRefused)

    def refusal_message(self, exc: BaseException) -> str | None:
        """The refusal's message when `exc` is a refusal with a non-empty one, else None."""
        return str(exc) if self.refused(exc) and str(exc).strip() else None

    # -- what it cannot do ----------------------------------------------------------------------
    def cannot(self, capability: str) -> str | None:
        """Why the backend lacks `capability` (None: it has it)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}: one of "
                             f"{', '.join(CAPABILITIES)}")
        return self.lacks.get(capability)

    def stored_attrs(self, op_type: str, attrs: dict) -> dict:
        """The attrs as the framework stores them for the kernel (a framework that keeps a
        float attr in 32 bits returns the rounded values): the oracle computes with these.
        The default: as given."""
        return attrs

    def check_override(self, name: str):
        """For the check `name`: None (it runs as it is), a skip reason, or a Check that
        replaces it on this backend."""
        return None
