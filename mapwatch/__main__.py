"""`python -m mapwatch`: the same as the `mapwatch` command.

mapwatch/__main__.py may import (mapwatch/layers.py): mapwatch/cli."""

import sys

from mapwatch.cli import main

sys.exit(main())
