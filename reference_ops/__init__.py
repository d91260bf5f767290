"""The built-in ops: one forward op per `<op_type>_op.py` (its grad op may share the file).

An op registers when its module is imported. The registry loads them on demand: its lookup
of one op type (`op_info("square")`, `create_op`, `layers.square`...) imports that op's
module only (`load_op`), and anything that needs every op (`all_op_types()`, `opkit ops`,
`opkit test --all`, `scratch()`) imports them all (`load_all_ops`). So a process that uses a
few ops pays for those few. Importing this package itself registers nothing.
"""
import importlib as _importlib
import os as _os

# (a listing of the folder: importing pkgutil for it would cost more than the lookup saves)
OP_MODULES = sorted(f[:-3] for f in _os.listdir(__path__[0]) if f.endswith("_op.py"))
_OP_MODULE_SET = frozenset(OP_MODULES)

# ops with a dedicated GPU kernel in reference_ops.gpu (loaded with the op; a test checks
# this list against reference_ops.gpu.REGISTERED and SKIPPED)
GPU_DEDICATED = frozenset({"elementwise_add", "softmax", "sum", "concat", "sequence_pool"})


def op_module(op_type: str):
    """The module that registers `op_type` (`square_grad` -> `reference_ops.square_op`), or
    None when no file of this package is named after it."""
    base = op_type
    while base.endswith("_grad"):
        base = base[: -len("_grad")]
    name = f"{base}_op"
    return f"{__name__}.{name}" if name in _OP_MODULE_SET else None


def load_op(op_type: str) -> bool:
    """Import the module of `op_type` (and the dedicated GPU kernels of its op); False when
    this package has no module named after it."""
    module = op_module(op_type)
    if module is None:
        return False
    _importlib.import_module(module)
    _importlib.import_module(f"{__name__}._low_precision").register_module(
        module[len(__name__) + 1:])
    if module[len(__name__) + 1: -len("_op")] in GPU_DEDICATED:
        _importlib.import_module(f"{__name__}.gpu")
    return True


def load_all_ops() -> None:
    """Import every op module (and the dedicated GPU kernels: no cupy needed to import)."""
    low_precision = _importlib.import_module(f"{__name__}._low_precision")
    for name in OP_MODULES:
        _importlib.import_module(f"{__name__}.{name}")
        low_precision.register_module(name)
    _importlib.import_module(f"{__name__}.gpu")
