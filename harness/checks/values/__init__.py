"""Checks of output values."""
