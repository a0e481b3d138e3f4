"""`python -m asyncop` runs the CLI."""

import sys

from asyncop.cli import main

sys.exit(main())
