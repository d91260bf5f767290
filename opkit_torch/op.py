"""A torch op behind opkit's op seam: fed with numpy arrays, run forward in torch eager
(the dispatcher picks the op's kernel, its autograd registration records the graph) and
backward through `torch.autograd.grad` with the given cotangents.

Inputs: each run builds fresh tensors from the fed arrays (copies: the arrays the harness
holds are never written through), with the arrays' own strides where they are positive
(a transposed or strided input reaches the kernel non-contiguous: layout checks are real).
After a run `array(name)` of an input reads the tensor the kernel saw, as the run left it
(the declared writes of `Tensor(a!)` arguments, and any undeclared one).
"""
from __future__ import annotations

import re

import numpy as np

from harness.backend.contract import PreparedOp
from opkit_torch import convert, env
from opkit_torch.describe import has_grad
from opkit_torch.schema import REQUIRED, read

__all__ = ["TorchPreparedOp", "call_args"]

_NO_GRAD_ARG = re.compile(r"not differentiable with respect to argument '(\w+)'")


def _is_float(dtype) -> bool:
    """A float array's dtype: numpy's floats and ml_dtypes' bfloat16 (kind "V")."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


_NOT_DIFFERENTIABLE: dict = {}     # op type -> input names fed without requires_grad


def call_args(schema, values: dict, attrs: dict) -> tuple[list, dict]:
    """(positional, keyword) arguments of a call of the op: `values` {arg: tensor or list
    of tensors or None} for the tensor arguments, `attrs` {arg: python value} for the
    others (a missing attr takes its default; one without a default is an error)."""
    return fill(call_plan(schema, attrs), schema, values)


_TENSOR = object()       # a call plan's place for a tensor argument


def call_plan(schema, attrs: dict) -> list:
    """[(arg, value or _TENSOR)] of a call with `attrs` (converted once: the attrs of a
    prepared op do not change between runs)."""
    plan = []
    for a in schema.args:
        if a.kind != "attr":
            value = _TENSOR
        elif a.name in attrs:
            value = convert.attr_value(a, attrs[a.name])
        elif a.default is not REQUIRED:
            if a.kwarg_only:
                continue
            value = a.default
        else:
            raise ValueError(f"{schema.op_type}: attr '{a.name}' ({a.type}) has no default: "
                             f"set it in attrs")
        plan.append((a, value))
    return plan


def bind(plan, schema, names: dict) -> list:
    """[(keyword or None, how, what)] of `plan` fed from `names` {slot: [input name]}: how
    _ONE (what: the input's name), _LIST (what: names), _CONST (what: the value) or
    _MISSING (what: the error a call raises). Computed once per set of inputs: a run only
    looks up its tensors by name (`apply`)."""
    bound = []
    for a, value in plan:
        key = a.name if a.kwarg_only else None
        if value is not _TENSOR:
            bound.append((key, _CONST, value))
            continue
        given = names.get(a.name)
        if a.kind == "tensors":
            bound.append((key, _LIST, list(given or ())))
        elif given:
            bound.append((key, _ONE, given[0]))
        elif a.kind == "tensor":
            bound.append((key, _MISSING, f"{schema.op_type}: input '{a.name}' ({a.type}) "
                                         f"is required"))
        else:
            bound.append((key, _CONST, None))
    return bound


def apply(bound, tensors: dict) -> tuple[list, dict]:
    """The (positional, keyword) arguments of a `bind`ing with {name: tensor} `tensors`."""
    args, kwargs = [], {}
    for key, how, what in bound:
        if how == _ONE:
            what = tensors[what]
        elif how == _LIST:
            what = [tensors[n] for n in what]
        elif how == _MISSING:
            raise ValueError(what)
        if key is None:
            args.append(what)
        else:
            kwargs[key] = what
    return args, kwargs


_ONE, _LIST, _CONST, _MISSING = range(4)


def fill(plan, schema, values: dict) -> tuple[list, dict]:
    """The (positional, keyword) arguments of `plan` with the tensors `values` {arg: tensor
    or list of tensors or None}."""
    names, tensors = {}, {}
    for slot, value in values.items():
        if value is None:
            continue
        items = value if isinstance(value, (list, tuple)) else [value]
        names[slot] = [f"{slot}:{k}" for k in range(len(items))]
        tensors.update(zip(names[slot], items))
    return apply(bind(plan, schema, names), tensors)


class TorchPreparedOp(PreparedOp):
    """One torch op with its inputs, ready to run forward and backward repeatedly."""

    read_back = False

    def __init__(self, op_type: str, inputs: dict, attrs: dict | None, outputs=None,
                 place=None, enable_inplace: bool = False):
        self.op_type = op_type
        self.torch = env.load()
        self.overload = env.resolve(op_type)
        self.schema = read(op_type)
        self.place = place
        self.device = "cpu" if place is None else convert.device_of(place)
        self.attrs = dict(attrs or {})
        unknown = [k for k in self.attrs if (a := self.schema.arg(k)) is None or
                   a.kind != "attr"]
        if unknown:
            raise ValueError(f"{op_type}: no attr {', '.join(map(repr, unknown))} in its "
                             f"schema {self.schema.text}")
        self.output_slots = self._with_required_outputs(outputs)
        self.enable_inplace = enable_inplace
        self._plan = call_plan(self.schema, self.attrs)
        self._outputs = [(names, is_list) for (slot, _t, is_list, _a) in self.schema.outputs
                         for names in [self.output_slots.get(slot)]]
        self._output_names = [n for names in self.output_slots.values() for n in names]
        self.reset(inputs)

    def _with_required_outputs(self, given) -> dict:
        slots = {k: list(v) for k, v in (given or {}).items()}
        for name, _type, is_list, _alias in self.schema.outputs:
            if name not in slots and not is_list:
                slots[name] = [name]
        return slots

    # -- data -------------------------------------------------------------------------------
    def reset(self, inputs: dict) -> None:
        unknown = [s for s in inputs if self.schema.arg(s) is None or
                   self.schema.arg(s).kind == "attr"]
        if unknown:
            raise ValueError(f"{self.op_type}: no tensor argument "
                             f"{', '.join(map(repr, unknown))} in its schema "
                             f"{self.schema.text}")
        self.inputs = inputs
        self._fed = {}
        for specs in inputs.values():
            for spec in specs:
                self.set_input(spec.name, spec.data, spec.lod)
        self._bound = bind(self._plan, self.schema,
                           {slot: [s.name for s in specs] for slot, specs in inputs.items()})
        self._tracks = {}        # {no_grad_set: the inputs that require grad}
        self._results = {}
        self._last = {}          # {input name: tensor of the last run}
        self._graph = None       # (tracked input names, {name: tensor}, {output: tensor})
        self.grads = {}          # {input name: gradient tensor} of the last backward

    def set_input(self, name: str, data, lod=None) -> None:
        if lod:
            raise ValueError(f"{self.op_type}: torch tensors carry no LoD (input '{name}')")
        self._fed[name] = np.asarray(data)
        self._graph = None
        self._tracks = {}

    def input_names(self) -> list[str]:
        return [s.name for specs in self.inputs.values() for s in specs]

    def output_names(self) -> list[str]:
        return self._output_names

    def value(self, name: str):
        if name in self._results:
            return self._results[name]
        return self._last.get(name)

    def array(self, name: str):
        value = self.value(name)
        if value is None:
            return self._fed.get(name) if name not in self._last else None
        return convert.to_numpy(value)

    def read_inputs(self) -> dict:
        return {n: self.array(n) for n in self.input_names()}

    def lod_lengths(self, name: str):
        return None

    def grad_lod(self, name: str):
        return None

    # -- running ----------------------------------------------------------------------------
    def _tensors(self, track=frozenset()) -> dict:
        """{input name: fresh tensor} (those in `track` require grad)."""
        out = {}
        to_tensor, device = convert.to_tensor, self.device
        for name, data in self._fed.items():
            t = out[name] = to_tensor(data, device)
            if name in track and t.is_floating_point():
                t.requires_grad_(True)
        return out

    def _call(self, tensors: dict) -> dict:
        args, kwargs = apply(self._bound, tensors)
        result = self.overload(*args, **kwargs)
        if len(self._outputs) == 1:
            result = (result,)
        outs = {}
        for (names, is_list), r in zip(self._outputs, result):
            if names is None:
                continue
            if is_list:
                outs.update(zip(names, r))
            else:
                outs[names[0]] = r
        return outs

    def _trackable(self, no_grad_set=()) -> frozenset:
        """The float inputs that may require grad: not written by the op (a leaf that
        requires grad cannot be written in place) and not in `no_grad_set`."""
        key = tuple(no_grad_set)
        track = self._tracks.get(key)
        if track is None:
            track = self._tracks[key] = self._find_trackable(no_grad_set)
        return track

    def _find_trackable(self, no_grad_set) -> frozenset:
        written, skipped, fed = self.schema.writes, set(no_grad_set), self._fed
        return frozenset(s.name for slot, specs in self.inputs.items() if slot not in written
                         for s in specs if s.name not in skipped and
                         _is_float(fed[s.name].dtype))

    def _run(self, track: frozenset) -> dict:
        if self.op_type in _NOT_DIFFERENTIABLE:
            track = track - _NOT_DIFFERENTIABLE[self.op_type]
        # the last run's tensors go first: the allocator reuses their memory (cache-warm)
        self._last, self._results, self._graph, self.grads = {}, {}, None, {}
        while True:
            tensors = self._tensors(track)
            grad = bool(track) and self.has_autograd()
            try:
                if self.torch.is_grad_enabled() == grad:   # the mode it needs (no switch)
                    outs = self._call(tensors)
                else:
                    with self.torch.set_grad_enabled(grad):
                        outs = self._call(tensors)
                break
            except RuntimeError as exc:
                # "... is not differentiable with respect to argument 'running_mean'": that
                # input is fed without requires_grad (remembered for the op type)
                m = _NO_GRAD_ARG.search(str(exc))
                names = {s.name for s in self.inputs.get(m.group(1), [])} if m else set()
                if not names & track:
                    raise
                _NOT_DIFFERENTIABLE[self.op_type] = \
                    _NOT_DIFFERENTIABLE.get(self.op_type, frozenset()) | names
                track = track - names
        self._last = tensors
        self._results = outs
        self._graph = (track, tensors, outs) if grad else None
        to_numpy = convert.to_numpy
        return {n: (None if (t := outs.get(n)) is None else to_numpy(t))
                for n in self._output_names}

    def has_autograd(self) -> bool:
        return has_grad(self.op_type)

    def forward(self, hooks=None) -> dict:
        if hooks is not None:
            raise NotImplementedError("the torch backend has no kernel hooks: torch's "
                                      "dispatcher runs the kernel")
        return self._run(self._trackable())

    def backward(self, cotangents: dict, wrt: list, no_grad_set=(), hooks=None,
                 forward_outputs=None, create_graph: bool = False) -> dict:
        if hooks is not None:
            raise NotImplementedError("the torch backend has no kernel hooks")
        if forward_outputs:
            raise NotImplementedError("the torch backend cannot feed other forward outputs "
                                      "to the backward (the autograd graph saved its own)")
        track = self._trackable(no_grad_set)
        if self.op_type in _NOT_DIFFERENTIABLE:
            track = track - _NOT_DIFFERENTIABLE[self.op_type]
        graph = self._graph
        if graph is None or graph[0] != track:
            self._run(track)                 # the graph of this no_grad_set
            graph = self._graph
        if graph is None:
            return {n: None for n in wrt}
        _, tensors, outs = graph
        pairs = [(o, cotangents[n]) for n in self._output_names
                 if n in cotangents and (o := outs.get(n)) is not None and
                 getattr(o, "requires_grad", False)]
        wanted = [n for n in wrt if n in tensors and tensors[n].requires_grad]
        result = dict.fromkeys(wrt)
        if not pairs or not wanted:
            return result
        as_tensor = convert.as_tensor
        grads = self.torch.autograd.grad(
            [o for o, _ in pairs],
            [tensors[n] for n in wanted],
            [as_tensor(c, o) for o, c in pairs],
            allow_unused=True, retain_graph=True, create_graph=create_graph)
        self.grads = dict(zip(wanted, grads))
        to_numpy = convert.to_numpy
        for n, g in zip(wanted, grads):   # an input the outputs do not depend on: zeros
            result[n] = to_numpy(self.torch.zeros_like(tensors[n]) if g is None else g)
        return result

    def output_tensors(self) -> dict:
        """{output name: the tensor the last run returned}."""
        return {n: t for n, t in self._results.items()
                if isinstance(t, self.torch.Tensor)}

    def run_fake(self) -> dict:
        """{output name: fake tensor}: the op's fake/meta kernel run under torch's
        FakeTensorMode on fake copies of the fed inputs (same shapes, dtypes, strides)."""
        from torch._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode

        try:
            return self._fake_call(FakeTensorMode())
        except DynamicOutputShapeException:
            # an output whose size depends on the values (nms: the boxes kept): its fake
            # kernel needs a shape environment, which gives that size as a symbol
            import warnings

            from torch.fx.experimental.symbolic_shapes import ShapeEnv

            with warnings.catch_warnings():   # torchvision's fake nms: a deprecated name
                warnings.simplefilter("ignore", FutureWarning)
                return self._fake_call(FakeTensorMode(shape_env=ShapeEnv()))

    def _fake_call(self, mode) -> dict:
        tensors = {n: mode.from_tensor(t) for n, t in self._tensors().items()}
        with mode:
            outs = self._call(tensors)
        return {n: t for n, t in outs.items() if isinstance(t, self.torch.Tensor)}

    def graph_inputs(self) -> dict:
        """{input name: the tensor the last run fed} (leaves of the autograd graph: a
        second-order gradient differentiates `grads` (after backward with create_graph)
        with respect to them)."""
        return dict(self._last)

    def held_attrs(self) -> dict:
        """The attrs the op runs with, its schema's defaults filled in."""
        held = {a.name: a.default for a in self.schema.attr_args if a.default is not REQUIRED}
        held.update(self.attrs)
        return held

    def grad_ops(self, no_grad_set=()):
        raise NotImplementedError("the torch backend has no separate grad ops: its "
                                  "autograd graph runs the backward")
