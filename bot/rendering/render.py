"""Pure rendering: query results -> Reply/Embed data within Discord's limits (bot/rendering/text.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mapwatch.bot.rendering.replies import Embed, Field, Pager, Reply
from mapwatch.bot.rendering.text import (
    FIELD_VALUE_MAX,
    FIELDS_MAX,
    SELF_MARK,
    byline,
    citation_marks,
    citing_context,
    clean,
    clip,
    clip_lines,
    counted,
    esc,
    fit_reply,
    intent_notes,
    link,
    plural,
    safe_link,
    thousands,
    venue_mark,
)
from mapwatch.store.ids import id_kind, is_outside_key, paper_label, paper_link
from mapwatch.store.questions.authors import AuthorView, Person
from mapwatch.store.questions.queries import AreaDirections, DirectionView, PaperPage, PaperView
from mapwatch.store.questions.types import PROVENANCE_NAMES, Byline, CitationRow, PaperRow
from mapwatch.store.subscriptions.tracking import Alert, Track

COLOR = 0x3B82F6


def error(message: str, suggestions: Sequence[str] = ()) -> Reply:
    lines = [clip(clean(message), 1000)]
    if suggestions:
        lines.append("Did you mean:")
        lines += [f"• {esc(s)}" for s in suggestions[:5]]
    return fit_reply(Reply(content="\n".join(lines), ephemeral=True))


def to_text(r: Reply, saved: Mapping[str, str] | None = None) -> str:
    """A reply as plain text (for `mapwatch ask` and logs): embeds as headed blocks. `saved`: where
    each attachment (by its file name) was written, said in its place."""
    parts: list[str] = []
    if r.content:
        parts.append(r.content)
    for e in r.embeds:
        block = []
        if e.title:
            block.append(f"== {e.title} ==" + (f"  <{e.url}>" if e.url else ""))
        if e.description:
            block.append(e.description)
        for f in e.fields:
            block.append(f"-- {f.name}\n{f.value}")
        if e.footer:
            block.append(f"({e.footer})")
        parts.append("\n".join(block))
    for attached in r.files:
        where = (saved or {}).get(attached.filename)
        parts.append(f"[attachment written to {where}, {len(attached.data):,} bytes]" if where else
                     f"[attachment: {attached.filename}, {len(attached.data):,} bytes]")
    if r.pager and r.pager.pages > 1:
        parts.append(f"[page {r.pager.page + 1} of {r.pager.pages}; in Discord, buttons turn the pages;"
                     f" here add page:{r.pager.page + 2}]" if r.pager.page + 1 < r.pager.pages
                     else f"[page {r.pager.page + 1} of {r.pager.pages}]")
    if r.ephemeral:
        parts.append("(only you can see this)")
    return "\n\n".join(parts)


# --- Views ------------------------------------------------------------------------------

def day(iso: str | None) -> str:
    """ISO date or timestamp -> '14 Oct 2026' (pure; no locale)."""
    if not iso:
        return "-"
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    try:
        y, m, d = int(iso[0:4]), int(iso[5:7]), int(iso[8:10])
        return f"{d} {months[m - 1]} {y}"
    except (ValueError, IndexError):
        return clean(iso)[:32]


def when(iso: str | None) -> str:
    """ISO timestamp -> '29 Nov 2026 18:51 UTC'."""
    if not iso:
        return "never"
    if len(iso) >= 16 and iso[10] == "T":
        return f"{day(iso)} {iso[11:16]} UTC"
    return day(iso)


def paper_line(p: PaperRow, n: int | None = None, *, dirs: bool = True) -> str:
    """A paper in a list: its linked title, year, id, count and directions; a self-citation
    marked, and its authors on a second line, where they are known."""
    year = f" ({p.year})" if p.year else ""
    cited = f" · cited by {p.cited_by}" if p.cited_by is not None else ""
    where = ""
    if dirs and isinstance(p, CitationRow) and p.directions:
        where = " · " + ", ".join(esc(d) for d in p.directions[:2])
    prefix = f"{n}. " if n is not None else "• "
    mark = f" · {SELF_MARK}" if isinstance(p, CitationRow) and p.self_citation else ""
    if isinstance(p, CitationRow) and p.provenance != "map":  # no map page names it (yet)
        mark += f" · via {PROVENANCE_NAMES[p.provenance]}"
    if isinstance(p, CitationRow) and p.context is not None and n is not None:  # a list: its intents, no quote
        mark += citation_marks(p.context)
    where = venue_mark(p.byline) + where  # a citer beyond arXiv, named with its venue
    by = byline(p.byline)
    return f"{prefix}{link(p.title, p.url or p.arxiv_url)}{year} · `{p.id}`{cited}{where}{mark}" + (
        f"\n  {by}" if by else "")


AUTHOR_LINE_MAX = 200


def author_lines(b: Byline) -> list[str]:
    """A card's authors, one a line with their institutions ("• Ashish Vaswani (Google Brain)")."""
    lines = []
    for a in b.authors:
        inst = f" ({'; '.join(a.institutions[:2])})" if a.institutions else ""
        lines.append(clip(f"• {esc(a.name + inst)}", AUTHOR_LINE_MAX))
    return lines


def authors_field(b: Byline) -> Field:
    where = [f"Published in {esc(b.venue)}"] if b.venue else [f"Journal ref: {esc(b.journal_ref)}"] if b.journal_ref \
        else []
    listed = clip_lines(author_lines(b), FIELD_VALUE_MAX - sum(len(w) + 1 for w in where))
    return Field(f"Authors ({len(b.authors)})", "\n".join([listed, *where]))


def feed_url(base_url: str, slug: str) -> str:
    return f"{base_url}/feeds/{slug}.atom"


def paper_feed_url(base_url: str, paper_id: str) -> str:
    return f"{base_url}/feeds/papers/{paper_id}.atom"


def card_head(v: PaperView) -> list[str]:
    """A card's first lines: its arXiv link and first posting, and for a paper with a page its
    stated cited-by count (the full card and the message menu's short one alike)."""
    p = v.paper
    arxiv = safe_link(p.arxiv_url) or safe_link(paper_link(p.id)) or ""
    head = [f"{id_kind(p.id)} [{esc(p.id)}]({arxiv})" + (f" · first posted {day(v.first_posted)}" if v.first_posted
                                                          else "")]
    if is_outside_key(p.id):
        head.append("Not on arXiv, so not in the map: a citer OpenAlex names")
    if p.has_page:
        count = p.cited_by if p.cited_by is not None else "?"
        head.append(f"Cited by **{count}** {'paper' if count == 1 else 'papers'} in the map"
                    f" (data through {day(v.data_through)})")
    return head


def paper_card(v: PaperView, base_url: str) -> Reply:
    p = v.paper
    head = card_head(v)
    if p.has_page:
        if v.refs_in_map is not None:
            total = plural(v.refs_total, "reference") if v.refs_total is not None else "? references"
            head.append(f"Builds on **{v.refs_in_map}** of its {total} that {'is' if v.refs_in_map == 1 else 'are'}"
                        " in the map")
    else:
        head.append(f"No map page of its own yet: known from other pages' lists ({plural(v.citers_stored, 'citer')},"
                    f" {plural(v.refs_stored, 'reference')} known).")
    desc = "\n".join(head)
    if v.abstract:
        desc += "\n\n" + clip(esc(v.abstract), 900)
    fields = [authors_field(p.byline)] if p.byline and p.byline.authors else []
    if v.directions:
        fields.append(Field("Directions", clip_lines([f"• {link(d.breadcrumb, d.url)}" for d in v.directions], 1024)))
    if v.top_citers:
        fields.append(Field(f"Top citers ({len(v.top_citers)} of {v.citers_stored} known)",
                            clip_lines([paper_line(c, dirs=False) for c in v.top_citers], 1024)))
    if v.top_refs:
        fields.append(Field(f"Top references ({len(v.top_refs)} of {v.refs_stored} known)",
                            clip_lines([paper_line(c, dirs=False) for c in v.top_refs], 1024)))
    if base_url:
        fields.append(Field("Feed", f"New citers: {paper_feed_url(base_url, p.id)}"))
    counts = [s.cited_by for s in v.snapshots if s.cited_by is not None]
    footer = plural(len(v.snapshots), "stored snapshot") + (
        f" · cited by {counts[0]} → {counts[-1]}" if len(counts) > 1 and counts[0] != counts[-1] else "")
    return fit_reply(Reply(embeds=(Embed(esc(p.title), desc, p.url, tuple(fields), footer, COLOR),)))


def paper_list(title: str, url: str | None, result: PaperPage, *, subtitle: str, empty: str, pager: Pager) -> Reply:
    if not result.items:
        return fit_reply(Reply(content=empty if result.offset == 0 else "No more results.", ephemeral=True))
    lines = [paper_line(p, result.offset + i + 1) for i, p in enumerate(result.items)]
    footer = f"Page {pager.page + 1} of {pager.pages} · {result.total} in all"
    embed = Embed(esc(title), esc(subtitle) + "\n\n" + clip_lines(lines, 3500), url, (), footer, COLOR)
    return fit_reply(Reply(embeds=(embed,), pager=pager if pager.pages > 1 else None))


def direction_card(v: DirectionView, base_url: str) -> Reply:
    d = v.direction
    desc = f"{esc(d.breadcrumb)}\n{plural(d.papers, 'paper')} placed here."
    fields = [Field("Most cited papers", clip_lines([paper_line(p, i + 1, dirs=False)
                                                     for i, p in enumerate(v.top_papers)], 1024) or "none")]
    if v.newest_citers:
        fields.append(Field("Newest citing papers", clip_lines([paper_line(p) for p in v.newest_citers], 1024)))
    if base_url:
        fields.append(Field("Feed", feed_url(base_url, d.slug)))
    return fit_reply(Reply(embeds=(Embed(esc(d.name), desc, d.url, tuple(fields), f"slug: {d.slug}", COLOR),)))


def directions_list(areas: Sequence[AreaDirections]) -> Reply:
    if not areas:
        return Reply(content="No directions stored yet: run `mapwatch ingest` or `mapwatch refresh`.", ephemeral=True)
    total = sum(len(a.directions) for a in areas)
    fields = []
    for a in areas[:FIELDS_MAX]:
        lines = [f"• {link(d.name, d.url)} · {plural(d.papers, 'paper')} · `{clean(d.slug)}`" for d in a.directions]
        fields.append(Field(f"{clean(a.area)} ({len(a.directions)})", clip_lines(lines, FIELD_VALUE_MAX)))
    more = f" · {plural(len(areas) - FIELDS_MAX, 'more area')} not shown" if len(areas) > FIELDS_MAX else ""
    return fit_reply(Reply(embeds=(Embed("Directions", f"{plural(total, 'direction')} in {plural(len(areas), 'area')}.",
                                         None,
                                         tuple(fields), "Use /direction for one of them" + more, COLOR),)))


def tracked_lines(tracks: Sequence[Track]) -> str:
    """/tracked: one line per tracked paper ("" for none)."""
    lines = []
    for t in tracks:
        where = "DM" if t.guild_id is None else f"<#{t.channel_id}>"
        last = day(t.last_alert_at) if t.last_alert_at else "no alert yet"
        how = t.mode + (f" · mentions role `{int(t.role_id)}`" if t.role_id is not None else "")
        how += f" · intent:{t.intent}" if t.intent else ""
        line = (f"• {esc(clip(t.paper_title, 120))} · `{t.paper_id}` · {where} · {how} · since {day(t.created_at)}"
                f" · last alert: {last}")
        if t.disabled_reason:
            line += f" · **disabled**: {clean(t.disabled_reason)}"
        if t.last_failure:
            line += f" · last failed delivery: {clean(clip(t.last_failure, 200))}"
        lines.append(line)
    return clip_lines(lines, 4000) if lines else ""


def tracks_count(papers: int, people: int, teams: int) -> str:
    """How many tracks, of each kind there is: "1 paper", "2 people", "3 tracks: 1 paper, 1 person, 1 team"."""
    kinds = [plural(n, one, many) for n, one, many in
             ((papers, "paper", ""), (people, "person", "people"), (teams, "team", "")) if n]
    total = papers + people + teams
    return f"{plural(total, 'track')}: {', '.join(kinds)}" if len(kinds) > 1 else "".join(kinds) + " tracked"


def alert(a: Alert) -> Reply:
    """One tracked paper's new citers since the last alert."""
    p = a.paper
    n_new = len(a.new_citers) + a.more
    lines = ["\n".join([paper_line(c), *citing_context(c.context)]) for c in a.new_citers]
    desc = clip_lines(lines, 3200, more=a.more) if lines else ""
    notes = []
    if a.new_count is not None and a.old_count is not None:
        notes.append(f"Cited by {a.old_count} → {a.new_count}.")
    if a.unlisted:
        notes.append(f"{a.unlisted} of the gained citers are not listed by name on the map page.")
    if a.hidden:
        notes.append(f"{a.hidden} self-{'citation' if a.hidden == 1 else 'citations'} left out (self:hide).")
    notes += intent_notes(a.track.intent, a.other_intent, a.unclassified)
    if notes:
        desc = (desc + "\n\n" if desc else "") + " ".join(notes)
    gained = n_new or (a.new_count - a.old_count if a.new_count is not None and a.old_count is not None else 0)
    noun = "citer" if gained == 1 else "citers"
    suffix = f": {gained} new {noun}"
    title = clip(esc(p.title), 256 - len(suffix)) + suffix  # a long title never hides the news
    embed = Embed(title, desc, safe_link(p.url) or safe_link(p.arxiv_url), (),
                  f"{paper_label(p.id)} · /untrack to stop these alerts", COLOR)
    return fit_reply(Reply(embeds=(embed,)))


# --- People -----------------------------------------------------------------------------

def person_ids(p: Person) -> str:
    """How to name exactly this person to /author: their OpenAlex id and ORCID, or, known by
    name only, `name:<name>`."""
    ids = [f"`{clean(x)}`" for x in (p.author_id, p.orcid) if x]
    return " · ".join(ids) if ids else f"`name:{clean(p.name)}` (no id known)"


def people_choice(asked: str, people: Sequence[Person], again: str = "/author") -> Reply:
    """Several people fit a name: each with the ids that pick them, never a guess; `again`: the
    command to run again with one of them."""
    lines = [f"• **{esc(p.name)}** · {person_ids(p)} · {counted(p.papers, 'paper', p.papers_capped)}"
             + (f" · {esc(clip(', '.join(p.institutions[:2]), 120))}" if p.institutions else "") for p in people]
    head = (f"{len(people)} people fit “{esc(clip(' '.join(asked.split()), 100))}”. Run {again} again with one"
            " of their ids:")
    return fit_reply(Reply(embeds=(Embed("Which author?", head + "\n" + clip_lines(lines, 3800), None, (),
                                         "People are told apart by OpenAlex id and ORCID", COLOR),),
                           ephemeral=True))


def author_card(v: AuthorView) -> Reply:
    """A person's papers in the map, newest first, and the papers citing them, newest first."""
    p = v.person
    desc = [person_ids(p)]
    if p.institutions:
        desc.append(esc(clip("; ".join(p.institutions), 300)))
    if v.capped:  # the counts stopped at the first 5,000 papers: never stated as the whole
        desc.append(f"Named on at least {v.total_papers:,} papers of the map (counted up to there); at least "
                    f"{thousands(v.total_citers, 'citation')} of them known.")
    else:
        desc.append(f"Named on {plural(v.total_papers, 'paper')} of the map; {plural(v.total_citers, 'citation')} of"
                    " them known.")
    of_papers, of_citers = (f"{v.total_papers:,}+", f"{v.total_citers:,}+") if v.capped else (
        str(v.total_papers), str(v.total_citers))
    fields = []
    if v.papers:
        fields.append(Field(f"Papers, newest first ({len(v.papers)} of {of_papers})",
                            clip_lines([paper_line(x, dirs=False) for x in v.papers], FIELD_VALUE_MAX,
                                       more=v.total_papers - len(v.papers), at_least=v.capped)))
    if v.citers:
        lines = [paper_line(c.citer, dirs=False) + "\n  cites "
                 + link(c.cited.title, c.cited.url or c.cited.arxiv_url, 80) for c in v.citers]
        fields.append(Field(f"Newest citers ({len(v.citers)} of {of_citers})",
                            clip_lines(lines, FIELD_VALUE_MAX, more=v.total_citers - len(v.citers),
                                       at_least=v.capped)))
    return fit_reply(Reply(embeds=(Embed(esc(clip(p.name, 200)), "\n".join(desc), None, tuple(fields),
                                         f"{SELF_MARK}: the citing paper shares an author with the cited one",
                                         COLOR),)))
