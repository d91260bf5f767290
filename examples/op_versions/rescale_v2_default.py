"""Release 'v2-default' of the example's rescale op (see rescale_op.py); load with --ops rescale_v2_default.py."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rescale_op import register_release  # noqa: E402

register_release("v2-default")
