"""Kernels that must not tell a test run from production (issue 48)."""
