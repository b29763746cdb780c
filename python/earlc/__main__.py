"""`python -m earlc ...` runs the command line (see earlc.cli)."""
import sys

from .cli import main

sys.exit(main())
