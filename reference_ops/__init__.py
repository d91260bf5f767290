"""The built-in ops: one forward op per `<op_type>_op.py` (its grad op may share the file).

Importing this package registers every op module in this folder.
"""
import importlib as _importlib
import pkgutil as _pkgutil

OP_MODULES = sorted(m.name for m in _pkgutil.iter_modules(__path__) if m.name.endswith("_op"))

for _name in OP_MODULES:
    _importlib.import_module(f"{__name__}.{_name}")

from reference_ops import gpu as _gpu  # noqa: E402,F401  dedicated cupy kernels (no cupy needed to import)
