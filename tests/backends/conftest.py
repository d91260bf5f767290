"""The backend tests: the numpy toy backend (fixtures/numpy_toy) importable in-process."""
from __future__ import annotations

import sys
from pathlib import Path

TOY = Path(__file__).resolve().parent / "fixtures" / "numpy_toy"
if str(TOY) not in sys.path:
    sys.path.insert(0, str(TOY))
