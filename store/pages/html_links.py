"""Which URL a link of an HTML map page means: the document's base, and links made absolute.

Links are resolved against the document's base: `<base href>`, else the page's URL (http or
https), else its `<link rel="canonical">`, else the map host its own absolute `/paper/`
links name (a saved file); links whose scheme is not http or https are not links (see
store.pages.html and docs/pages.md, "Page formats").
"""

from __future__ import annotations

from urllib.parse import SplitResult, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from mapwatch.store.ids import normalize_id

LINK_SCHEMES = ("http", "https")


def declared_base(tree: LexborHTMLParser, url: str | None) -> str | None:
    """`<base href>` resolved against `url`, or `url` if it is http(s)."""
    page = url if is_web_url(url) else None
    base = tree.css_first("base[href]")
    if base is not None:
        href = (base.attributes.get("href") or "").strip()
        try:
            resolved = urljoin(page, href) if page else href
        except ValueError:
            resolved = ""
        if is_web_url(resolved):
            return resolved
    return page


def base_urls(tree: LexborHTMLParser, url: str | None) -> tuple[str | None, str | None]:
    """(the URL links are resolved against, the page's own URL). Over HTTP the page's URL is
    its own; a saved file's is its `<link rel="canonical">`, else its `<base href>`. Links
    resolve against `<base>`, else the page's own URL."""
    own = url if is_web_url(url) else None
    if own is None:
        for link in tree.css("link[rel][href]"):
            if "canonical" in (link.attributes.get("rel") or "").lower().split():
                href = (link.attributes.get("href") or "").strip()
                if is_web_url(href):
                    own = href
                    break
    declared = declared_base(tree, own)
    return declared or own, own or declared


def derived_base(text: str) -> str | None:
    """For a page with no base at all (a saved file): `<map host>/paper/<own id>/`, the host
    from the first absolute `/paper/` link of the text form, the id from its arXiv line."""
    own = host = None
    for line in text.splitlines():
        if own is None and "arXiv:" in line and not line.startswith("- "):
            own = next((normalize_id(w) for w in line[line.find("arXiv:") + 6:].split()[:1]), None)
        k = line.rfind("](")
        if host is None and line.startswith("- ") and k >= 0:
            parts = split_url(line[k + 2:].split(")", 1)[0])
            if parts is not None and parts.scheme in LINK_SCHEMES and parts.netloc and "/paper/" in parts.path:
                host = f"{parts.scheme}://{parts.netloc}"
        if own and host:
            return f"{host}/paper/{own}/"
    return None


class LinkResolver:
    """Links resolved against one base URL (`urljoin`, with fast paths for the shapes map
    pages use: absolute http(s), root-relative `/lr/x/`, relative `../2509.02547/`)."""

    def __init__(self, base: str | None) -> None:
        self.base = base
        self.origin = self.directory = None
        parts = split_url(base) if base else None
        if parts is not None and parts.scheme in LINK_SCHEMES and parts.netloc:
            self.origin = f"{parts.scheme}://{parts.netloc}"
            self.directory = parts.path[:parts.path.rfind("/") + 1] or "/"

    def __call__(self, href: str) -> str | None:
        """`href` made absolute; None for a link that is not http(s) (javascript:, ...)."""
        href = href.strip()
        if not href:
            return None
        if href.startswith(("https://", "http://")):
            resolved = href
        elif (self.origin is not None and not href.startswith("//")
              and ":" not in href.split("/", 1)[0] and "?" not in href and "#" not in href):
            path = href if href.startswith("/") else f"{self.directory}{href}"
            resolved = self.origin + (remove_dots(path) if "." in path else path)
        else:
            try:
                resolved = urljoin(self.base, href) if self.base else href
                scheme = urlsplit(resolved).scheme.lower()
            except ValueError:  # e.g. an unbalanced IPv6 bracket
                return None
            if scheme and scheme not in LINK_SCHEMES:
                return None
            if not scheme and ":" in resolved.split("/", 1)[0]:
                return None
        # The text form ends a link at ")" or whitespace: keep those out of the URL.
        if " " in resolved or "(" in resolved or ")" in resolved:
            resolved = resolved.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        return resolved


def remove_dots(path: str) -> str:
    """RFC 3986 5.2.4 for an absolute path: "." and ".." segments resolved."""
    segments = path.split("/")
    out: list[str] = []
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if seg == "..":
            if len(out) > 1:
                out.pop()
            if i == last:
                out.append("")
        elif seg == ".":
            if i == last:
                out.append("")
        else:
            out.append(seg)
    return "/".join(out) if len(out) > 1 or out != [""] else "/"


def absolute_url(href: str, base: str | None) -> str | None:
    return LinkResolver(base)(href)


def split_url(url: str) -> SplitResult | None:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return None


def is_web_url(url: str | None) -> bool:
    """An absolute http(s) URL."""
    parts = split_url(url) if url else None
    return parts is not None and parts.scheme in LINK_SCHEMES and bool(parts.netloc)
