"""OPK002: enforce messages, and the optional stricter policy."""
from __future__ import annotations

import pytest

from .helpers import rules_of

H = "import opkit\nfrom opkit import enforce, enforce_eq, enforce_not_none, enforce_ge, errors, EnforceNotMet\n"


def found(body: str, **table) -> list:
    return rules_of(H + body + "\n", "OPK002", **table)


@pytest.mark.parametrize("body", [
    "enforce(x)", "enforce(x, '')", "enforce(x, '   ')", "enforce(x, '' '')",
    "enforce_eq(a, b)", "enforce_eq(a, b, '')", "enforce_ge(a, b, \"\\t\")",
    "enforce_not_none(x)", "enforce_not_none(x, '')", "opkit.enforce(x)", "opkit.enforce_eq(a, b, ' ')",
    "raise errors.InvalidArgument('')", "raise errors.NotFound()", "e = errors.Fatal('  ')",
    "raise EnforceNotMet('')", "raise opkit.errors.OutOfRange()", "enforce(x, errors.Unavailable(''))",
    "enforce(x, f'')", "enforce(x, msg='')",
])
def test_reported(body):
    assert len(found(body)) == 1, body


@pytest.mark.parametrize("body", [
    "enforce(x, 'X must be set')", "enforce(x, msg)", "enforce(x, f'{name} must be set')",
    "enforce(x, 'bad %s' % name)", "enforce(x, '{} bad'.format(name))", "enforce_eq(a, b, MSG)",
    "enforce_eq(a, b, errors.InvalidArgument('shape %s', s))", "enforce(x, *args)",
    "raise errors.NotFound(message)", "enforce_not_none(x, 'Input(X) is null')",
    "raise ValueError('')", "other.InvalidArgument('')",
])
def test_not_reported(body):
    assert found(body) == [], body


def test_min_message_length_counts_implicit_concatenation():
    assert found("enforce(x, 'short')", min_message_length=10)
    assert not found("enforce(x, 'sh' 'ort and long enough')", min_message_length=10)
    assert not found("enforce(x, msg)", min_message_length=100)  # variables are not measured
    assert not found("enforce(x, 'short')")  # off by default
    assert found("raise errors.InvalidArgument('tiny')", min_message_length=10)


def test_require_error_type():
    assert found("enforce(x, 'Input(X) should not be null.')", require_error_type=True)
    assert found("enforce(x, 'bad %s' % n)", require_error_type=True)
    assert not found("enforce(x, errors.InvalidArgument('Input(X) is null.'))", require_error_type=True)
    assert not found("enforce(x, msg)", require_error_type=True)


def test_regex_gate_false_positive_is_avoided():
    # Paddle issue 47629: a regex gate rejected a message split over lines / with parentheses
    code = ("enforce(\n    cond,\n    errors.InvalidArgument(\n        'The input (X) must be '\n"
            "        'positive, got (%s).', x))")
    assert found(code, min_message_length=20, require_error_type=True) == []
