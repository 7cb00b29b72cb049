"""robots.txt, read with urllib.robotparser for mapwatch's User-Agent (README, "mapwatch refresh")."""

from __future__ import annotations

import math
from urllib.robotparser import RobotFileParser

MAX_ROBOTS_BYTES = 512 * 1024


def parse_robots(url: str, data: bytes) -> RobotFileParser:
    """A robots.txt document as a parser: `can_fetch`, `crawl_delay`, `site_maps`."""
    rp = RobotFileParser(url)
    rp.parse([whole_delay(line) for line in data.decode("utf-8", "replace").splitlines()])
    return rp


def whole_delay(line: str) -> str:
    """`Crawl-delay: 0.5` as `Crawl-delay: 1`: urllib.robotparser reads whole seconds only, and
    rounding up keeps to what the site asked."""
    name, sep, value = line.partition(":")
    if sep and name.strip().lower() == "crawl-delay":
        try:
            seconds = float(value.split("#", 1)[0].strip())
        except ValueError:
            return line
        if seconds >= 0 and seconds != int(seconds):
            return f"Crawl-delay: {math.ceil(seconds)}"
    return line
