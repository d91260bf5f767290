"""The `opkit` command: one module per subcommand, imported only when that command runs."""
