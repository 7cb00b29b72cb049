"""`python -m mapwatch`: the same as the `mapwatch` command."""

import sys

from mapwatch.cli import main

sys.exit(main())
