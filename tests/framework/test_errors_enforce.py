import pytest

import opkit
from opkit import errors
from opkit.framework.errors import EmptyMessageError


def test_typed_errors_are_enforce_not_met_with_formatting():
    err = errors.InvalidArgument("max (%s) should be greater than min (%s).", 1, 2)
    assert isinstance(err, opkit.EnforceNotMet)
    assert "max (1) should be greater than min (2)." in str(err)
    assert str(err).startswith("InvalidArgument:")


@pytest.mark.parametrize("name", ["InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists",
                                  "ResourceExhausted", "PreconditionNotMet", "PermissionDenied",
                                  "ExecutionTimeout", "Unimplemented", "Unavailable", "Fatal",
                                  "External"])
def test_every_error_type_exists_and_refuses_empty_message(name):
    cls = getattr(errors, name)
    assert issubclass(cls, opkit.EnforceNotMet)
    with pytest.raises(EmptyMessageError):
        cls("")
    with pytest.raises(EmptyMessageError):
        cls("   ")


def test_enforce_passes_and_fails_with_message():
    opkit.enforce(True, "never shown")
    with pytest.raises(errors.PreconditionNotMet, match="x must be set"):
        opkit.enforce(False, "x must be %s", "set")


def test_enforce_with_typed_error_keeps_its_type():
    with pytest.raises(errors.OutOfRange, match="index 5"):
        opkit.enforce(False, errors.OutOfRange("index %d out of range", 5))


@pytest.mark.parametrize("fn,a,b,ok", [
    (opkit.enforce_eq, 1, 1, True), (opkit.enforce_eq, 1, 2, False),
    (opkit.enforce_ne, 1, 2, True), (opkit.enforce_ne, 1, 1, False),
    (opkit.enforce_lt, 1, 2, True), (opkit.enforce_lt, 2, 2, False),
    (opkit.enforce_le, 2, 2, True), (opkit.enforce_le, 3, 2, False),
    (opkit.enforce_gt, 3, 2, True), (opkit.enforce_gt, 2, 2, False),
    (opkit.enforce_ge, 2, 2, True), (opkit.enforce_ge, 1, 2, False),
])
def test_comparisons(fn, a, b, ok):
    if ok:
        fn(a, b, "comparison %s", "message")
    else:
        with pytest.raises(opkit.EnforceNotMet) as info:
            fn(a, b, "comparison of %s", "values")
        assert "comparison of values" in str(info.value)
        assert repr(a) in str(info.value) and repr(b) in str(info.value)


def test_enforce_not_none():
    opkit.enforce_not_none(0, "zero is not None")
    with pytest.raises(errors.NotFound, match="var w"):
        opkit.enforce_not_none(None, "var %s", "w")


@pytest.mark.parametrize("call", [
    lambda: opkit.enforce(True, ""),  # opkit: ignore[OPK002]
    lambda: opkit.enforce(False, "  "),  # opkit: ignore[OPK002]
    lambda: opkit.enforce_eq(1, 1, ""),  # opkit: ignore[OPK002]
    lambda: opkit.enforce_not_none(1, ""),  # opkit: ignore[OPK002]
])
def test_empty_message_is_refused_at_run_time_even_when_the_check_passes(call):
    with pytest.raises(EmptyMessageError):
        call()


def test_bad_format_arguments_do_not_hide_the_message():
    err = errors.InvalidArgument("needs two %s %s", 1)
    assert "needs two" in str(err)


def test_op_context_prefix():
    err = errors.NotFound("gone").with_context("clip", "x_0")
    assert str(err).startswith("[operator < clip > error, variable 'x_0'] NotFound: gone")
