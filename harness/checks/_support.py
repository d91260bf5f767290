"""The old name of harness.checks.support (the checks' shared helpers): the same module
object under both names, for checks written against it."""
import sys

from harness.checks import support

sys.modules[__name__] = support
