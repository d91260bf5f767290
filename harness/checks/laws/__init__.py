"""The laws every op obeys (issue 36)."""
