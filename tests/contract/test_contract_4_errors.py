"""The public contract, section 4. errors."""
from __future__ import annotations

import numpy as np
import pytest

import opkit
from opkit import errors
from opkit.registry import scratch

from contract_helpers import assert_signature, register_probe, run_single


ERROR_CLASSES = ("InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists",
                 "ResourceExhausted", "PreconditionNotMet", "PermissionDenied",
                 "ExecutionTimeout", "Unimplemented", "Unavailable", "Fatal", "External")
ENFORCE = ("enforce_eq", "enforce_ne", "enforce_lt", "enforce_le", "enforce_gt", "enforce_ge")


@pytest.mark.parametrize("name", ERROR_CLASSES)
def test_4_error_classes(name):
    cls = getattr(errors, name)
    assert issubclass(cls, opkit.EnforceNotMet)
    err = cls("bad value %d", 3)
    assert "bad value 3" in str(err)
    with pytest.raises(Exception):
        cls("")
    with pytest.raises(Exception):
        cls("   ")
    assert opkit.errors.EnforceNotMet is opkit.EnforceNotMet


def test_4_enforce_signatures():
    assert_signature(opkit.enforce, lambda cond, msg, *args: None)
    for name in ENFORCE:
        assert_signature(getattr(opkit, name), lambda a, b, msg, *args: None)
    assert_signature(opkit.enforce_not_none, lambda x, msg, *args: None)


@pytest.mark.parametrize("name, a, b", [("enforce_eq", 1, 2), ("enforce_ne", 1, 1),
                                        ("enforce_lt", 2, 1), ("enforce_le", 2, 1),
                                        ("enforce_gt", 1, 2), ("enforce_ge", 1, 2)])
def test_4_enforce_compare(name, a, b):
    fn = getattr(opkit, name)
    with pytest.raises(opkit.EnforceNotMet, match="value 7"):
        fn(a, b, "value %d", 7)
    with pytest.raises(errors.OutOfRange, match="typed"):
        fn(a, b, errors.OutOfRange("typed %s", "msg"))
    fn(b if name in ("enforce_eq",) else a, b if name == "enforce_eq" else a, "ok") \
        if name in ("enforce_eq", "enforce_le", "enforce_ge") else None


def test_4_enforce_and_not_none():
    opkit.enforce(True, "fine")
    opkit.enforce_not_none(0, "fine")
    with pytest.raises(opkit.EnforceNotMet, match="cond 1"):
        opkit.enforce(False, "cond %d", 1)
    with pytest.raises(errors.NotFound, match="nothing"):
        opkit.enforce_not_none(None, errors.NotFound("nothing"))
    with pytest.raises(opkit.EnforceNotMet):
        opkit.enforce_not_none(None, "none")


@pytest.mark.parametrize("msg", ["", "  "])
def test_4_empty_message_is_refused_at_run_time(msg):
    with pytest.raises(Exception) as info:
        opkit.enforce(False, msg)
    assert not isinstance(info.value, opkit.EnforceNotMet) or str(info.value).strip()
    with pytest.raises(Exception):
        opkit.enforce(True, msg)                     # even when the check passes
    with pytest.raises(Exception):
        opkit.enforce_eq(1, 1, msg)


def test_4_errors_while_an_op_runs_name_the_op_and_variable():
    def kernel(ctx):
        raise errors.OutOfRange("kernel said no")

    with scratch():
        register_probe({}, kernel=kernel)
        with pytest.raises(errors.OutOfRange) as info:
            run_single("contract_probe", {"x": np.ones(2)}, {"X": "x"}, {"Out": "o"})
        assert "contract_probe" in str(info.value) and "kernel said no" in str(info.value)

    with scratch():
        register_probe({}, kernel=lambda ctx: ctx.set_output("Out", ctx.input("X")))
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="never_fed", shape=[2], dtype="float32")
        block.append_op("contract_probe", {"X": "never_fed"}, {"Out": "o"})
        with pytest.raises(opkit.EnforceNotMet) as info:
            opkit.Executor().run(prog, scope=opkit.Scope())
        assert "contract_probe" in str(info.value) and "never_fed" in str(info.value)


def test_4_foreign_errors_while_an_op_runs_become_external_naming_the_op():
    def kernel(ctx):
        return 1 // 0

    with scratch():
        register_probe({}, kernel=kernel)
        with pytest.raises(errors.External) as info:
            run_single("contract_probe", {"x": np.ones(2)}, {"X": "x"}, {"Out": "o"})
    assert "contract_probe" in str(info.value) and "ZeroDivisionError" in str(info.value)
