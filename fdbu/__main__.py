"""`python -m fdbu COMMAND ...`: the same as the `fdbu` console script."""
import sys

from .cli.main import main

sys.exit(main())
