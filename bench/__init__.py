"""Benchmarks: a synthetic map at scale (`bench.generate`) and `bench/run` (`bench.main`)."""
