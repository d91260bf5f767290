"""pytest plugin of opkit (placeholder until the harness options land)."""
