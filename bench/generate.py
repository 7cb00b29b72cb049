"""A deterministic synthetic citation map, in the exact page format of seeds/.

Pages are built as `store.pages.model` dataclasses and written with `store.pages.format.format_page`,
so they parse by construction (a sample is parsed back and compared while writing).

    python -m bench.generate --papers 20000 --out DIR [--seed 1] [--snapshot 2] [--list-items 40]
    python -m bench.generate serve DIR [--port N] [--html]

The map: papers in time order, arXiv-style ids consistent with their first-posted dates
(old style such as hep-th/9901001 before April 2007, 4-digit numbers until 2014, 5-digit
after), 60 directions in 5 areas (some breadcrumbs with " / " inside a part), references
drawn by preferential attachment (a few papers cited thousands of times at 20k papers),
lists truncated to 30 ("30 of M"), titles of 6-16 words, abstracts of 120-260 words.

Snapshot 2 is snapshot 1 plus 1% new papers (posted in November) citing 2% of the pages:
those pages gain citers (later data-through date, larger counts, the new citers at the
end of their "Built on by" lists when it has room); every other page is byte-identical.
Files are written only when their bytes change, so unchanged pages keep their mtime.
"""

from __future__ import annotations

import argparse
import gzip
import html
import itertools
import json
import math
import random
import re
import sys
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from bench.vocab import Vocabulary, zipf
from bench.words import FIELD_WORDS
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList, Placement
from mapwatch.store.pages.parse import parse_page

HOST = "https://mlsanity.com"
LIST_LIMIT = 30
DATA_THROUGH = (date(2026, 10, 14), date(2026, 11, 12))
CHANGED_SHARE = 0.02
NEW_PAPER_SHARE = 0.01
MANIFEST = "MANIFEST.json"
REFS_MEDIAN = 14  # references drawn per paper (lognormal median)
# (list items per page, median that gives them), measured on 20,000-page maps (both lists
# are cut at 30 items, so items grow ever slower with the references drawn)
ITEMS_TO_MEDIAN = ((25.2, 14.0), (32.6, 21.5), (39.3, 32.3), (42.2, 40.4))

# (area name, url key, [(direction name, breadcrumb parts between area and direction)])
AREAS: list[tuple[str, str, list[tuple[str, tuple[str, ...]]]]] = [
    ("LLM reasoning", "lr", [
        ("Reinforcement learning for reasoning", ()), ("Chain-of-thought prompting", ("Prompting",)),
        ("Test-time compute scaling", ()), ("Mathematical reasoning", ("Domains",)),
        ("Code generation", ("Domains",)), ("Tool use and agents", ("Agents",)),
        ("Multi-agent systems", ("Agents",)), ("Process reward models", ("Verification / reward",)),
        ("Self-consistency and verification", ("Verification / reward",)), ("Planning with LLMs", ()),
        ("Reasoning benchmarks", ("Evaluation",)), ("Long-context reasoning", ()),
    ]),
    ("LLM alignment", "alignment", [
        ("Reward modeling and RLHF", ("RLHF / preference optimisation",)),
        ("Direct preference optimisation", ("RLHF / preference optimisation",)),
        ("Constitutional methods", ()), ("Red teaming and jailbreaks", ("Safety",)),
        ("Hallucination detection", ("Safety",)), ("Interpretability", ()),
        ("Instruction tuning", ("Data",)), ("Synthetic data for alignment", ("Data",)),
        ("Value alignment", ()), ("Watermarking", ("Safety", "Provenance / misuse")),
        ("Evaluation of alignment", ("Evaluation",)), ("Scalable oversight", ()),
    ]),
    ("Computer vision", "cv", [
        ("Vision transformers", ("Architectures",)), ("Diffusion models", ("Generative models",)),
        ("Image segmentation", ()), ("Object detection", ()),
        ("Vision-language models", ("Multimodal / vision + language",)),
        ("Video understanding", ()), ("3D reconstruction", ("3D / geometry",)),
        ("Neural radiance fields", ("3D / geometry",)), ("Self-supervised learning", ()),
        ("Image generation evaluation", ("Generative models", "Evaluation")),
        ("Medical imaging", ("Applications",)), ("Remote sensing", ("Applications",)),
    ]),
    ("Reinforcement learning", "rl", [
        ("Policy optimisation", ("Methods",)), ("Offline reinforcement learning", ()),
        ("Model-based reinforcement learning", ("Methods",)), ("Exploration", ()),
        ("Multi-agent reinforcement learning", ()), ("Robot learning", ("Embodied / robotics",)),
        ("Imitation learning", ("Embodied / robotics",)), ("Reward design", ()),
        ("Hierarchical reinforcement learning", ("Methods",)), ("Safe reinforcement learning", ()),
        ("Bandits", ("Theory",)), ("Sim-to-real transfer", ("Embodied / robotics",)),
    ]),
    ("Graphs and structured data", "graphs", [
        ("Graph neural networks", ()), ("Knowledge graphs", ("Knowledge / retrieval",)),
        ("Retrieval-augmented generation", ("Knowledge / retrieval",)), ("Molecular graphs", ("Science",)),
        ("Graph transformers", ()), ("Link prediction", ()), ("Recommender systems", ("Applications",)),
        ("Tabular learning", ()), ("Time series", ()), ("Combinatorial optimisation", ("Science",)),
        ("Program synthesis on graphs", ()), ("Spatio-temporal graphs", ()),
    ]),
]

_FUNCTION = ("for", "with", "via", "in", "of", "from", "towards", "beyond", "under", "without")
_FLOURISH = ("Schrödinger", "naïve", "Gödel", "Bézier", "Erdős", "$\\ell_1$", "$O(n \\log n)$",
             "(Extended Version)", "[Re]", "$k$-NN", "Q&A", "100×")
_ACRONYM = "ABCDEFGHIJKLMNOPRSTUVWXYZ"
_OLD_ARCHIVES = ("hep-th", "hep-ph", "cs", "math", "cond-mat", "quant-ph", "math.GT", "astro-ph")


@dataclass(frozen=True)
class Direction:
    area: str
    area_key: str
    name: str
    breadcrumb: str  # area / parts / name
    slug: str
    url: str
    in_area: int  # how many directions the area has


def directions() -> list[Direction]:
    out = []
    for area, key, dirs in AREAS:
        for name, parts in dirs:
            slug = f"{key}/{_slugify(name)}"
            out.append(Direction(area, key, name, " / ".join((area, *parts, name)), slug,
                                 f"{HOST}/{slug}/", len(dirs)))
    return out


def _slugify(name: str) -> str:
    s = "".join(c.lower() if c.isalnum() else "-" for c in name)
    return "-".join(p for p in s.split("-") if p)


@dataclass
class SyntheticMap:
    """Everything needed to render any page of either snapshot."""

    seed: int
    ids: list[str]
    titles: list[str]
    posted: list[date]
    main_dir: array  # index into `dirs`
    extra_dirs: list[tuple[int, ...]]
    refs: list[array]  # indices of earlier papers this one cites
    refs_total: array
    citers: list[list[int]]  # snapshot 1
    dirs: list[Direction]
    n: int  # papers with pages (snapshot 1 and 2)
    # snapshot 2: new papers (indices >= n, no pages) and the pages they cite
    new_citers: dict[int, list[int]]

    def indegree(self, i: int, snapshot: int) -> int:
        extra = len(self.new_citers.get(i, ())) if snapshot == 2 else 0
        return len(self.citers[i]) + extra if i < self.n else 0

    def changed(self) -> list[int]:
        return sorted(self.new_citers)


def build_map(papers: int, seed: int = 1, list_items: int | None = None) -> SyntheticMap:
    """The whole synthetic map from a seed (pages are rendered lazily by `page`).

    `list_items`: about how many list items a page has on average (both lists; None: the
    original map, 18-37 by size), by drawing more references per paper."""
    rng = random.Random(seed)
    median = REFS_MEDIAN if list_items is None else _median_for(list_items)
    dirs = directions()
    dates = sorted(_draw_dates(rng, papers))
    ids = _assign_ids(rng, dates)
    titles = [_title(rng) for _ in range(papers)]
    weights = [1 / (r + 1) ** 0.8 for r in range(len(dirs))]
    order = list(range(len(dirs)))
    rng.shuffle(order)
    dir_weights = [weights[order[d]] for d in range(len(dirs))]
    main_dir = array("i", rng.choices(range(len(dirs)), dir_weights, k=papers))
    extra_dirs: list[tuple[int, ...]] = []
    for i in range(papers):
        k = rng.choices((0, 1, 2), (0.55, 0.33, 0.12))[0]
        extra = tuple(d for d in dict.fromkeys(rng.choices(range(len(dirs)), dir_weights, k=k))
                      if d != main_dir[i])
        extra_dirs.append(extra)

    # References by preferential attachment (plus a share within the paper's direction).
    refs: list[array] = []
    refs_total = array("i")
    pool = array("i")  # each paper once, plus once per citation it received
    by_dir: list[list[int]] = [[] for _ in dirs]
    citers: list[list[int]] = [[] for _ in range(papers)]
    for i in range(papers):
        old = dates[i] < date(2007, 4, 1)
        want = int(rng.lognormvariate(math.log(median if not old else 5), 0.8))
        want = min(want, 250, i)
        chosen: dict[int, None] = {}
        same = by_dir[main_dir[i]]
        tries = 0
        while len(chosen) < want and tries < want * 4:
            tries += 1
            if same and rng.random() < 0.35:
                j = same[int(rng.random() * len(same))]
            else:
                j = pool[int(rng.random() * len(pool))]
            chosen[j] = None
        mine = array("i", chosen)
        refs.append(mine)
        refs_total.append(len(mine) + int(len(mine) * rng.uniform(0.2, 1.5)) + rng.randint(0, 12))
        for j in mine:
            citers[j].append(i)
            pool.append(j)
        pool.append(i)
        by_dir[main_dir[i]].append(i)

    # Snapshot 2: new papers posted after snapshot 1, citing 2% of the pages.
    rng2 = random.Random(seed * 7919 + 2)
    n_new = max(1, round(papers * NEW_PAPER_SHARE))
    new_dates = sorted(DATA_THROUGH[0] + timedelta(days=rng2.randint(18, 27)) for _ in range(n_new))
    ids += _assign_ids(rng2, new_dates)
    dates += new_dates
    titles += [_title(rng2) for _ in range(n_new)]
    n_changed = max(1, round(papers * CHANGED_SHARE))
    new_citers: dict[int, list[int]] = {}
    for i in rng2.sample(range(papers), n_changed):
        new_citers[i] = sorted(rng2.sample(range(papers, papers + n_new), min(n_new, rng2.randint(1, 4))))
    return SyntheticMap(seed, ids, titles, dates, main_dir, extra_dirs, refs, refs_total, citers,
                        dirs, papers, new_citers)


def _median_for(list_items: float) -> float:
    """The references' median that gives about `list_items` list items per page."""
    pts = ITEMS_TO_MEDIAN
    lo, hi = (pts[0], pts[1]) if list_items <= pts[1][0] else (pts[-2], pts[-1])
    for a, b in itertools.pairwise(pts):
        if a[0] <= list_items <= b[0]:
            lo, hi = a, b
    return max(1.0, lo[1] + (list_items - lo[0]) * (hi[1] - lo[1]) / (hi[0] - lo[0]))


def _draw_dates(rng: random.Random, n: int) -> list[date]:
    years = list(range(1995, 2027))
    weights = [1.22 ** (y - 1995) for y in years]
    weights[-1] *= 0.79  # 2026 runs only to mid-October
    out = []
    for y in rng.choices(years, weights, k=n):
        last_month = 10 if y == 2026 else 12
        m = rng.randint(1, last_month)
        d = rng.randint(1, 14 if (y, m) == (2026, 10) else 28)
        out.append(date(y, m, d))
    return out


def _assign_ids(rng: random.Random, dates: list[date]) -> list[str]:
    """arXiv-style ids consistent with the (sorted) dates: numbers grow within a month."""
    by_month: dict[tuple[int, int], list[int]] = {}
    for i, d in enumerate(dates):
        by_month.setdefault((d.year, d.month), []).append(i)
    ids = [""] * len(dates)
    for (y, m), members in by_month.items():
        if (y, m) < (2007, 4):
            archive = _OLD_ARCHIVES[rng.randrange(len(_OLD_ARCHIVES))]
            numbers = sorted(rng.sample(range(1, 1000), len(members)))
            for i, num in zip(members, numbers, strict=True):
                ids[i] = f"{archive}/{y % 100:02d}{m:02d}{num:03d}"
        else:
            width = 4 if y < 2015 else 5
            numbers = sorted(rng.sample(range(1, 10 ** width), len(members)))
            for i, num in zip(members, numbers, strict=True):
                ids[i] = f"{y % 100:02d}{m:02d}.{num:0{width}d}"
    return ids


_VOCAB: Vocabulary | None = None  # None: the 180 words above, drawn uniformly


def use_vocabulary(name: str) -> None:
    """Titles and abstracts from now on: "small" (the 180 words) or "zipf" (bench/vocab.py)."""
    global _VOCAB
    _VOCAB = zipf() if name == "zipf" else None


def _pick(rng: random.Random, k: int) -> list[str]:
    return _VOCAB.words(rng, k) if _VOCAB else [rng.choice(FIELD_WORDS) for _ in range(k)]


def _title(rng: random.Random) -> str:
    words = _pick(rng, rng.randint(5, 13))
    for k in range(2, len(words) - 1, 4):
        if rng.random() < 0.5:
            words[k] = rng.choice(_FUNCTION)
    text = " ".join(words)
    text = text[0].upper() + text[1:]
    r = rng.random()
    if r < 0.35:
        acro = "".join(rng.choice(_ACRONYM) for _ in range(rng.randint(2, 6)))
        text = f"{acro}: {text}"
    elif r < 0.45:
        text = f"{text} ({rng.choice(_FLOURISH)})"
    elif r < 0.55:
        text = f"{text}: {rng.choice(_FLOURISH)} {rng.choice(FIELD_WORDS)}"
    return text


def _abstract(seed: int, i: int) -> str:
    rng = random.Random(seed * 1_000_003 + i)
    paragraphs = []
    for _ in range(1 if rng.random() < 0.8 else 2):
        sentences = []
        for _ in range(rng.randint(4, 8)):
            words = _pick(rng, rng.randint(12, 28))
            s = " ".join(words)
            sentences.append(s[0].upper() + s[1:] + ".")
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def _listed(m: SyntheticMap, j: int, position: int) -> ListedPaper:
    pid = m.ids[j]
    return ListedPaper(id=pid, title=m.titles[j], year=m.posted[j].year, position=position,
                       url=f"{HOST}/paper/{pid}/")


def page(m: SyntheticMap, i: int, snapshot: int = 1) -> MapPage:
    """Paper `i`'s page as it reads in `snapshot` (1 or 2)."""
    changed = snapshot == 2 and i in m.new_citers
    snap = 2 if changed else 1
    pid = m.ids[i]
    d = m.dirs[m.main_dir[i]]
    placements = tuple(
        Placement(breadcrumb=x.breadcrumb, area=x.area, direction=x.name, slug=x.slug, url=x.url)
        for x in (d, *(m.dirs[k] for k in m.extra_dirs[i])))
    refs = sorted(m.refs[i], key=lambda j: (-m.indegree(j, snap), j))
    citers = list(m.citers[i]) + (m.new_citers[i] if changed else [])
    citers.sort(key=lambda j: (-m.indegree(j, snap), j))
    builds_on = built_on_by = None
    if refs:
        builds_on = PaperList(shown=min(LIST_LIMIT, len(refs)), total=len(refs),
                              items=tuple(_listed(m, j, k + 1) for k, j in enumerate(refs[:LIST_LIMIT])))
    if citers:
        built_on_by = PaperList(shown=min(LIST_LIMIT, len(citers)), total=len(citers),
                                items=tuple(_listed(m, j, k + 1) for k, j in enumerate(citers[:LIST_LIMIT])))
    return MapPage(
        id=pid, title=m.titles[i], arxiv_url=f"https://arxiv.org/abs/{pid}", map_url=f"{HOST}/paper/{pid}/",
        cited_by=len(citers), data_through=DATA_THROUGH[snap - 1], direction=d.name,
        direction_count=d.in_area, area=d.area, refs_in_map=len(refs), refs_total=m.refs_total[i],
        first_posted=m.posted[i], placements=placements, builds_on=builds_on, built_on_by=built_on_by,
        abstract=_abstract(m.seed, i))


def page_path(out: Path, paper_id: str) -> Path:
    """Where a page lives in the folder: one subfolder per month (or old-style archive)."""
    shard = paper_id.split("/")[0] if "/" in paper_id else paper_id[:4]
    return out / shard / f"{paper_id.replace('/', '_')}.txt"


def write_map(m: SyntheticMap, out: Path, snapshot: int = 1, *, check_every: int = 97,
              progress: Callable[[int, int], None] | None = None) -> dict:
    """Write every page of `snapshot` into `out` (only files whose bytes change). Returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for i in range(m.n):
        p = page(m, i, snapshot)
        text = format_page(p).encode("utf-8")
        if check_every and i % check_every == 0 and parse_page(text) != p:
            raise AssertionError(f"page {p.id} does not parse back to what was generated")
        path = page_path(out, p.id)
        try:
            same = path.stat().st_size == len(text) and path.read_bytes() == text
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            same = False
        if not same:
            path.write_bytes(text)
            written += 1
        if progress and ((i + 1) % 1000 == 0 or i + 1 == m.n):
            progress(i + 1, m.n)
    citations = sum(len(r) for r in m.refs)
    changed = m.changed()
    manifest = {
        "papers": m.n, "seed": m.seed, "snapshot": snapshot, "files_written": written,
        "data_through": DATA_THROUGH[snapshot - 1].isoformat(), "citations": citations,
        "directions": len(m.dirs), "max_cited_by": max(len(c) for c in m.citers),
        "old_style_ids": sum(1 for pid in m.ids[:m.n] if "/" in pid),
        "changed_pages": len(changed) if snapshot == 2 else 0,
        "new_citations": sum(len(v) for v in m.new_citers.values()) if snapshot == 2 else 0,
        "new_listed_citations": (sum(_newly_listed(m, i) for i in changed) if snapshot == 2 else 0),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def _newly_listed(m: SyntheticMap, i: int) -> int:
    p2 = page(m, i, 2)
    assert p2.built_on_by is not None
    return sum(1 for it in p2.built_on_by.items if it.id in {m.ids[j] for j in m.new_citers[i]})


def generate(papers: int, out: Path, *, seed: int = 1, snapshot: int = 1, list_items: int | None = None,
             progress: Callable[[int, int], None] | None = None) -> dict:
    return write_map(build_map(papers, seed, list_items), out, snapshot, progress=progress)


def iter_pages(m: SyntheticMap, snapshot: int = 1) -> Iterator[MapPage]:
    for i in range(m.n):
        yield page(m, i, snapshot)


# --- serving the folder over HTTP (the refresh path) ---------------------------------

_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(([^)\s]+)\)")  # over page text, never over HTML
_UNESCAPE = re.compile(r"\\([\\\[\]()*_`])")
SITEMAP_CHUNK = 50_000  # URLs per sitemap file (the protocol's limit)


def _inline(text: str) -> str:
    """One line of page text as HTML: `[text](url)` links become anchors, the rest is text."""
    out, at = [], 0
    for m in _LINK.finditer(text):
        out.append(html.escape(_UNESCAPE.sub(r"\1", text[at:m.start()]), quote=False))
        label = html.escape(_UNESCAPE.sub(r"\1", m[1]), quote=False)
        out.append(f'<a href="{html.escape(m[2])}">{label}</a>')
        at = m.end()
    out.append(html.escape(_UNESCAPE.sub(r"\1", text[at:]), quote=False))
    return "".join(out)


def html_page(text: str, title: str = "") -> str:
    """A page's text as the map's website serves it: the content (h1, h2, lists, paragraphs,
    anchors) inside a site template with navigation, a sidebar, a footer and a script that
    list other papers. Written from the text line by line (no Markdown library: fast enough
    to serve 100,000 pages)."""
    body: list[str] = []
    in_list = False
    for line in text.split("\n"):
        if line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append(f"<li>{_inline(line[2:])}</li>")
            continue
        if in_list:
            body.append("</ul>")
            in_list = False
        if line.startswith("## "):
            body.append(f"<h2>{_inline(line[3:])}</h2>")
        elif line.startswith("# "):
            body.append(f"<h1>{_inline(line[2:])}</h1>")
        elif line.strip():
            body.append(f"<p>{_inline(line)}</p>")
    if in_list:
        body.append("</ul>")
    chrome = '<li><a href="/paper/2301.99991/">A Popular Paper</a> (2023)</li>'
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)} · map</title>"
            "<script>window.state = {\"related\": \"- [x](/paper/2302.99992/) (2023)\"};</script></head>\n"
            f"<body><header><nav><ul><li><a href=\"/\">Home</a></li>{chrome}</ul></nav>"
            "<form action=\"/search/\"><input name=\"q\"></form></header>\n"
            "<article>\n" + "\n".join(body) + "\n</article>\n"
            f"<aside><h2>Popular</h2><ul>{chrome}</ul></aside>\n"
            f"<footer><ul>{chrome}</ul></footer></body></html>\n")


def make_app(folder: Path, *, as_html: bool = False):  # -> aiohttp.web.Application
    """An aiohttp app serving `folder` as the map: GET /paper/<id>/ (ETag, Last-Modified,
    304 on If-None-Match / If-Modified-Since), GET /ids.txt (every paper id, one a line).
    With `as_html`, pages are HTML documents rendered from their text on each request (never
    the text), with /robots.txt, a sitemap index at /sitemap.xml and gzipped sitemaps
    /sitemap-<n>.xml.gz listing every page: the map's website."""
    from aiohttp import web

    folder = Path(folder)
    hits = {"requests": 0, "conditional": 0}

    async def paper(request: web.Request) -> web.StreamResponse:
        pid = request.match_info["pid"]
        path = page_path(folder, pid)
        if not path.is_file():
            raise web.HTTPNotFound(text=f"no page for {pid}\n")
        hits["requests"] += 1
        if request.if_none_match or request.if_modified_since:
            hits["conditional"] += 1
        if not as_html:
            # FileResponse sets ETag and Last-Modified and answers 304 to conditional GETs.
            return web.FileResponse(path, headers={"Content-Type": "text/plain; charset=utf-8"})
        st = path.stat()
        etag = f'"{st.st_mtime_ns:x}-{st.st_size:x}"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        text = path.read_text(encoding="utf-8")
        return web.Response(text=html_page(text), content_type="text/html", headers={"ETag": etag})

    def all_ids() -> list[str]:
        return [_id_from_path(p) for p in sorted(folder.rglob("*.txt"))]

    async def ids(request: web.Request) -> web.Response:
        return web.Response(text="".join(i + "\n" for i in all_ids()), content_type="text/plain")

    async def robots(request: web.Request) -> web.Response:
        base = f"{request.scheme}://{request.host}"
        return web.Response(text=f"User-agent: *\nDisallow: /search/\nSitemap: {base}/sitemap.xml\n")

    async def sitemap_index(request: web.Request) -> web.Response:
        base = f"{request.scheme}://{request.host}"
        n = (len(all_ids()) + SITEMAP_CHUNK - 1) // SITEMAP_CHUNK
        items = "".join(f"<sitemap><loc>{base}/sitemap-{k}.xml.gz</loc></sitemap>\n" for k in range(n))
        return web.Response(text='<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns='
                                 f'"http://www.sitemaps.org/schemas/sitemap/0.9">\n{items}</sitemapindex>\n',
                            content_type="application/xml")

    async def sitemap(request: web.Request) -> web.Response:
        base = f"{request.scheme}://{request.host}"
        k = int(request.match_info["k"])
        chunk = all_ids()[k * SITEMAP_CHUNK:(k + 1) * SITEMAP_CHUNK]
        if not chunk:
            raise web.HTTPNotFound()
        urls = "".join(f"<url><loc>{base}/paper/{html.escape(i)}/</loc></url>\n" for i in chunk)
        doc = ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/'
               f'sitemap/0.9">\n{urls}</urlset>\n')
        return web.Response(body=gzip.compress(doc.encode(), mtime=0), content_type="application/gzip")

    app = web.Application()
    app["hits"] = hits
    app.router.add_get("/paper/{pid:.+?}/", paper)
    app.router.add_get("/ids.txt", ids)
    if as_html:
        app.router.add_get("/robots.txt", robots)
        app.router.add_get("/sitemap.xml", sitemap_index)
        app.router.add_get("/sitemap-{k:\\d+}.xml.gz", sitemap)
    return app


def _id_from_path(path: Path) -> str:
    stem = path.stem
    return stem.replace("_", "/") if not stem[:1].isdigit() else stem


async def start_server(folder: Path, host: str = "127.0.0.1", port: int = 0, *, as_html: bool = False):
    """Start serving `folder`; returns (runner, base_url). Stop with `await runner.cleanup()`."""
    from aiohttp import web

    runner = web.AppRunner(make_app(folder, as_html=as_html), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://{host}:{bound}"


def _serve(folder: Path, port: int, as_html: bool = False) -> None:
    import asyncio
    import contextlib

    async def run() -> None:
        runner, url = await start_server(folder, port=port, as_html=as_html)
        print(f"serving {folder} at {url}/paper/<id>/ as {'HTML' if as_html else 'text'} (Ctrl-C stops)",
              flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


def _progress_line(done: int, total: int) -> None:
    print(f"\rgenerated {done:,}/{total:,} pages", end="\n" if done == total else "", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        p = argparse.ArgumentParser(prog="python -m bench.generate serve")
        p.add_argument("folder", type=Path)
        p.add_argument("--port", type=int, default=8077)
        p.add_argument("--html", action="store_true",
                       help="serve the pages as the map's website: HTML only, robots.txt, sitemaps")
        a = p.parse_args(argv[1:])
        _serve(a.folder, a.port, a.html)
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0])
    p.add_argument("--papers", type=int, default=20_000)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--list-items", type=int, default=None,
                   help="about this many list items per page (default: the original map, 18-37)")
    p.add_argument("--snapshot", type=int, choices=(1, 2), default=1)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--vocab", choices=("small", "zipf"), default="small",
                   help="title/abstract words: the 180 field words, or Zipf over 6,000 (bench/vocab.py)")
    a = p.parse_args(argv)
    use_vocabulary(a.vocab)
    manifest = generate(a.papers, a.out, seed=a.seed, snapshot=a.snapshot, list_items=a.list_items,
                        progress=None if a.quiet else _progress_line)
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
