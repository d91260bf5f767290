"""The run's options, typed: built ONCE by a front door (`opkit test`, the pytest plugin, a
library call) and handed to every worker; nothing below the front doors reads `OPKIT_*`
environment variables for them.

`DEFAULT_SEED` is the one place the default seed is written.
"""
from __future__ import annotations

DEFAULT_SEED = 2024

__all__ = ["DEFAULT_SEED"]
