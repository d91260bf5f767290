"""Checks of what an op declares: shapes, SBP, attrs, domains."""
