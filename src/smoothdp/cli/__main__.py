"""``python -m smoothdp.cli``: the ``smoothdp`` command."""

import sys

from smoothdp.cli.app import main

sys.exit(main())
