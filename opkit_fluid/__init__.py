"""opkit's own Fluid-style framework as a backend of the harness, and the checks of Fluid's
own concepts.

`plugin` (the entry point `opkit` of the group `opkit.backends`, the default backend) is
`OpkitBackend` (opkit_fluid.backend): opkit's kernels run by opkit's executor, behind the
typed contract harness.backend.contract, as opkit_paddle's and opkit_torch's backends are.
`opkit_fluid.checks` holds the checks that only make sense for a Fluid-like framework (LoD,
SelectedRows, no-need buffers, the inplace pass and prepared plans, compile-time
infer_shape, SBP signatures), each an entry point of the group `opkit.checks`; each declares
the capabilities it needs (`Check.needs`), so it runs under every backend that has them
(Paddle has LoD and compile-time shapes) and skips with the backend's reason elsewhere.
Importing this package imports neither numpy nor the framework.
"""
from __future__ import annotations

from opkit_fluid.backend import OpkitBackend

__all__ = ["OpkitBackend", "plugin"]

plugin = OpkitBackend()
