"""Check a built documentation site: every page parses with an HTML5 parser (html5lib), and
no page holds a <script> the theme did not put there (the theme's are those of its own 404
page, which holds no text of ours). Usage: python .ci/check_site.py SITE_DIR"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import html5lib


def scripts(path: Path) -> list[str]:
    """Each <script>'s source or text, relative paths and the page's base_url made alike."""
    tree = html5lib.parse(path.read_bytes(), treebuilder="etree", namespaceHTMLElements=False)
    out = []
    for el in tree.iter("script"):
        src = el.get("src")
        if src:
            out.append(re.sub(r"^(?:\.\./|\./|/)+", "", src))
        else:
            out.append(re.sub(r'base_url = "[^"]*"', 'base_url = ""', " ".join((el.text or "").split())))
    return out


def check(site: Path) -> list[str]:
    theme = set(scripts(site / "404.html"))
    problems = []
    pages = sorted(site.rglob("*.html"))
    for page in pages:
        try:
            html5lib.HTMLParser(strict=True).parse(page.read_bytes())
        except Exception as e:  # html5lib raises ParseError with the position
            problems.append(f"{page.relative_to(site)}: not well-formed HTML5: {e}")
        extra = [s for s in scripts(page) if s not in theme]
        if extra:
            problems.append(f"{page.relative_to(site)}: a <script> the theme did not put there: {extra[0][:80]!r}")
    if not pages:
        problems.append(f"{site}: no pages")
    return problems


if __name__ == "__main__":
    found = check(Path(sys.argv[1]))
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)
