"""Rendering, pure: answers and deliveries -> text and embed data within Discord's
limits (text: clipping, escaping, safe links), and pictures (plot, Agg).

May import: the store, and each other. Not discord, not the sending loop
(tests/system/test_package.py)."""
