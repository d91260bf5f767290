# Deliberately broken ops and their OpTests: `opkit test --ops tests/broken_ops --tests
# tests/broken_ops` and tests/harness run them; plain pytest must not (they fail on purpose).
collect_ignore_glob = ["test_*.py", "*_op.py"]
