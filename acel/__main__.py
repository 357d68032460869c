"""``python -m acel``: the same command line as the ``acel`` console script."""

import sys

from acel.app.cli import main

sys.exit(main())
