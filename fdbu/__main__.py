"""`python -m fdbu COMMAND ...`: the same as the `fdbu` console script."""
import sys

from .cli import main

sys.exit(main())
