"""`python -m opkit` is the `opkit` command."""
import sys

from opkit.cli.main import main

sys.exit(main())
