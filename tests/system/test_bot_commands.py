"""The command cores and rendering, without Discord; the command tree; `mapwatch ask`."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import discord
import pytest

from mapwatch.bot.commands import commands, run_core
from mapwatch.bot.rendering import render, text
from mapwatch.bot.rendering.replies import Embed, Field, Reply
from mapwatch.store.database.ingest import ingest_paths
from tests.bot_helpers import ctx
from tests.conftest import seed_page, write_page

ROOT = Path(__file__).resolve().parents[2]
BOT_DOCS = (ROOT / "docs" / "bot.md").read_text(encoding="utf-8")  # the Discord bot page


def assert_within_limits(r: Reply) -> None:
    assert len(r.content) <= 2000 and len(r.embeds) <= 10
    total = 0
    for e in r.embeds:
        assert len(e.title) <= 256 and len(e.description) <= 4096 and len(e.footer) <= 2048
        assert len(e.fields) <= 25
        for f in e.fields:
            assert 0 < len(f.name) <= 256 and 0 < len(f.value) <= 1024
        total += text.embed_size(e)
    assert total <= 6000
    assert r.content or r.embeds


def text_of(r: Reply) -> str:
    return render.to_text(r)


def ask(db, name: str, c=None, /, **options):
    reply, ok = run_core(db, c or ctx(), name, options)
    assert_within_limits(reply)
    return reply, ok


def test_paper_card(seeded) -> None:
    r, ok = ask(seeded, "paper", paper="2412.10400")
    assert ok and not r.ephemeral
    e = r.embeds[0]
    assert e.title == "Reinforcement Learning Enhanced LLMs: A Survey"
    assert e.url == "https://mlsanity.com/paper/2412.10400/"
    assert "Cited by **71**" in e.description and "14 Oct 2026" in e.description
    assert "Builds on **78** of its 110" in e.description and "5 Dec 2024" in e.description
    names = [f.name for f in e.fields]
    assert names[0] == "Directions" and names[1].startswith("Top citers") and names[2].startswith("Top references")
    assert "http://feeds.example/feeds/papers/2412.10400.atom" in text_of(r)


def test_unknown_paper_is_ephemeral_with_suggestions(seeded) -> None:
    r, ok = ask(seeded, "paper", paper="reinforcement learning survey of things")
    assert not ok and r.ephemeral and "No paper matches" in r.content and "Did you mean" in r.content


def test_citers_pages(seeded) -> None:
    r, ok = ask(seeded, "citers", paper="2412.10400")
    assert ok and r.pager and r.pager.pages == 3 and r.pager.page == 0
    assert r.pager.args == {"paper": "2412.10400", "sort": "cited"}
    assert "1. " in r.embeds[0].description and "Page 1 of 3" in r.embeds[0].footer
    r2, _ = ask(seeded, "citers", paper="2412.10400", sort="newest", page=2)
    assert "21. " in r2.embeds[0].description and r2.pager.page == 2
    r3, ok3 = ask(seeded, "citers", paper="2412.10400", direction="Reinforcement learning for reasoning")
    assert ok3 and r3.pager is None and "2507.04136" in r3.embeds[0].description
    bad, ok4 = ask(seeded, "citers", paper="2412.10400", sort="oldest")
    assert not ok4 and bad.ephemeral


def test_refs_search_directions_feed_stats(seeded) -> None:
    r, ok = ask(seeded, "refs", paper="2507.04136")
    assert ok and r.pager and r.pager.pages == 4
    r, ok = ask(seeded, "search", query="reward model")
    assert ok and "2305.18290" in r.embeds[0].description
    r, ok = ask(seeded, "search", query="zzzzqqq")
    assert not ok or r.ephemeral
    r, ok = ask(seeded, "direction", direction="lr/reinforcement-learning-for-reasoning")
    assert ok and r.embeds[0].title == "Reinforcement learning for reasoning"
    assert "http://feeds.example/feeds/lr/reinforcement-learning-for-reasoning.atom" in text_of(r)
    r, ok = ask(seeded, "directions")
    assert [f.name for f in r.embeds[0].fields] == ["LLM alignment (1)", "LLM reasoning (1)"]
    r, ok = ask(seeded, "feed")
    assert "http://feeds.example/feeds.opml" in text_of(r)
    r, ok = ask(seeded, "feed", direction="reward modeling and rlhf")
    assert "feeds/alignment/reward-modeling-and-rlhf.atom" in text_of(r)
    r, ok = ask(seeded, "stats")
    assert "99 (2 with pages)" in text_of(r) and "14 Oct 2026" in text_of(r)


def test_track_needs_manage_channels_and_servers_are_isolated(seeded) -> None:
    r, ok = ask(seeded, "track", ctx(manage=False), paper="2412.10400")
    assert not ok and r.ephemeral and "Manage Channels" in r.content
    r, ok = ask(seeded, "track", paper="2412.10400")
    assert ok and not r.ephemeral and "Tracking" in r.content
    r, ok = ask(seeded, "track", paper="2412.10400")
    assert r.ephemeral and "Already" in r.content
    r, _ = ask(seeded, "tracked")
    assert "2412.10400" in text_of(r) and "<#222>" in text_of(r)
    other, _ = ask(seeded, "tracked", ctx(guild=999))
    assert "2412.10400" not in text_of(other) and other.ephemeral
    r, ok = ask(seeded, "untrack", ctx(guild=999), paper="2412.10400")
    assert r.ephemeral and "not tracked" in r.content
    r, ok = ask(seeded, "untrack", paper="2412.10400")
    assert ok and "Stopped" in r.content


def test_dm_tracks_for_the_user(seeded) -> None:
    dm = ctx(guild=None, channel=77, user=5, manage=False)
    r, ok = ask(seeded, "track", dm, paper="2507.04136")
    assert ok and "your DMs" in r.content
    r, _ = ask(seeded, "tracked", dm)
    assert "2507.04136" in text_of(r) and "DM" in text_of(r)
    r, _ = ask(seeded, "tracked", ctx(guild=None, channel=78, user=6))
    assert "2507.04136" not in text_of(r)


HOSTILE = ['"', "' OR 1=1; DROP TABLE papers; --", 'title:x NEAR(a b) AND NOT "', "*", "x" * 6000,
           "\x00\x07\x1b[31m bell", "強化学習 🤖 ÅÉ\u202e", "@everyone @here <@123> <@&456>", "**[x](http://e)**",
           " ", "%_%", "../../etc/passwd", "https://arxiv.org/abs/", "2412.10400" * 600]


@pytest.mark.parametrize("value", HOSTILE)
def test_every_command_answers_cleanly_whatever_the_options(seeded, value: str) -> None:
    for name, cmd in commands().items():
        opts = {o.name: value for o in cmd.options}
        reply, _ok = ask(seeded, name, **opts)
        out = text_of(reply)
        assert "Traceback" not in out
        assert "@everyone" not in out and "@here" not in out and not re.search(r"<@&?\d", out)
    assert seeded["papers"].count == 99


def test_titles_with_markdown_and_mentions_are_defused(db, clock, tmp_path) -> None:
    page = seed_page("2412.10400")
    evil = "**Bold** [click](http://evil.example) @everyone <@123> ||spoiler|| " + "Long " * 80
    write_page(tmp_path / "evil", dataclasses.replace(page, title=evil))
    ingest_paths(db, [tmp_path / "evil"], clock=clock)
    for name, opts in [("paper", {"paper": "2412.10400"}), ("search", {"query": "Bold click"}),
                       ("citers", {"paper": "2507.04136"}), ("track", {"paper": "2412.10400"}), ("tracked", {})]:
        reply, _ = ask(db, name, **opts)
        out = text_of(reply)
        assert "@everyone" not in out and "<@123>" not in out, name
        assert "[click](http://evil.example)" not in out, name


def test_render_truncates_gracefully() -> None:
    e = Embed("t" * 300, "d" * 5000, "https://x.example", tuple(Field(f"f{i}", "v" * 2000) for i in range(30)),
              "f" * 3000)
    r = text.fit_reply(Reply(content="c" * 3000, embeds=(e, e)))
    assert_within_limits(r)
    assert r.embeds[0].title.endswith("…") and r.content.endswith("…")
    lines = [f"line {i}" for i in range(500)]
    out = text.clip_lines(lines, 200)
    assert len(out) <= 200 and out.endswith("more")
    assert text.clip_lines(["a", "b"], 100, more=5).endswith("… and 5 more")


def test_alert_render(db, clock, make_older_seeds) -> None:
    from mapwatch.store.pages.files import SEEDS_DIR
    from mapwatch.store.subscriptions import tracking

    ingest_paths(db, [make_older_seeds(12)], clock=clock)
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3, now=clock())
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    a = tracking.pending_alerts(db)[0]
    r = render.alert(a)
    assert_within_limits(r)
    e = r.embeds[0]
    assert e.title.endswith("12 new citers") and "… and 2 more" in e.description
    assert "Cited by 59 → 71" in e.description and e.url == "https://mlsanity.com/paper/2412.10400/"


# -- the command tree ---------------------------------------------------------------------

OPTION_TYPES = {"paper": 3, "direction": 3, "text": 3, "choice": 3, "int": 4, "role": 8,
                "channel": 7}  # Discord's option types


def readme_row(name: str) -> str:
    """The Commands table row of /name, on the Discord bot page of the docs (docs/bot.md)."""
    rows = [line for line in BOT_DOCS.splitlines()
            if line.startswith((f"| `/{name}` |", f"| `/{name} <", f"| `/{name} ["))]
    assert len(rows) == 1, f"/{name} is not documented in the command table of docs/bot.md"
    return rows[0]


def test_meta_every_command_is_named_described_documented_and_matches_its_spec() -> None:
    from mapwatch.bot.client import build_tree_for_inspection

    tree = build_tree_for_inspection()
    specs = {name: spec for name, spec in commands().items() if spec.slash}
    menus = {spec.menu: spec for spec in commands().values() if not spec.slash}
    # A group's subcommands (`/team add`) stand for the specs named "<group> <sub>".
    every = [s for c in tree.get_commands() for s in (c.commands if isinstance(c, discord.app_commands.Group)
                                                       else [c])]
    names = [c.qualified_name for c in every if c.name not in menus]
    assert len(names) == len(set(names)) == len(specs)
    # Each message context menu: declared once, under its name, and documented in the command table.
    assert set(menus) == {c.name for c in tree.get_commands(type=discord.AppCommandType.message)} == {
        "Papers in this message"}
    for menu in menus:
        assert len([line for line in BOT_DOCS.splitlines() if line.startswith(f"| {menu} (")]) == 1, menu
    assert set(names) == set(specs) == {"paper", "citers", "refs", "search", "direction", "directions", "track",
                                        "untrack", "tracked", "feed", "stats", "follow", "unfollow",
                                        "digest-time", "digest-preview", "related", "path", "rising", "graph",
                                        "webhook", "author", "team add", "team remove", "team list", "export", "why",
                                        "team stats"}
    for c in every:
        if c.name in menus:
            continue
        spec = specs[c.qualified_name]
        top = c.root_parent or c
        payload = {**top.to_dict(tree), **c.to_dict(tree)}  # what `sync` sends Discord (a group's, for a subcommand)
        assert c.description and len(c.description) <= 100
        assert payload["description"] == c.description == spec.description
        options = payload.get("options", [])
        assert [o["name"] for o in options] == [o.name for o in spec.options], c.name  # as Discord shows them
        for p, o, sent in zip(c.parameters, spec.options, options, strict=True):
            assert p.required == sent.get("required", False) == o.required, (c.name, o.name)
            assert sent["description"] == p.description == o.description and 0 < len(o.description) <= 100
            assert sent["type"] == OPTION_TYPES[o.kind], (c.name, o.name)
            assert [(ch["name"], ch["value"]) for ch in sent.get("choices", [])] == list(o.named_choices())
            assert (sent.get("min_value"), sent.get("max_value")) == (o.min_value, o.max_value), (c.name, o.name)
            assert sent.get("autocomplete", False) == (o.kind in ("paper", "direction") or bool(o.autocomplete)), (
                c.name, o.name)
        assert (c.default_permissions is not None and c.default_permissions.manage_channels) == spec.manage
        assert (payload["default_member_permissions"] is not None) == (spec.manage or spec.webhooks)
        if spec.webhooks:  # Manage Webhooks, in a server only, enforced by a check
            assert c.default_permissions is not None and c.default_permissions.manage_webhooks and c.checks
            assert payload["contexts"] == [0] and payload["integration_types"] == [0]
        if spec.manage:
            assert c.checks, f"/{c.name} must enforce Manage Channels with a check"
        # docs/bot.md documents the same options, required ones as <name> and optional ones as [name].
        usage = " ".join([f"/{c.qualified_name}"] + [f"<{o.name}>" if o.required else f"[{o.name}]"
                                                     for o in spec.options])
        row = readme_row(c.qualified_name)
        assert row.startswith(f"| `{usage}` |"), (row[:80], usage)
        assert ("needs Manage Channels" in row or "as for `/track`" in row) == spec.manage, c.name
        for o in spec.options:
            if o.kind == "choice" and o.name != "mode":  # `mode` is described once, on /track
                assert re.search(rf"`[^`]*\b{o.choices[0]}\b[^`]*`", row), (c.name, o.name)
    track_row = readme_row("track")
    assert all(f"`{m}`" in track_row for m in ("instant", "daily", "weekly"))


# -- mapwatch ask ---------------------------------------------------------------------------

def run_cli(*args: str, db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mapwatch", *args, "--db", str(db)], capture_output=True,
                          text=True, timeout=30, cwd=ROOT)


def test_ask_prints_answers(seeded, db_path) -> None:
    p = run_cli("ask", "/paper 2412.10400", db=db_path)
    assert p.returncode == 0 and "== Reinforcement Learning Enhanced LLMs: A Survey ==" in p.stdout
    p = run_cli("ask", "/citers paper:2412.10400 sort:newest", db=db_path)
    assert p.returncode == 0 and "page 1 of 3" in p.stdout and "page:2" in p.stdout
    p = run_cli("ask", "/search reward model page:1", db=db_path)
    assert p.returncode == 0 and "2305.18290" in p.stdout
    p = run_cli("ask", "/paper no such paper at all", db=db_path)
    assert p.returncode == 1 and "No paper matches" in p.stdout and "Traceback" not in p.stderr
    p = run_cli("ask", "/nope", db=db_path)
    assert p.returncode == 2 and "unknown command" in p.stderr
    p = run_cli("ask", "/track 2412.10400", db=db_path)
    assert p.returncode == 2 and "--channel" in p.stderr
    p = run_cli("ask", "--guild", "1", "--channel", "2", "/track 2412.10400", db=db_path)
    assert p.returncode == 0 and "Tracking" in p.stdout
    p = run_cli("ask", "/why 2412.10400 2506.12217", db=db_path)
    assert p.returncode == 0 and "== 2506.12217 cites 2412.10400 ==" in p.stdout and "“Built on by” list" in p.stdout
    p = run_cli("ask", "/why 2412.10400 https://arxiv.org/abs/2610.04321v2", db=db_path)  # the tests' sources: off
    assert p.returncode == 0 and "lists 30 of its 71 citers" in p.stdout and "MAPWATCH_ENRICH=off" in p.stdout
    p = run_cli("ask", "/why 2412.10400 2412.1040", db=db_path)
    assert p.returncode == 1 and "cannot be an arXiv id" in p.stdout and "Traceback" not in p.stderr


def test_parse_slash() -> None:
    from mapwatch.cli.ask import AskError, parse_slash

    assert parse_slash("/paper Reinforcement Learning Enhanced") == (
        "paper", {"paper": "Reinforcement Learning Enhanced"})
    assert parse_slash('/citers 2412.10400 "Reward modeling and RLHF" newest') == (
        "citers", {"paper": "2412.10400", "direction": "Reward modeling and RLHF", "sort": "newest"})
    assert parse_slash("/citers sort:newest paper:2412.10400 page:2") == (
        "citers", {"sort": "newest", "paper": "2412.10400", "page": 1})
    assert parse_slash("citers 2412.10400 direction:Reward modeling and RLHF")[1]["direction"] == \
        "Reward modeling and RLHF"
    for bad in ["", "/paper", "/citers 2412.10400 sort:oldest", "/stats extra", "/refs x page:zero"]:
        with pytest.raises(AskError):
            parse_slash(bad)


def test_ask_does_not_load_discord(seeded, db_path) -> None:
    code = ("import sys; from mapwatch.cli import main; rc = main(['ask', '--db', sys.argv[1], '/stats']);"
            "assert rc == 0, rc; assert 'discord' not in sys.modules; print('ok')")
    p = subprocess.run([sys.executable, "-c", code, str(db_path)], capture_output=True, text=True, timeout=30,
                       cwd=ROOT)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stderr


def test_sync_without_token_says_so(db_path, monkeypatch) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    p = subprocess.run([sys.executable, "-m", "mapwatch", "sync", "--db", str(db_path)], capture_output=True,
                       text=True, timeout=30, cwd=ROOT, env={k: v for k, v in __import__("os").environ.items()
                                                              if k != "DISCORD_TOKEN"})
    assert p.returncode == 2 and "DISCORD_TOKEN is not set" in p.stderr and "Traceback" not in p.stderr
