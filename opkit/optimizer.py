"""Optimizers: append_backward, then one update op per (param, grad)."""
from __future__ import annotations

from opkit.framework import errors
from opkit.framework.backward import append_backward
from opkit.framework.program import default_startup_program, unique_name

__all__ = ["SGD", "Optimizer"]


class Optimizer:
    def __init__(self, learning_rate: float):
        if not isinstance(learning_rate, (int, float)) or learning_rate <= 0:
            raise errors.InvalidArgument("learning_rate must be a number > 0, got %r",
                                         learning_rate)
        self.learning_rate = float(learning_rate)

    def _lr_var(self, block, dtype):
        name = unique_name("learning_rate")
        lr = block.create_var(name=name, shape=[1], dtype=dtype, persistable=True)
        sblock = default_startup_program().global_block()
        sblock.create_var(name=name, shape=[1], dtype=dtype, persistable=True)
        sblock.append_op("fill_constant", outputs={"Out": name},
                         attrs={"shape": [1], "value": self.learning_rate, "dtype": dtype})
        return lr

    def minimize(self, loss, parameter_list=None, no_grad_set=None):
        """Append the backward pass and the updates; returns [(param, grad), ...]."""
        params_grads = append_backward(loss, parameter_list, no_grad_set)
        if not params_grads:
            raise errors.InvalidArgument("minimize: the loss '%s' depends on no trainable "
                                         "parameter", loss.name)
        block = loss.block.program.global_block()
        lr = self._lr_var(block, loss.dtype or "float32")
        for param, grad in params_grads:
            self._append_update(block, param, grad, lr)
        return params_grads

    def _append_update(self, block, param, grad, lr) -> None:  # pragma: no cover
        raise NotImplementedError


class SGD(Optimizer):
    """param -= learning_rate * grad"""

    def _append_update(self, block, param, grad, lr) -> None:
        block.append_op("sgd", inputs={"Param": param, "Grad": grad, "LearningRate": lr},
                        outputs={"ParamOut": param})
