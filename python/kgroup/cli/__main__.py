"""``python -m kgroup.cli``: the ``kgroup`` command, for when the console script is not on PATH."""

import sys

from kgroup.cli import main

if __name__ == "__main__":
    sys.exit(main())
