"""`/why PAPER CITER`, rendered: where a citation is known from and since when, and the reasons
mapwatch can see when it does not know it (store/questions/why.py). Pure, within Discord's limits;
titles and a source's failure text are escaped like every text from outside."""

from __future__ import annotations

from mapwatch.bot.rendering.render import COLOR, day, when
from mapwatch.bot.rendering.replies import Embed, Reply
from mapwatch.bot.rendering.text import DESC_MAX, clip, clip_lines, esc, fit_reply, link, plural
from mapwatch.store.questions.types import PROVENANCE_NAMES, PaperRow
from mapwatch.store.questions.why import KnownFrom, Reason, WhyAnswer

SOURCE_NAMES = {k: v for k, v in PROVENANCE_NAMES.items() if k != "map"}  # OpenAlex, Semantic Scholar
TITLE_SHOWN = 120  # a paper's title in the answer's head


def _paper(p: PaperRow | None, paper_id: str) -> str:
    """A paper of the answer: its linked title and id, or its id alone when the map lacks it."""
    if p is None:
        return f"`{paper_id}` (not in the map)"
    return f"{link(p.title, p.url or p.arxiv_url, TITLE_SHOWN)} · `{p.id}`"


def _source(name: str) -> str:
    return SOURCE_NAMES.get(name, esc(name))


def known_line(k: KnownFrom, paper_id: str, citer_id: str) -> str:
    """One provenance: the map's page and snapshot, or what a source said, with when it was first seen."""
    if k.source == "map":
        if k.page is None:
            return f"• **The map**: first seen {when(k.first_seen)} (the page that named it is not recorded)"
        whose = paper_id if k.page.paper_id == paper_id else citer_id
        return (f"• **The map**: `{whose}`'s page, its “{k.section}” list · snapshot {k.page.id} (data through "
                f"{day(k.page.data_through)}), first seen {when(k.first_seen)}")
    first = " (in its first answer about the paper: there before mapwatch asked)" if k.baseline else ""
    return f"• **{_source(k.source)}**: first said so {when(k.first_seen)}{first}"


def reason_line(r: Reason, paper_id: str, citer_id: str) -> str:
    """One reason, as a sentence."""
    p, c, src = f"`{paper_id}`", f"`{citer_id}`", _source(r.source)
    match r.kind:
        case "paper_missing":
            return f"{p} is not in the map (no page, and no page lists it); the sources are asked only of map papers."
        case "paper_no_page":
            return f"{p} has no map page of its own yet: its citers are known only from their own “Builds on” lists."
        case "citers_unlisted":
            return (f"{p}'s page lists {r.shown} of its {plural(r.total or 0, 'citer')} (most cited first, "
                    f"data through {day(r.data_through)}): the citation may be among the "
                    f"{(r.total or 0) - (r.shown or 0)} it does not name.")
        case "citers_all_listed":
            return (f"{p}'s page lists all {r.total} of its citers (data through {day(r.data_through)}), and not "
                    f"{c}: it cited it later, or the map does not count it.")
        case "citer_missing":
            return f"{c} is not in the map: no page of its own, and no page lists it."
        case "citer_no_page":
            return f"{c} has no map page of its own yet (a stub): its “Builds on” list is unknown."
        case "citer_not_arxiv":
            return (f"{c} is not on arXiv, and the map has pages of arXiv papers only: only OpenAlex can name "
                    "this citation (mapwatch asks it for the newest citers of tracked, team and followed papers).")
        case "refs_unlisted":
            return (f"{c}'s page lists {r.shown} of its {plural(r.total or 0, 'reference')} in the map (data through "
                    f"{day(r.data_through)}): it may be among those it does not name.")
        case "refs_all_listed":
            return (f"{c}'s page lists all {r.total} of its references in the map (data through "
                    f"{day(r.data_through)}), and not {p}.")
        case "reversed":
            return f"The other way round is known: {p} cites {c} (`/why {citer_id} {paper_id}`)."
        case "baseline":
            return (f"{src} named it in its first answer about {p} ({when(r.at)}): a citation from before mapwatch"
                    " asked, kept in `source_citations` only.")
        case "held_back":
            if r.detail == "omit":
                return (f"{src} said so on {when(r.at)}, held back: MAPWATCH_SOURCE_CITATIONS=omit keeps what only"
                        " a source says out of the feeds and alerts until a map page names it.")
            return f"{src} said so on {when(r.at)}; it comes in with its next answer about {p}."
        case "sources_off":
            return (f"No source is asked for citers here (MAPWATCH_ENRICH={esc(r.detail)}): only the map's pages"
                    " tell citations.")
        case "discovery_off":
            return "The sources are not asked for citers here (MAPWATCH_SOURCE_CITATIONS=off)."
        case "source_off":
            return f"{src} is not asked here (MAPWATCH_ENRICH={esc(r.detail)})."
        case "fetch_failed":
            return (f"{src}'s last fetch of `{r.paper_id}` failed on {when(r.at)}: "
                    f"{esc(clip(r.detail, 200)) or 'no reason given'}.")
        case "paper_unknown_to_openalex":
            return (f"OpenAlex did not know {p} when asked ({when(r.at)}): it names citers only of papers it has."
                    if r.at else f"OpenAlex has not matched {p} to a work yet: it names citers only of papers it has.")
        case "citer_not_listed":
            return (f"OpenAlex had not listed {c} yet when asked ({when(r.at)}; it lists new arXiv papers days "
                    f"late): asked again from {when(r.until)}.")
        case "recent_asked":
            return (f"OpenAlex was last asked for {p}'s newest citers (the works of the last 3 days) on {when(r.at)}"
                    " and did not name it.")
        case "recent_never":
            return f"OpenAlex is asked for the newest citers of tracked and team papers only: never for {p}."
        case "day_pass_done":
            return (f"OpenAlex's pass over the new works of {day(r.day)}, {c}'s publication day, was read on"
                    f" {when(r.at)} ({plural(r.lag or 0, 'day')} after) and did not name it.")
        case "day_pass_pending":
            return (f"OpenAlex's pass over the new works of {day(r.day)}, {c}'s publication day, is not done yet"
                    " (read the day after, and three days after).")
        case "day_unknown":
            return f"{c}'s publication day is not known here, so no OpenAlex day pass can be pointed at."
        case "citers_asked":
            return (f"Semantic Scholar was last asked for {p}'s citers on {when(r.at)} (first on {when(r.until)})"
                    " and did not name it.")
        case "citers_never_asked":
            return f"Semantic Scholar is asked for the citers of tracked and team papers only: never for {p}."
    return esc(r.kind)


def status_line(a: WhyAnswer) -> str:
    """The answer in one sentence."""
    if a.by_map:
        return f"Known since {when(a.first_seen)}."
    if a.provenance is not None:
        return (f"Known since {when(a.first_seen)}, from {PROVENANCE_NAMES[a.provenance]}: no map page names it "
                "yet.")
    if a.known_from:
        return "A source says so, but mapwatch's citations do not hold it yet."
    return "mapwatch does not know this citation."


def why_card(a: WhyAnswer) -> Reply:
    """The answer as one embed: the two papers, the status, where it is known from, and the
    reasons (as many as fit, then "… and N more")."""
    parts = [f"**Cited:** {_paper(a.paper, a.paper_id)}\n**Citing:** {_paper(a.citer, a.citer_id)}", status_line(a)]
    if a.known_from:
        parts.append("**Known from**\n" + "\n".join(known_line(k, a.paper_id, a.citer_id) for k in a.known_from))
    if a.reasons:
        heading = "**Why no map page names it**" if a.provenance is not None else "**Why it may be missing**"
        room = DESC_MAX - sum(len(x) + 2 for x in parts) - len(heading) - 1
        parts.append(heading + "\n" + clip_lines([f"• {reason_line(r, a.paper_id, a.citer_id)}" for r in a.reasons],
                                                 room))
    asked = [SOURCE_NAMES[s] for s in a.settings.sources if s in SOURCE_NAMES] if a.settings.citations != "off" else []
    footer = (f"Sources asked for citers here: {', '.join(asked) or 'none'} · "
              f"MAPWATCH_SOURCE_CITATIONS={a.settings.citations}")
    title = f"{a.citer_id} cites {a.paper_id}" + ("" if a.first_seen else "?")
    return fit_reply(Reply(embeds=(Embed(title, "\n\n".join(parts), None, (), footer, COLOR),)))
