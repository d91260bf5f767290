"""`opkit.errors`: the typed errors (all subclasses of `opkit.EnforceNotMet`)."""
from opkit.framework.errors import *  # noqa: F401,F403
from opkit.framework.errors import __all__  # noqa: F401
