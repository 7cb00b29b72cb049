"""Unit tests, mirroring the package (store/, feeds/, bot/): the fast loop, `pytest tests/unit`."""
