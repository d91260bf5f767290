"""append_backward: grad op descriptions for a loss, in reverse order of the forward ops."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.context import EMPTY_VAR_NAME
from opkit.framework.grad_maker import GRAD_SUFFIX, GradOpDesc, grad_var_name
from opkit.framework.registry import op_info

__all__ = ["append_backward", "calc_gradient_ops"]


def _name(v) -> str:
    return v if isinstance(v, str) else v.name


def _forward_name(grad_name: str) -> str:
    base = grad_name.split("@RENAME@")[0]
    return base[: -len(GRAD_SUFFIX)] if base.endswith(GRAD_SUFFIX) else base


def _relevant_ops(ops, loss_name: str):
    """The forward ops the loss depends on, in forward order."""
    idx = max((i for i, op in enumerate(ops) if loss_name in op.output_arg_names()),
              default=None)
    if idx is None:
        raise errors.NotFound("append_backward: no op of the block produces the loss '%s'",
                              loss_name)
    needed = {loss_name}
    relevant = []
    for op in reversed(ops[: idx + 1]):
        if needed.intersection(op.output_arg_names()):
            relevant.append(op)
            needed.update(op.input_arg_names())
    relevant.reverse()
    return relevant


def calc_gradient_ops(block, loss, no_grad_set=None) -> list[GradOpDesc]:
    """The grad op descriptions (loss gradient fill included), renames and sums resolved."""
    loss_name = _name(loss)
    loss_desc = block.var(loss_name)
    no_grad = {_name(n) for n in (no_grad_set or ())}
    for v in block.program.list_vars():
        if v.stop_gradient or (v.dtype is not None and np.dtype(v.dtype).kind not in "fc"):
            no_grad.add(v.name)
    if loss_name in no_grad:
        raise errors.InvalidArgument("append_backward: the loss '%s' is marked stop_gradient "
                                     "or is not a float variable", loss_name)
    loss_grad = grad_var_name(loss_name)
    if loss_desc.shape is not None and all(d >= 0 for d in loss_desc.shape):
        fill = GradOpDesc("fill_constant", {"shape": list(loss_desc.shape), "value": 1.0,
                                            "dtype": loss_desc.dtype or "float32"})
    else:
        fill = GradOpDesc("fill_any_like", {"value": 1.0}).set_input("X", [loss_name])
    fill.set_output("Out", [loss_grad])
    grad_ops = [fill]
    available = {loss_grad}
    for op in reversed(_relevant_ops(block.ops, loss_name)):
        info = op_info(op.type)
        if info.grad_maker is None:
            continue
        if all(n in no_grad for n in op.input_arg_names()):
            continue
        out_grads = [grad_var_name(n) for n in op.output_arg_names()]
        if not any(g in available for g in out_grads):
            continue
        maker = info.grad_maker(op.type, op.inputs, op.outputs, op.attrs, no_grad)
        for desc in maker():
            produced = [n for names in desc.outputs.values() for n in names
                        if n != EMPTY_VAR_NAME]
            if not produced:
                continue
            for names in desc.inputs.values():
                for n in names:
                    if n.endswith(GRAD_SUFFIX) and n not in available:
                        zeros = GradOpDesc("fill_zeros_like")
                        zeros.set_input("X", [_forward_name(n)]).set_output("Out", [n])
                        grad_ops.append(zeros)
                        available.add(n)
            grad_ops.append(desc)
            available.update(produced)
    return sum_duplicates(grad_ops)


def sum_duplicates(grad_ops: list[GradOpDesc]) -> list[GradOpDesc]:
    """A gradient written more than once (by several grad ops, or by several slots of one):
    each write goes to a renamed copy and a `sum` op after the last one adds them up."""
    writes: dict[str, list[tuple[int, str, int]]] = {}
    for i, desc in enumerate(grad_ops):
        for slot, names in desc.outputs.items():
            for j, n in enumerate(names):
                if n != EMPTY_VAR_NAME:
                    writes.setdefault(n, []).append((i, slot, j))
    inserts: dict[int, list[GradOpDesc]] = {}
    for name, where in writes.items():
        if len(where) < 2:
            continue
        renamed = []
        for k, (i, slot, j) in enumerate(where):
            new = f"{name}@RENAME@{k}"
            grad_ops[i].outputs[slot] = list(grad_ops[i].outputs[slot])
            grad_ops[i].outputs[slot][j] = new
            renamed.append(new)
        total = GradOpDesc("sum").set_input("X", renamed).set_output("Out", [name])
        inserts.setdefault(where[-1][0], []).append(total)
    out = []
    for i, desc in enumerate(grad_ops):
        out.append(desc)
        out.extend(inserts.get(i, []))
    return out


def append_backward(loss, parameter_list=None, no_grad_set=None):
    """Append the grad ops of `loss` to its program; returns [(param, grad), ...]."""
    block = loss.block.program.global_block() if hasattr(loss, "block") else None
    if block is None:
        raise errors.InvalidArgument("append_backward needs the loss variable description "
                                     "(from a layer or block.create_var), got %r", loss)
    for desc in calc_gradient_ops(block, loss, no_grad_set):
        for names in desc.outputs.values():
            for n in names:
                if n == EMPTY_VAR_NAME or block.has_var(n):
                    continue
                fwd = block._find_var_recursive(_forward_name(n))
                if fwd is not None:
                    block.create_var(name=n, shape=fwd.shape, dtype=fwd.dtype,
                                     lod_level=fwd.lod_level)
                else:
                    block.create_var(name=n, dtype=None)
        block.append_op(desc.type, desc.inputs, desc.outputs, desc.attrs)
    if parameter_list is not None:
        params = [block.var(_name(p)) for p in parameter_list]
    else:
        params = [p for p in block.program.all_parameters() if p.trainable]
    result = []
    for p in params:
        g = grad_var_name(p.name)
        if block.has_var(g):
            result.append((p, block.var(g)))
    return result
