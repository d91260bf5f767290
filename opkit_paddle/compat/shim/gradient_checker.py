"""`gradient_checker` of opkit's Paddle-compatibility mode.

Paddle's double- and triple-grad checks (`double_grad_check`, `triple_grad_check` and their
`_for_dygraph` twins) differentiate the grad op of the op that made `y`. They could map onto
opkit's numeric engine only where opkit registers that grad op's own grad
(`<op>_grad_grad`, checked by opkit's `double_grad` check); without it the call skips the
test with the reason naming the op, never passes. With it, the call still skips: `y` comes
from Paddle's static Program, which the facade does not build (in Paddle's 2.x / 3.x files
these calls sit behind `paddle.static.data`, which skips first). `grad_check` (first order) needs Paddle's
static Program (its `y` comes from Paddle's layer API); it skips with that reason.
"""
from __future__ import annotations

import unittest

from opkit.registry import has_op

__all__ = ["grad_check", "double_grad_check", "triple_grad_check",
           "double_grad_check_for_dygraph", "triple_grad_check_for_dygraph",
           "second_order_reason"]


def _op_type(y) -> str | None:
    y = y[0] if isinstance(y, (list, tuple)) and y else y
    op = getattr(y, "op", None)
    return getattr(op, "type", None) if op is not None else None


def second_order_reason(op_type: str | None, order: int) -> str:
    """Why an order-`order` gradient check of `op_type` cannot run in opkit."""

    what = "double" if order == 2 else "triple"
    if op_type is None:
        return (f"gradient_checker {what}-grad check: y was not made by an opkit op (Paddle's "
                "layer API builds it), and opkit has no second-order grad ops")
    grad = op_type + "_grad" * (order - 1)
    if has_op(grad + "_grad"):
        return ""
    return (f"gradient_checker {what}-grad check of {op_type}: opkit has no grad op for "
            f"{grad} ({grad}_grad), so there is no analytic {what} gradient to check")


def _skip(op_type, order):
    raise unittest.SkipTest(second_order_reason(op_type, order) or
                            f"gradient_checker: order-{order} check of {op_type} needs "
                            "Paddle's static Program to feed the grad op")


def grad_check(x, y, x_init=None, place=None, program=None, eps=1e-6, atol=1e-5, rtol=1e-3,
               raise_exception=True):
    raise unittest.SkipTest("gradient_checker.grad_check differentiates a Paddle static "
                            "Program (Paddle's layer API), which opkit's facade does not "
                            "provide; opkit's OpTest check_grad covers first-order gradients")


def double_grad_check(x, y, x_init=None, y_grads=None, place=None, program=None, eps=1e-6,
                      atol=1e-5, rtol=1e-3, raise_exception=True):
    _skip(_op_type(y), 2)


def triple_grad_check(x, y, x_init=None, y_grads=None, x_grads_grads=None, place=None,
                      program=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    _skip(_op_type(y), 3)


def double_grad_check_for_dygraph(func, x, y, x_init=None, place=None, atol=1e-5, rtol=1e-3,
                                  raise_exception=True):
    _skip(_op_type(y), 2)


def triple_grad_check_for_dygraph(func, x, y, x_init=None, place=None, atol=1e-5, rtol=1e-3,
                                  raise_exception=True):
    _skip(_op_type(y), 3)
