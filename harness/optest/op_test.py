"""OpTest: Paddle's op unit-test base class (a unittest.TestCase; plain pytest collects it).

setUp sets `op_type`, `inputs`, `outputs`, `attrs` (LoD as `(array, lengths)`, duplicable
slots as `[(name, array), ...]`) and may define `reference(self, inputs, attrs)`. A
check_output / check_grad call builds the Case and either declares what it checks (inside
`harness.optest.methods.declaring()`: `opkit test`, whose `output` and `grad` checks judge
it) or judges it at once through the same judges (harness.judging.output_judge /
grad_judge) and raises (plain pytest / unittest) or hands the results to the collector of
`harness.reporting.report.collecting()`.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import unittest

from harness.backend.case import Case
from harness.selecting.discovery import module_attribute_name, pytest_target
from harness.reporting.messages import rel
from harness.optest.methods import Declared, current_plan
from harness.options import current
from harness.backend import dispatch
from harness.reporting.report import FAIL, current_collector

__all__ = ["OpTest", "public_class"]


class OpTest(unittest.TestCase):
    """Base class of op tests: `check_output()` and `check_grad(...)`."""

    op_type: str = ""
    #: numeric gradient mode: "auto" (default), "exact", "fast" or "dense"; None: the
    #: run's option (harness.options; the OPKIT_GRAD_MODE environment variable), else "auto"
    grad_check_mode: str | None = None

    # -- the case ---------------------------------------------------------------------------
    def _source(self) -> str:
        cls = type(self)
        try:
            path = inspect.getsourcefile(cls) or ""
        except TypeError:
            path = getattr(sys.modules.get(cls.__module__), "__file__", "") or ""
        path = rel(path)
        name = module_attribute_name(cls) or cls.__name__
        return f"{path}::{name}" if path else name

    def to_case(self) -> Case:
        """The Case this test describes (name = class name, source = file::class). What later
        check_* calls check (grad_inputs, grad_outputs, no_grad_set, options) is recorded on
        the Case returned last."""
        self._opkit_case = case = self._build_case()
        return case

    def _build_case(self) -> Case:
        if not getattr(self, "op_type", "") or not hasattr(self, "inputs"):
            self.setUp()
        ref = getattr(type(self), "reference", None)
        inputs = getattr(self, "inputs", {}) or {}
        outputs = getattr(self, "outputs", {}) or {}
        inputs, outputs = self.case_data(inputs, outputs)
        case = Case(name=type(self).__name__, op_type=self.op_type, inputs=inputs,
                    attrs=dict(getattr(self, "attrs", {}) or {}), outputs=outputs,
                    reference=self.reference if callable(ref) else None, source=self._source())
        recorded = getattr(self, "_opkit_recorded", None)
        if recorded:
            _apply(case, recorded)
        return case

    def case_data(self, inputs: dict, outputs: dict) -> tuple[dict, dict]:
        """The inputs and outputs the Case holds, from the test's (a plugin's spelling may
        convert them: Paddle's bfloat16 carried as uint16)."""
        return inputs, outputs

    def _record(self, **fields) -> None:
        """Remember what a check_* call checked, on this test and on the last Case given out."""
        recorded = self.__dict__.setdefault("_opkit_recorded", {"options": {}})
        options = fields.pop("options", {})
        recorded.update(fields)
        recorded["options"].update({k: v for k, v in options.items() if v is not None})
        case = getattr(self, "_opkit_case", None)
        if case is not None:
            _apply(case, recorded)

    def _repro(self, default_method: str) -> str:
        method = None
        frame = inspect.currentframe()
        while frame is not None:
            if frame.f_locals.get("self") is self and frame.f_code.co_name.startswith("test"):
                method = frame.f_code.co_name
            frame = frame.f_back
        method = method or (self._testMethodName if self._testMethodName.startswith("test")
                            else default_method)
        path = self._source().split("::")[0]
        return f"python -m pytest {pytest_target(type(self), path, method)}  (or: opkit " \
               f"test {self.op_type} --tests {path})"

    def judging_context(self):
        """The context this test's declared checks are judged in (harness.optest.methods.
        Declared): none here; a plugin's spelling may add one (Paddle's static mode)."""
        return contextlib.nullcontext()

    def _deliver(self, check: str, case: Case, **arguments):
        """The check_* call: inside `declaring()` (`opkit test`) a `Declared` appended to the
        plan and returned, judged later by the check of that name; else judged now, its
        results to the collector of `collecting()`, else an AssertionError for a failure
        (naming the kernel function and its file:line; under pytest its traceback ends in
        the test's own method: the harness's frames are hidden)."""
        __tracebackhide__ = True
        declared = Declared(check, case, arguments, current(), self.judging_context)
        plan = current_plan()
        if plan is not None:
            plan.append(declared)
            return declared
        results = declared.verdict()
        collector = current_collector()
        if collector is not None:
            collector.extend(results)
            return results
        failures = [r for r in results if r.status == FAIL]
        if failures:
            from harness.backend.dispatch import kernel_functions
            from harness.reporting.messages import kernel_line

            kernel = kernel_line(self.op_type, failures, kernel_functions)
            raise AssertionError("\n\n".join(
                f"[{r.check} {r.place} {r.dtype}] {r.message}".replace("  ]", "]")
                for r in failures) + (f"\n{kernel}" if kernel else ""))
        return results

    # -- checks -----------------------------------------------------------------------------
    def check_output(self, atol=None, rtol=None, no_check_set=None, equal_nan=False):
        """Forward outputs against self.outputs on every place and float dtype with a kernel."""
        __tracebackhide__ = True
        case = self._build_case()
        self._record(no_check_set=tuple(no_check_set or ()),
                     options={"atol": atol, "rtol": rtol, "equal_nan": equal_nan or None})
        return self._deliver("output", case, atol=atol, rtol=rtol, no_check_set=no_check_set,
                             equal_nan=equal_nan, repro=self._repro("test_check_output"))

    def check_grad(self, inputs_to_check, output_names, no_grad_set=None,
                   max_relative_error=0.005, numeric_grad_delta=0.005, user_defined_grads=None,
                   mode=None):
        """Analytic gradients of `inputs_to_check` against float64 numeric ones."""
        __tracebackhide__ = True
        if isinstance(inputs_to_check, str):
            inputs_to_check = [inputs_to_check]
        if isinstance(output_names, str):
            output_names = [output_names]
        mode = mode or self.grad_check_mode
        case = self._build_case()
        self._record(grad_inputs=list(inputs_to_check), grad_outputs=list(output_names),
                     no_grad_set=tuple(no_grad_set or ()),
                     options={"max_relative_error": max_relative_error,
                              "numeric_grad_delta": numeric_grad_delta,
                              "user_defined_grads": user_defined_grads, "grad_mode": mode})
        return self._deliver("grad", case, inputs_to_check=inputs_to_check,
                             output_names=output_names, no_grad_set=no_grad_set,
                             max_relative_error=max_relative_error,
                             numeric_grad_delta=numeric_grad_delta,
                             user_defined_grads=user_defined_grads, mode=mode,
                             repro=self._repro("test_check_grad"))


def _apply(case: Case, recorded: dict) -> None:
    for key in ("grad_inputs", "grad_outputs", "no_grad_set", "no_check_set"):
        if key in recorded:
            setattr(case, key, recorded[key])
    case.options = {**(case.options or {}), **recorded.get("options", {})}


@functools.cache
def public_class() -> type:
    """`harness.OpTest`: this class with the spellings installed plugins add to it (their
    `optest_surface(base) -> subclass`, harness.spec.PLUGIN_ATTRIBUTES; Paddle's)."""
    cls = OpTest
    for surface in dispatch.optest_surfaces():
        cls = surface(cls)
    return cls
