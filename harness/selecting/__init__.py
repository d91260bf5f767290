"""Which ops, OpTest classes and shard a run covers (read first)."""
