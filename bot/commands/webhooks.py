"""/webhook: a paper's alerts or a direction's follows delivered to a Discord or Slack webhook
(store.subscriptions.webhooks). Answers only to the user; never repeats a URL."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.commands.directions import DIRECTION_HELP
from mapwatch.bot.commands.papers import PAPER_HELP
from mapwatch.bot.rendering import text
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.errors import BadOption, NotAllowed
from mapwatch.store.questions import queries
from mapwatch.store.subscriptions import webhooks

REFUSAL = "You need the Manage Webhooks permission to add or remove this server's webhooks."
SLACK_ENV = "MAPWATCH_SLACK_WEBHOOKS"


def target_of(db: Database, paper: str | None, direction: str | None) -> tuple[str, str, str]:
    """(target_kind, target, name shown) from exactly one of `paper` and `direction`."""
    if bool(paper and paper.strip()) == bool(direction and direction.strip()):
        raise BadOption("Give either a paper or a direction.")
    if paper and paper.strip():
        p = queries.resolve_paper(db, paper)
        return "paper", p.id, f"the alerts of {text.esc(text.clip(p.title, 150))} (`{p.id}`)"
    d = queries.resolve_direction(db, direction or "")
    return "direction", d.slug, f"the new citing papers of **{text.esc(text.clip(d.name, 150))}**"


def listing(hooks: list[webhooks.Webhook]) -> str:
    if not hooks:
        return "No webhooks in this server. `/webhook url:<url> paper:<paper>` (or `direction:`) adds one."
    lines = [f"`{h.id}` · {h.kind} · {text.esc(h.url_hint)} · {h.target_kind} `{text.esc(h.target)}`"
             + (f" · disabled: {text.esc(h.disabled_reason)}" if h.disabled_reason else "")
             + (f" · last failure: {text.esc(h.last_failure)}" if h.last_failure else "")
             + (f" · no answer since {h.no_answer_since}" if h.no_answer_since and not h.disabled_reason else "")
             for h in hooks]
    return "Webhooks of this server:\n" + "\n".join(lines) + "\n`/webhook remove:<id>` removes one."


def subject_target(db: Database, ctx: Ctx, author: str | None, team: str | None) -> tuple[str, str, str]:
    """(target_kind, target, name shown) of a person's or a team's alerts."""
    from mapwatch.store.questions import teams as people

    if author and author.strip():
        p = people.resolve_person(db, author)
        return "author", p.key, f"the alerts of **{text.esc(text.clip(p.name, 100))}**'s papers"
    found = people.find_team(db, ctx.guild_id or 0, team or "")
    if found is None:
        raise BadOption("No such team in this server (/team list).")
    return "team", found.slug, f"the alerts of team **{text.esc(text.clip(found.name, 100))}**"


def webhook_core(db: Database, ctx: Ctx, *, url: str | None = None, paper: str | None = None,
                 direction: str | None = None, remove: int | None = None, author: str | None = None,
                 team: str | None = None) -> Reply:
    if ctx.guild_id is None:
        raise BadOption("Webhooks are added in a server (or with `mapwatch webhook add` on the host).")
    if not ctx.can_manage_webhooks:
        raise NotAllowed(REFUSAL)
    if remove is not None:
        gone = webhooks.remove_webhook(db, int(remove), guild_id=ctx.guild_id)
        return Reply(content=f"Webhook `{remove}` removed." if gone else f"No webhook `{remove}` in this server.",
                     ephemeral=True)
    if not url:
        return text.fit_reply(Reply(content=listing(webhooks.list_webhooks(db, guild_id=ctx.guild_id)),
                                    ephemeral=True))
    hook = webhooks.parse_url(url, extra_bases=ctx.webhook_bases)
    if (author or team) and (paper or direction or (author and team)):
        raise BadOption("Give one of a paper, a direction, an author or a team.")
    kind, target, shown = subject_target(db, ctx, author, team) if author or team else target_of(db, paper, direction)
    w, new = webhooks.add_webhook(db, kind, target, hook, guild_id=ctx.guild_id, created_by=ctx.user_id, now=ctx.now)
    said = (f"Webhook `{w.id}` ({hook.kind}, {text.esc(w.url_hint)}) now receives {shown}, from now on."
            if new else f"Webhook `{w.id}` ({text.esc(w.url_hint)}) already receives {shown}.")
    return Reply(content=text.clip(said, text.CONTENT_MAX), ephemeral=True)


COMMANDS = [
    Command("webhook", "Send a paper's alerts or a direction's follows to a Discord or Slack webhook",
            (Opt("url", "a Discord webhook URL (?thread_id= for a forum post) or a Slack incoming webhook URL",
                 required=False),
             Opt("paper", PAPER_HELP, "paper", required=False),
             Opt("direction", DIRECTION_HELP, "direction", required=False),
             Opt("remove", "the id of a webhook to remove (no url: the list)", "int", required=False, min_value=1),
             Opt("author", "or a person's alerts: an ORCID, an OpenAlex author id or a name", required=False),
             Opt("team", "or one of this server's teams' alerts", required=False)),
            webhook_core, refusal=REFUSAL, webhooks=True),
]
