"""``python -m robust_mrc.cli COMMAND ...``: the ``robust-mrc`` command without its script on the PATH."""

import sys

from robust_mrc.cli import main

sys.exit(main())
