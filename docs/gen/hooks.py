"""MkDocs hook: pages and pictures kept beside the code they describe, published with the site
without a copy in docs/: the benchmark figures (bench/RESULTS.md), the reliability tests and
their figures (tests/RELIABILITY.md) and the graph picture drawn from the seeds. The journals'
figure markers, read by docs/gen/journal_summary.py for the summary pages, are left out of
their pages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent

# site path: file in the repository
EXTERNAL = {
    "bench-results.md": "bench/RESULTS.md",
    "reliability.md": "tests/RELIABILITY.md",
    "graph-2412.10400.png": "seeds/graph-2412.10400.png",
}
JOURNALS = ("bench-results.md", "reliability.md")
# A marker line (docs/gen/journal_summary.py). As an HTML comment in the page it would not be
# well-formed HTML5 where it holds `--` (a command's options).
MARKER = re.compile(r"^<!-- (?:figure|run): .* -->\n", re.M)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File  # here, so that docs/gen/front_page.py imports EXTERNAL without MkDocs

    for site_path, repo_path in EXTERNAL.items():
        files.append(File.generated(config, site_path, abs_src_path=str(ROOT / repo_path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri in JOURNALS:
        return MARKER.sub("", markdown)
    return markdown
