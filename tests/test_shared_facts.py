"""Facts deliberately copied between packages (so that a package need not import another)
agree with their source."""
import io

from opkit.framework import errors
from opkit.framework.proto import ATTR_TYPE_IDS


def test_lint_error_names_are_the_frameworks_error_kinds():
    from checkers.lint.catalog import ERROR_NAMES

    kinds = {n for n in errors.__all__ if isinstance(getattr(errors, n), type) and
             issubclass(getattr(errors, n), errors.EnforceNotMet)}
    assert sorted(ERROR_NAMES) == sorted(kinds)
    assert len(ERROR_NAMES) == len(set(ERROR_NAMES))


def test_compat_attr_type_names_are_the_protos_attr_type_ids():
    from checkers.compat import ATTR_TYPE_NAMES

    assert ATTR_TYPE_NAMES == {v: k for k, v in ATTR_TYPE_IDS.items()}


def test_lint_formats_of_the_command_line_are_the_reporters():
    from checkers.lint.report import FORMATS, render
    from opkit.cli.lint import FORMATS as CLI_FORMATS

    assert tuple(CLI_FORMATS) == tuple(FORMATS)
    for fmt in FORMATS:  # every listed format renders (an empty report)
        out = io.StringIO()
        render(fmt, [], 0, out)
