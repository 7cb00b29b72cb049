"""What a page says, hashed: the content hash stored with each snapshot (docs/database.md,
"Content hash and history rules").

A hash of what the page says, not of its bytes: reformatting a page is not a change.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, fields, is_dataclass
from datetime import date
from typing import cast

from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList

HASH_FORMAT = "mapwatch-page/1"
HASH_PREFIX = "page/1:"  # stored hashes of this format start so; older ones are 64 hex digits


def page_hash(page: MapPage) -> str:
    """A hash of what the page says (not its bytes): reformatting a page is not a change.

    It is the sha256 of a canonical encoding: the page's fields as JSON with sorted keys,
    under a format version (`HASH_FORMAT`). Fields that are None, or equal to their declared
    default, are left out, so a field added to the model with a default changes no hash
    (docs/database.md, "Content hash and history rules"). Stored as `HASH_PREFIX` + the hex digest."""
    text = '{"format":"' + HASH_FORMAT + '","page":' + canonical_json(page) + "}"
    return HASH_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()


def legacy_page_hash(page: MapPage) -> str:
    """The hash of databases written before `HASH_FORMAT`: the sha256 of the page's repr (as
    the model had it then, spelled out in `_legacy_repr`), to recognise an unchanged page."""
    return hashlib.sha256(_legacy_repr(page).encode("utf-8", "surrogatepass")).hexdigest()


_REQUIRED = object()
# Per dataclass: ((JSON key, name, default or _REQUIRED), ...) in sorted key order.
_SPECS: dict[type, tuple[tuple[str, str, object], ...]] = {}
_str = json.encoder.encode_basestring_ascii


def _spec(cls: type) -> tuple[tuple[str, str, object], ...]:
    if not is_dataclass(cls):
        raise TypeError(f"cannot hash a {cls.__name__} in a page")
    spec = []
    for f in fields(cls):
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = _REQUIRED
        spec.append((_str(f.name) + ":", f.name, default))
    _SPECS[cls] = out = tuple(sorted(spec))
    return out


def canonical_json(value: object) -> str:
    """`value` as JSON text, exactly `json.dumps(plain, sort_keys=True, separators=(",", ":"))`
    of its plain form: a dataclass as an object without its None fields and those equal to
    their default, tuples and lists as arrays, dates as ISO text. Written out directly, as
    building the plain form first costs twice as much on a page with long lists."""
    kind = type(value)
    if kind is str:
        return _str(cast(str, value))
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is tuple or kind is list:
        return "[" + ",".join([_listed_json(x) if type(x) is ListedPaper else canonical_json(x)
                               for x in value]) + "]"  # type: ignore[attr-defined]
    if kind is float:
        return _finite(value)  # type: ignore[arg-type]
    if isinstance(value, date):
        return '"' + value.isoformat() + '"'
    return _object_json(value)


def _object_json(value: object) -> str:
    """A dataclass as a JSON object: its fields in sorted key order, those that are None or
    equal to their default left out."""
    kind = type(value)
    parts = []
    for key, name, default in _SPECS.get(kind) or _spec(kind):
        x = getattr(value, name)
        if x is None or (default is not _REQUIRED and x == default):
            continue
        kx = type(x)  # the common kinds inline: this runs for every field of every list item
        parts.append(key + (_str(x) if kx is str else int.__repr__(x) if kx is int else canonical_json(x)))
    return "{" + ",".join(parts) + "}"


def _listed_json(item: ListedPaper) -> str:
    """`canonical_json` of a list item, written out: most of a page's hash is its list items.
    Keys in sorted order (id, position, title, url, year); a year of None is left out. Any
    field of another type than the model's takes the general way."""
    pid, pos, title, url, year = item.id, item.position, item.title, item.url, item.year
    if (type(pid) is not str or type(pos) is not int or type(title) is not str or type(url) is not str
            or (year is not None and type(year) is not int)):
        return _object_json(item)
    head = f'{{"id":{_str(pid)},"position":{pos},"title":{_str(title)},"url":{_str(url)}'
    return head + "}" if year is None else f'{head},"year":{year}}}'


def _finite(x: float) -> str:
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"cannot hash {x!r}")
    return float.__repr__(x)


def _tuple_repr(parts: list[str]) -> str:
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _list_repr(lst: PaperList | None) -> str:
    if lst is None:
        return "None"
    items = _tuple_repr([
        f"ListedPaper(id={it.id!r}, title={it.title!r}, year={it.year!r}, position={it.position!r},"
        f" url={it.url!r})" for it in lst.items])
    return f"PaperList(shown={lst.shown!r}, total={lst.total!r}, items={items})"


def _fast_page_repr(p: MapPage) -> str:
    placements = _tuple_repr([
        f"Placement(breadcrumb={x.breadcrumb!r}, area={x.area!r}, direction={x.direction!r},"
        f" slug={x.slug!r}, url={x.url!r})" for x in p.placements])
    return (
        f"MapPage(id={p.id!r}, title={p.title!r}, arxiv_url={p.arxiv_url!r}, map_url={p.map_url!r},"
        f" cited_by={p.cited_by!r}, data_through={p.data_through!r}, direction={p.direction!r},"
        f" direction_count={p.direction_count!r}, area={p.area!r}, refs_in_map={p.refs_in_map!r},"
        f" refs_total={p.refs_total!r}, first_posted={p.first_posted!r}, placements={placements},"
        f" builds_on={_list_repr(p.builds_on)}, built_on_by={_list_repr(p.built_on_by)},"
        f" abstract={p.abstract!r})")


_legacy_repr = _fast_page_repr
