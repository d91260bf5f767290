# The correct-but-unusual ops and their OpTests: run through `opkit test` by
# test_correct_ops.py; plain pytest must not collect the OpTests themselves.
collect_ignore = ["optests", "correct_unusual_op.py"]
