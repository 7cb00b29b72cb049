"""The bundled seed pages (README, "Page formats"): read with importlib.resources.

seeds may import (mapwatch/layers.py): none of the other rooms."""
