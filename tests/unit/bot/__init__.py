"""Unit tests of mapwatch.bot."""
