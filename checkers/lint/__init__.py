"""`opkit lint`: static checks for op code, built on libcst.

Entry points: :func:`checkers.lint.runner.lint_paths` and the rule classes in
:mod:`checkers.lint.rules`. Importing this package imports nothing heavy.
"""
