"""Unit tests of mapwatch.feeds."""
