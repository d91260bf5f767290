"""Verdicts: the one comparator, the gradient judges and their numeric engine, tolerances, `unconfirmed`."""
