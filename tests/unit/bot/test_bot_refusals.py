"""Each Manage Channels refusal names its own command's action (issue 12, item 7): through
Discord's check (the real client against the fake Discord) and through the command core."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.commands import commands, run_core
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.bot_helpers import ctx
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

# What each guarded command's refusal must say (its own action), and what it must not.
ACTIONS = {
    "track": "change what this channel tracks",
    "untrack": "stop tracking a paper in this channel",
    "follow": "change what this channel follows",
    "unfollow": "stop following a direction in this channel",
    "digest-time": "change when this server's digests come",
}
OPTIONS = {
    "track": {"paper": "2412.10400"},
    "untrack": {"paper": "2412.10400"},
    "follow": {"direction": "Reward modeling and RLHF"},
    "unfollow": {"direction": "Reward modeling and RLHF"},
    "digest-time": {"hour": 8},
}


def test_every_guarded_command_is_listed() -> None:
    assert {name for name, c in commands().items() if c.manage} == set(ACTIONS)
    assert len({c.refusal for c in commands().values() if c.manage}) == len(ACTIONS)


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_core_refusal_names_the_action(db, name: str) -> None:
    ingest_paths(db, [SEEDS_DIR])
    reply, ok = run_core(db, ctx(manage=False), name, OPTIONS[name])
    assert not ok and reply.ephemeral
    assert "Manage Channels" in reply.content and ACTIONS[name] in reply.content
    others = [a for n, a in ACTIONS.items() if n != name and a not in ACTIONS[name]]
    assert not any(a in reply.content for a in others)


async def test_discord_check_refusal_names_the_action(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = MapwatchBot(seeded_path, base_url="http://feeds.example", guild_ready_timeout=0.05, alert_interval=60)
    async with fake_discord.connected(bot):
        for name in sorted(ACTIONS):
            h = await fake_discord.slash(name, OPTIONS[name])  # no Manage Channels
            msg = await h.wait_message()
            assert h.ephemeral, name
            assert "Manage Channels" in msg.content and ACTIONS[name] in msg.content, (name, msg.content)
    db = open_db(seeded_path)
    try:
        assert db.conn.execute("SELECT count(*) FROM tracks").fetchone()[0] == 0
        assert db.conn.execute("SELECT count(*) FROM follows").fetchone()[0] == 0
    finally:
        db.close()
