"""Paddle's `check_grad_with_place(..., user_defined_grads=G, user_defined_grad_outputs=C)`:
the op's analytic gradients for the output gradients C against the expected gradients G
(the test computed both itself), by Paddle's rule of comparison."""
from __future__ import annotations

import numpy as np

from harness.backend.case import normalize_slots
from harness.backend.seam import make
from opkit_paddle.optest_surface import as_bfloat16
from opkit.framework.dtypes import is_float
from opkit.framework.place import CPUPlace, CUDAPlace

__all__ = ["check_user_grads"]

ABS_FLOOR = 1e-3      # Paddle's denominator floor of the relative gradient error
BF16_ATOL = 1e-2      # Paddle's atol floor for bfloat16 gradients


def check_user_grads(test, place, inputs_to_check, output_names, no_grad_set,
                     max_relative_error, grads, grad_outputs) -> None:
    """Raises AssertionError naming the input and the worst element when a gradient is off."""

    if isinstance(inputs_to_check, str):
        inputs_to_check = [inputs_to_check]
    if isinstance(output_names, str):
        output_names = [output_names]
    if not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]       # one output's gradient given bare, as Paddle takes
    if not isinstance(grads, (list, tuple)):
        grads = [grads]
    kind = test._paddle_place_kind(place)
    expected = normalize_slots(getattr(test, "outputs", {}) or {})
    slots = {s: [v.name for v in specs] for s, specs in expected.items()}
    prepared = make(test.op_type, normalize_slots(getattr(test, "inputs", {}) or {}),
                    dict(getattr(test, "attrs", {}) or {}), slots,
                    CPUPlace() if kind == "CPU" else CUDAPlace(0))
    outs = prepared.forward()
    cot = {}
    for name, given in zip(output_names, grad_outputs):
        out = outs.get(name)
        given = as_bfloat16(np.asarray(given)) if test.is_bfloat16_op() else np.asarray(given)
        cot[name] = given.astype(out.dtype) if out is not None and is_float(out.dtype) \
            else given
    got = prepared.backward(cot, list(inputs_to_check), tuple(no_grad_set or ()))
    bf16 = test.is_bfloat16_op()
    for name, want in zip(inputs_to_check, grads):
        have = got.get(name)
        if have is None:
            raise AssertionError(f"op '{test.op_type}': no gradient of {name}")
        a = np.asarray(have).astype(np.float64)
        w = np.asarray(as_bfloat16(np.asarray(want)) if bf16 else want).astype(np.float64)
        if a.shape != w.shape:
            raise AssertionError(f"op '{test.op_type}': gradient of {name} has shape "
                                 f"{a.shape}, expected {w.shape}")
        if bf16:
            np.testing.assert_allclose(a, w, rtol=max_relative_error, atol=BF16_ATOL,
                                       err_msg=f"op '{test.op_type}': gradient of {name}")
            continue
        err = np.abs(a - w) / np.maximum(np.abs(w), ABS_FLOOR)
        if err.size and float(err.max()) > max_relative_error:
            k = int(np.argmax(err))
            raise AssertionError(
                f"op '{test.op_type}': gradient of {name}: max relative error "
                f"{float(err.max()):.4g} > {max_relative_error} at flat index {k} (analytic "
                f"{a.reshape(-1)[k]!r}, expected {w.reshape(-1)[k]!r})")
