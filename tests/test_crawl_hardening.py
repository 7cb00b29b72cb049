"""Hardening of the HTTP crawl (issue 21): robots.txt checks do not re-read the package
metadata, and a tick has an overall deadline (what is left waits for the next tick)."""

from __future__ import annotations

import importlib.metadata

import pytest
from mapwatch.store.format import format_page
from mapwatch.store.http_client import HttpOptions, user_agent
from mapwatch.store.refresh import refresh

from tests import pagegen
from tests.mapsite import MapSite, seed_texts, serve_site


def test_robots_checks_read_the_package_metadata_at_most_once(db, clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page the crawl queues is checked against robots.txt with mapwatch's User-Agent;
    that name was rebuilt from the package metadata for every check (1.4 ms a URL)."""
    calls: list[str] = []
    real = importlib.metadata.version

    def counting(name: str) -> str:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", counting)
    texts = {**seed_texts(), **{p.id: format_page(p) for p in pagegen.generate(30).v1}}
    with serve_site(MapSite(pages=texts, disallow=["/paper/2507.04136/"])) as site:
        report = refresh(db, site.base, clock=clock, options=HttpOptions(budget=40, backoff=0.01))
    assert report.robots_skipped == 1 and report.pages_read >= 30  # every queued page was checked
    assert len(calls) <= 1, f"the metadata was read {len(calls)} times"
    assert user_agent() == user_agent() and user_agent().startswith("mapwatch/")
