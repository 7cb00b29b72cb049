"""Benchmarks: a synthetic map at scale (`bench.generate`) and `bench/run` (`bench.main`).

bench may import (mapwatch/layers.py): store/, feeds/, bot/, mapwatch/, seeds. And the fakes
of tests/; nothing of the package imports it."""
