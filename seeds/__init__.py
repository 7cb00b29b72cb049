"""The bundled seed pages (README, "Page formats"): read with importlib.resources."""
