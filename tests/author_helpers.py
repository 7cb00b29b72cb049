"""Authors for the seeds' papers, stored the way `mapwatch enrich` stores them (store/scholarly/saved.py)."""

from __future__ import annotations

import zlib
from datetime import datetime

from mapwatch.store.records import AuthorRecord, CitationContext, Institution, OpenAlexWork
from mapwatch.store.scholarly.saved import save_contexts, save_openalex

SURVEY = "2412.10400"  # the survey seed
SELF = "2509.02547"  # one of its citers, sharing its first author
OTHER = "2507.14111"  # another of its citers, by other people (a hostile name among them)
REF = "2005.14165"  # a paper it builds on

WANG = AuthorRecord("Shuhe Wang", "A5023888391", "0000-0002-1825-0097",
                    (Institution("Zhejiang University", "I76130692"),))
HOSTILE = "Mallory [click](https://evil.example) @everyone *bold*"


def work(paper_id: str, *authors: AuthorRecord, venue: str | None = None) -> OpenAlexWork:
    return OpenAlexWork(paper_id, f"W{zlib.crc32(paper_id.encode())}", tuple(authors), venue, None)


def store_authors(db, now: datetime) -> None:
    """The survey, a self-citing citer, another citer with a hostile name, and a reference."""
    save_openalex(db, [
        work(SURVEY, WANG, AuthorRecord("Shengyu Zhang", "A5000000001", None, (Institution("Zhejiang University",
                                                                                             "I76130692"),)),
             AuthorRecord("Jie Zhang"), venue="arXiv (Cornell University)"),
        work(SELF, AuthorRecord("Guibin Zhang", "A5000000002"), WANG),
        work(OTHER, AuthorRecord(HOSTILE, "A5000000003"),
             AuthorRecord("Xiaoya Li", "A5000000004", institutions=(Institution("Peking University"),))),
        work(REF, AuthorRecord("Tom B. Brown", "A5000000005", institutions=(Institution("OpenAI", "I4210161460"),))),
    ], [SURVEY, SELF, OTHER, REF], now)


def store_context(db, now: datetime, citing: str, cited: str = SURVEY, *, influential: bool = True,
                  sentences: tuple[str, ...] = ("As the survey of RL-enhanced LLMs shows [3], reward models matter.",
                                                "We follow the taxonomy of [3].", "A third sentence.")) -> None:
    save_contexts(db, cited, [CitationContext(citing, cited, sentences, ("background",), influential)], now)
