"""Check a built documentation site: every page parses with an HTML5 parser (html5lib), no
page holds a <script> the theme did not put there (the theme's are those of its own 404 page,
which holds no text of ours), and no page loads a script or a stylesheet from another host
(the site works offline: code is highlighted when it is built, the search index is bundled).
Usage: python .ci/check_site.py SITE_DIR"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import html5lib

# Where a theme's inline script names the page's place in the site: the same script on every
# page but for these (MkDocs: `base_url = ".."`; Material: `new URL("..",location)` and the
# `"base"` and `"search"` of its JSON config). Only these spots are made alike, so a script
# that came in through a page's text still differs from every script of the 404 page.
RELATIVE = [
    (re.compile(r'base_url = "[^"]*"'), 'base_url = ""'),
    (re.compile(r'new URL\("[^"]*",location\)'), 'new URL("",location)'),
    (re.compile(r'"base": "[^"]*"'), '"base": ""'),
    (re.compile(r'"search": "(?:\.\./|\./|/)*'), '"search": "'),
]
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)  # a scheme (https:, data:) or a host (//cdn)


def parse(path: Path):
    return html5lib.parse(path.read_bytes(), treebuilder="etree", namespaceHTMLElements=False)


def scripts(path: Path) -> list[str]:
    """Each <script>'s source or text, relative paths and the page's base made alike."""
    out = []
    for el in parse(path).iter("script"):
        src = el.get("src")
        if src:
            out.append(re.sub(r"^(?:\.\./|\./|/)+", "", src))
        else:
            text = " ".join((el.text or "").split())
            for pattern, same in RELATIVE:
                text = pattern.sub(same, text)
            out.append(text)
    return out


def external(path: Path) -> list[str]:
    """The address of each script and stylesheet the page loads from another host."""
    tree = parse(path)
    found = [el.get("src", "") for el in tree.iter("script")]
    found += [el.get("href", "") for el in tree.iter("link")
              if "stylesheet" in (el.get("rel") or "").lower().split()]
    return [url for url in found if EXTERNAL.match(url.strip())]


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
        far = external(page)
        if far:
            problems.append(f"{page.relative_to(site)}: loads a script or stylesheet from another host: {far[0]}")
    if not pages:
        problems.append(f"{site}: no pages")
    return problems


if __name__ == "__main__":
    found = check(Path(sys.argv[1]))
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)
