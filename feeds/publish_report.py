"""The report of one publish: which feed and page files were written, unchanged or skipped.

Shared by publish (which fills it in) and publish_writer (which counts into it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PublishReport"]


@dataclass
class PublishReport:
    out_dir: str
    written: list[str] = field(default_factory=list)  # relative paths rewritten
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # unsafe names, not written
    incremental: bool = False  # paper feeds rebuilt only for papers changed since the last publish
    pages: int = 0  # web pages built (index, directions, papers), written or not
    charts: int = 0  # cited-by charts drawn
    charts_pending: int = 0  # charts left for a later publish (time limit)
    page_seconds: float = 0.0  # spent building and writing the pages and charts (bench/ reports it)
    chart_seconds: float = 0.0  # of which drawing the charts

    @property
    def total(self) -> int:
        return len(self.written) + self.unchanged

    def summary(self) -> str:
        s = f"Feeds and pages in {self.out_dir}: {len(self.written):,} written, {self.unchanged:,} unchanged"
        if self.skipped:
            s += f", {len(self.skipped):,} skipped (unsafe names)"
        return s + "."
