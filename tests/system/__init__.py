"""System tests: the whole program as users run it (subprocesses, kills, real servers,
browsers and feed readers, the fake Discord, bench smoke runs). The full run: `pytest`."""
