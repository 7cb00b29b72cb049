"""Section 7: alert latency, from a page change at the HTTP source to the alert posted to
the local fake Discord server (tests/fakediscord), through `mapwatch run` (bot + scheduler +
feed server in one loop) with a short refresh interval."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from pathlib import Path


def available() -> bool:
    return all(importlib.util.find_spec(m) is not None
                for m in ("mapwatch.service.run", "mapwatch.bot.client", "tests.fakediscord",
                          "mapwatch.store.subscriptions.tracking"))


async def measure(work: Path, papers: int, seed: int, interval_s: int, port: int) -> dict:
    """One change, one alert: seconds from writing the changed page to the alert's arrival."""
    import discord

    from bench import generate as gen
    from bench.harness import Server
    from mapwatch.bot.discord_endpoints import point_discord_py_at
    from mapwatch.service.settings import RunSettings
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh
    from tests.fakediscord import FakeDiscord

    run_all = importlib.import_module("mapwatch.service.run").run_all  # (not in every checkout: see available())
    folder = work / "alert-map"
    smap = gen.build_map(papers, seed)
    gen.write_map(smap, folder, 1)
    tracked = smap.ids[smap.changed()[0]]
    db_path = work / "alert.db"
    said: list[str] = []
    with Server([sys.executable, "-m", "bench.generate", "serve", str(folder), "--port", str(port)],
                port, work / "alert-map-server.log"):
        base = f"http://127.0.0.1:{port}"
        db = open_db(db_path)
        # The map as it was: its papers from the folder, then their URLs' validators.
        await asyncio.to_thread(ingest_paths, db, [folder])
        await asyncio.to_thread(refresh, db, base, options=HttpOptions(budget=10**9))
        db.close()
        fake = FakeDiscord()
        await fake.start()
        point_discord_py_at(fake.api_base, fake.gateway_url)
        stop = asyncio.Event()
        settings = RunSettings(db_path=db_path, source=base, out_dir=work / "alert-feeds", port=0,
                               refresh=f"{interval_s}s", token=fake.token,
                               client_kwargs={"guild_ready_timeout": 0.05})
        task = asyncio.create_task(run_all(settings, say=said.append, stop=stop))
        try:
            await fake.wait_for(lambda: fake.command_syncs and fake.identifies, timeout=30)
            channel = fake.guild.channel("alerts")
            h = await fake.slash("track", {"paper": tracked}, channel_id=channel.id,
                                 permissions=discord.Permissions(manage_channels=True))
            await h.wait_message(timeout=10)
            before = len(fake.channel_messages(channel.id))
            t0 = time.monotonic()
            await asyncio.to_thread(gen.write_map, smap, folder, 2)  # the change at the source
            written = time.monotonic() - t0
            try:
                await fake.wait_for(lambda: len(fake.channel_messages(channel.id)) > before,
                                    timeout=interval_s * 3 + 60)
            except TimeoutError:
                raise RuntimeError("no alert arrived; the run said:\n" + "\n".join(said)) from None
            latency = time.monotonic() - t0
            msg = fake.channel_messages(channel.id)[before]
        finally:
            stop.set()
            try:
                await asyncio.wait_for(task, 15)
            finally:
                await fake.close()
    return {"seconds": latency, "interval_s": interval_s, "papers": papers, "tracked": tracked,
            "write_seconds": written, "alert_title": (msg.embed or {}).get("title") if msg.embeds else msg.content}
