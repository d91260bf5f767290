"""OpTests of the built-in ops (installed with them, so `opkit test relu` works anywhere).

`OPKIT_EXEMPT`: built-in ops that have no OpTest, with the reason (read by `opkit test` when
it tests the built-in ops, as a project's `[tool.opkit.exempt]`)."""

OPKIT_EXEMPT = {
    "while": "control flow: its sub_block attr is a Block, which an OpTest's setUp cannot "
             "express; tested through programs in reference_ops/tests/test_while_op.py",
}
