"""Checks of gradients (first and second order)."""
