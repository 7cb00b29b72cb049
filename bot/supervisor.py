"""The Discord bot of `mapwatch run`, supervised: restarted after a crash with a backoff, stopped
for good when Discord refuses the token (docs/operations.md, "Operations")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import BotLoginError as BotLoginError
from mapwatch.store.errors import ShardingRequired as ShardingRequired

if TYPE_CHECKING:
    from mapwatch.feeds.serving.health import Health

log = logging.getLogger("mapwatch.run")

BOT_BACKOFF = 5.0  # seconds before the first restart of a crashed bot; doubled each time
BOT_BACKOFF_CAP = 300.0  # at most 5 minutes between restarts
REFUSED = "Discord refused DISCORD_TOKEN (check the token)"



async def supervise_bot(make_bot: Callable[[], Any], token: str, say: Callable[[str], None], health: Health,
                        current: list[Any], *, backoff: float = BOT_BACKOFF, cap: float = BOT_BACKOFF_CAP) -> None:
    """Run a bot from `make_bot` until it is closed on purpose or its token is refused;
    restart it after a crash with exponential backoff (reset once a run lasted `cap`)."""
    loop = asyncio.get_running_loop()
    crashes = 0
    while True:
        bot: Any = None
        started = loop.time()
        try:
            bot = make_bot()
            current[:] = [bot]
            health.bot_ready = _ready_check(bot)
            health.shards = getattr(bot, "shard_states", list)
            health.set_bot("connecting")
            await _run_bot(bot, token, say)
            health.set_bot("off")
            return  # closed on purpose
        except BotLoginError as e:
            say(f"{e}: running the feeds and the refresh schedule without the Discord bot.")
            log.error("%s; the Discord bot is stopped, the rest runs on", e)
            health.set_bot("off", str(e))
            return
        except Exception as e:
            crashes = 1 if loop.time() - started >= cap else crashes + 1
            delay = min(cap, backoff * 2 ** (crashes - 1))
            reason = f"{type(e).__name__}: {e}"
            health.set_bot("restarting", reason)
            log.error("Discord bot crashed (%s); restarting it in %.1f s", reason, delay, exc_info=True)
        finally:
            if bot is not None and not bot.is_closed():
                with contextlib.suppress(Exception):
                    await bot.close()
        await asyncio.sleep(delay)


def _ready_check(bot: Any) -> Callable[[], bool]:
    def ready() -> bool:
        return bool(bot.is_ready() and not bot.is_closed())
    return ready


async def _run_bot(bot: Any, token: str, say: Callable[[str], None]) -> None:
    import discord

    try:
        await bot.login(token)
    except discord.LoginFailure:
        raise BotLoginError(REFUSED) from None
    say("Discord bot: connecting.")
    try:
        await bot.connect(reconnect=True)
    except discord.ConnectionClosed as e:
        if e.code == 4004:  # Authentication failed: the gateway refused the token
            raise BotLoginError(REFUSED) from None
        if e.code == 4011:  # Sharding required: restarted like a crash (a new /gateway/bot asked)
            raise ShardingRequired(SHARDING_REQUIRED) from None
        raise


SHARDING_REQUIRED = ("Discord closed the gateway with 4011 (sharding required): the bot is in too many servers "
                     "for its shard count; unset $MAPWATCH_SHARDS (Discord's recommendation) or raise it")

