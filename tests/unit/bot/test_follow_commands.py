"""The follow commands' cores (as `mapwatch ask` runs them): permissions, isolation, options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mapwatch.bot.commands import run_core
from mapwatch.cli import main
from mapwatch.store.subscriptions import digests, follows, tracking
from tests.bot_helpers import CHANNEL, GUILD, USER, ctx

ROOT = Path(__file__).resolve().parents[3]
RL = "lr/reinforcement-learning-for-reasoning"


def ask(db, name: str, c=None, **options):
    reply, ok = run_core(db, c or ctx(), name, options)
    return reply, ok


def unescaped_mentions(text: str) -> list[str]:
    return re.findall(r"(?<!\\)(<@[&!]?\d+>|@everyone|@here)", text)


def test_follow_needs_manage_channels_in_a_server_but_not_in_dms(seeded) -> None:
    reply, ok = ask(seeded, "follow", ctx(manage=False), direction=RL)
    assert not ok and reply.ephemeral and "Manage Channels" in reply.content
    assert follows.list_follows(seeded, guild_id=GUILD, user_id=USER) == ()
    for name, opts in (("unfollow", {"direction": RL}), ("digest-time", {"hour": "8"})):
        reply, ok = ask(seeded, name, ctx(manage=False), **opts)
        assert not ok and "Manage Channels" in reply.content
    reply, ok = ask(seeded, "follow", ctx(guild=None, manage=False), direction=RL)
    assert ok and "your DMs" in reply.content
    reply, ok = ask(seeded, "follow", ctx(guild=None), direction=RL, role="5")
    assert not ok and "Roles exist only in servers" in reply.content


def test_servers_are_isolated(seeded) -> None:
    assert ask(seeded, "follow", direction=RL, mode="weekly")[1]
    other = ctx(guild=GUILD + 1, channel=CHANNEL)
    reply, ok = ask(seeded, "unfollow", other, direction=RL)
    assert ok and "not followed here" in reply.content and reply.ephemeral
    reply, _ = ask(seeded, "tracked", other)
    assert "Reinforcement learning for reasoning" not in str(reply)
    reply, _ = ask(seeded, "tracked")
    assert "Reinforcement learning for reasoning" in str(reply) and "weekly" in str(reply)
    reply, _ = ask(seeded, "digest-preview", other)
    assert reply.ephemeral and reply.content.startswith("This channel gets no digests")


@pytest.mark.parametrize("opts, message", [
    ({"direction": "no such direction"}, "No direction matches"),
    ({"direction": RL, "keyword": "x" * 6000}, "too long"),
    ({"direction": RL, "mode": "hourly"}, "instant, daily or weekly"),
    ({"direction": RL, "role": "@everyone"}, "must be a server role"),
])
def test_bad_follow_options_get_one_clear_line(seeded, opts, message) -> None:
    reply, ok = ask(seeded, "follow", **opts)
    assert not ok and reply.ephemeral and message in str(reply)


def test_hostile_keyword_is_stored_as_text_and_shown_escaped(seeded) -> None:
    reply, ok = ask(seeded, "follow", direction=RL, keyword="@everyone <@&1> '; DROP TABLE follows; --")
    assert ok and unescaped_mentions(reply.content) == []
    [f] = follows.list_follows(seeded, guild_id=GUILD, user_id=USER)
    assert f.keyword == "@everyone <@&1> '; DROP TABLE follows; --"
    reply, _ = ask(seeded, "tracked")
    assert unescaped_mentions(str(reply)) == []


def test_digest_time_validates_and_keeps_the_zone(seeded) -> None:
    reply, ok = ask(seeded, "digest-time", hour="7", timezone="America/New_York")
    assert ok and "07:00 America/New_York" in reply.content
    reply, ok = ask(seeded, "digest-time", hour=21)
    assert ok and "21:00 America/New_York" in reply.content
    for opts in ({"hour": "24"}, {"hour": "seven"}, {"hour": "3", "timezone": "Mars/Olympus"},
                 {"hour": "3", "timezone": "../../etc/passwd"}):
        reply, ok = ask(seeded, "digest-time", **opts)
        assert not ok and reply.ephemeral
    assert digests.get_digest_settings(seeded, guild_id=GUILD, user_id=USER).hour == 21


def test_track_takes_a_mode_and_a_role(seeded) -> None:
    reply, ok = ask(seeded, "track", paper="2412.10400", mode="daily", role="<@&55>")
    assert ok and "daily digest at 09:00 UTC" in reply.content and unescaped_mentions(reply.content) == ["<@&55>"]
    [t] = tracking.list_tracks(seeded, guild_id=GUILD, user_id=USER)
    assert (t.mode, t.role_id) == ("daily", 55)
    reply, ok = ask(seeded, "track", paper="2412.10400", mode="daily", role="55")
    assert ok and reply.content.startswith("Already tracking") and reply.ephemeral
    reply, ok = ask(seeded, "track", paper="2412.10400")  # again without options: instant, no role
    assert ok and "after each refresh" in reply.content
    [t] = tracking.list_tracks(seeded, guild_id=GUILD, user_id=USER)
    assert (t.mode, t.role_id) == ("instant", None)


def test_the_documented_follow_examples_run(seeded, db_path, capsys) -> None:
    page = (ROOT / "docs" / "bot.md").read_text(encoding="utf-8")
    section = page[page.index("## Following and digests"):]
    examples = re.findall(r"^\.venv/bin/mapwatch (ask .+)$", section, flags=re.M)
    assert len(examples) >= 5
    seeded.close()
    for line in examples:
        code = main([*shlex.split(line), "--db", str(db_path)])
        out = capsys.readouterr().out
        assert code == 0, (line, out)
    assert "Followed directions (2)" in out and "mentions role `1234`" in out
