"""The layers of mapwatch, stated once: which rooms of the code may import which.

A room is a folder with one job (store/pages, bot/rendering, mapwatch/cli, bench), the top
modules of a folder (`store/*.py`: errors, clock, ids, urls, ...), or one module that sits
between its neighbours (bot/interactions.py). A file belongs to the most specific room that
names it: its own path, else its folder's top modules, else the deepest folder that holds it
(store/database/migrations/ is in store/database).

`MAY_IMPORT` is the rule: a module may import the modules of its own room and of the rooms
listed for it, and nothing else of the package or of bench/. It is the only statement of the
rule, and the others are made from it or checked against it: tests/unit/test_layers.py checks
every import of the checkout (at the top, in functions and under TYPE_CHECKING) against it, and
that the rooms stack into floors with no arrow back up; each room's docstring (`home(room)`)
carries the line `may_import_line(room)` writes, which the same test compares; the table of
floors on docs/architecture.md is generated from it (docs/gen/layers_table.py, cog).
`LIBRARIES` names the few libraries only some rooms may import.

Nothing of the package imports this module: tests and docs/gen read it.
"""

from __future__ import annotations

from graphlib import TopologicalSorter

RULE = "mapwatch/layers.py"  # how a docstring names this rule
NOTHING = "none of the other rooms"  # what a room that imports no other may import
STORE = ("store/*.py", "store/pages", "store/database", "store/questions", "store/scholarly",
         "store/subscriptions", "store/sources")
FEEDS = ("feeds/*.py", "feeds/serving")
BOT = ("bot/rendering", "bot/commands", "bot/interactions.py", "bot/sending", "bot/*.py")
ENTRY = ("mapwatch/*.py", "mapwatch/service", "mapwatch/cli", "mapwatch/__main__.py")
LAYERS = {"store/": STORE, "feeds/": FEEDS, "bot/": BOT, "mapwatch/": ENTRY}

# room -> the rooms it may import besides its own, bottom to top.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "seeds": (),  # the bundled pages: data, read with importlib.resources
    "store/*.py": (),  # errors, clock, ids, urls, environment, settings...: below every subpackage
    "store/pages": ("store/*.py",),  # reading pages is pure: no database, no fetching
    "store/database": ("store/*.py", "store/pages"),  # pages.files: ingest reads the folder source
    "store/questions": ("store/*.py", "store/pages", "store/database"),
    # handed what it needs from above: a round gets its tracked, team and followed papers from its caller
    "store/scholarly": ("store/*.py", "store/pages", "store/database"),
    "store/subscriptions": ("store/*.py", "store/pages", "store/database", "store/questions"),
    # refresh stores what it fetched; the tracked papers to fetch first come as the caller's priority,
    # and the directions' ranks are the caller's next step
    "store/sources": ("store/*.py", "store/pages", "store/database"),
    # all of the store: tick_report carries store/sources' refresh report to /metrics
    "feeds/*.py": STORE,
    "feeds/serving": (*STORE, "feeds/*.py"),
    # pure: no database, no fetching (and no discord: LIBRARIES). feeds/*.py: the cited-by and team
    # charts are drawn by feeds/chart.py and feeds/team_chart.py, one drawing for the web and the bot
    "bot/rendering": ("store/*.py", "store/pages", "store/questions", "store/scholarly", "store/subscriptions",
                      "feeds/*.py"),
    "bot/commands": (*STORE, "feeds/*.py", "bot/rendering"),  # feeds/*.py: /export's BibTeX, /graph's charts
    "bot/interactions.py": (*STORE, "bot/rendering", "bot/commands"),
    "bot/sending": (*STORE, "bot/rendering", "bot/interactions.py"),  # interactions.to_embed: one embed rule
    # client, command_tree, supervisor...: feeds/serving, as the bot reports to /metrics and /healthz
    "bot/*.py": (*STORE, *FEEDS, "bot/rendering", "bot/commands", "bot/interactions.py", "bot/sending"),
    "mapwatch/*.py": (*STORE, *FEEDS, *BOT),  # log_format hides secrets with bot/redact.py
    "mapwatch/service": (*STORE, *FEEDS, *BOT),  # `mapwatch run`: the layers composed
    "mapwatch/cli": (*STORE, *FEEDS, *BOT, "mapwatch/*.py", "mapwatch/service"),
    "mapwatch/__main__.py": ("mapwatch/cli",),  # `python -m mapwatch`
    # the benchmarks drive every part of the package (and tests/' fakes, which are no room)
    "bench": ("seeds", *STORE, *FEEDS, *BOT, *ENTRY),
}


def _all_but(*rooms: str) -> tuple[str, ...]:
    return tuple(r for r in MAY_IMPORT if r not in rooms)


# library -> the rooms that may import it (a library not named here: any room).
LIBRARIES: dict[str, tuple[str, ...]] = {
    # only the `mapwatch` command parses a command line: the layers and `run` take values
    "argparse": ("mapwatch/cli", "bench"),
    # the cores, rendering and `mapwatch ask` run without discord.py
    "discord": ("bot/interactions.py", "bot/sending", "bot/*.py", "bench"),
    # reading pages is pure: no database
    "sqlite3": _all_but("store/pages"),
    "sqlite_utils": _all_but("store/pages"),
}


def room_of(path: str) -> str | None:
    """The room of a file, by its path from the repository's root (store/pages/parse.py ->
    store/pages); None for a file in no room (tests/, docs/)."""
    if path in MAY_IMPORT:
        return path
    folder = path.rpartition("/")[0]
    if f"{folder}/*.py" in MAY_IMPORT:
        return f"{folder}/*.py"
    parts = folder.split("/")
    for n in range(len(parts), 0, -1):
        if "/".join(parts[:n]) in MAY_IMPORT:
            return "/".join(parts[:n])
    return None


def may_import(room: str, other: str) -> bool:
    return other == room or other in MAY_IMPORT[room]


def floors() -> list[tuple[str, ...]]:
    """The rooms stacked bottom to top: each room one floor above the highest room it may
    import. graphlib refuses a circle (CycleError), so the rule itself has none."""
    order = TopologicalSorter({room: set(below) for room, below in MAY_IMPORT.items()})
    order.prepare()
    stack = []
    while order.is_active():
        ready = order.get_ready()
        stack.append(tuple(r for r in MAY_IMPORT if r in ready))
        order.done(*ready)
    return stack


def home(room: str) -> str:
    """The file whose docstring says what `room` may import: its own module, or its folder's
    __init__.py."""
    if room.endswith(".py") and not room.endswith("/*.py"):
        return room
    return f"{room.removesuffix('/*.py')}/__init__.py"


def described(rooms: tuple[str, ...], own: str) -> str:
    """Rooms as the docs name them: a whole layer (counting the room's own) as `store/`."""
    have = {*rooms, own}
    words = []
    for layer, members in LAYERS.items():
        if set(members) <= have:
            words.append(layer)
            have -= set(members)
    words += [r for r in MAY_IMPORT if r in have and r != own]
    return ", ".join(words) if words else NOTHING


def may_import_line(room: str) -> str:
    """The sentence the room's docstring carries (whitespace aside)."""
    return f"{room} may import ({RULE}): {described(MAY_IMPORT[room], room)}."
