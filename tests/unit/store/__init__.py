"""Unit tests of mapwatch.store."""
