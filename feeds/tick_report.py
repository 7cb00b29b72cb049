"""The report of one refresh tick: the refresh's report and the publish's report.

Shared by the scheduler (which makes it) and the /metrics and health views (which read it),
so that neither of those needs the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mapwatch.feeds.publish_report import PublishReport
    from mapwatch.store.sources.refresh import RefreshReport

__all__ = ["TickResult"]


@dataclass(frozen=True)
class TickResult:
    refresh: RefreshReport
    publish: PublishReport
    # The tracked papers, read once by the tick (its refresh fetched them first); None: not read.
    tracked: tuple[str, ...] | None = None
