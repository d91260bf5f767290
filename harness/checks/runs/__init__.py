"""Checks across runs and processes: determinism, state, concurrency, prepared plans, sparse inputs."""
