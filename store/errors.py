"""The one exception tree of mapwatch: every error it reports to a user is a `MapwatchError`,
and each class says with which exit status a command ends when it reaches the command
(`exit_status`; docs/getting-started.md, "Exit status"). The classes are grouped by kind, so a
caller catches a kind (`UsageError`, `NotFound`, `SourceError`) and `mapwatch` maps by class:
`mapwatch/cli` catches `MapwatchError` and exits with `e.exit_status`, after one line
`mapwatch: error: <the message>`. The bot answers the same errors to the user
(bot/commands/__init__.py, `error_reply`).

The tree (tests/unit/store/test_errors.py checks it is the classes below; docs/gen/error_tree.py
draws it on docs/getting-started.md):

    MapwatchError (exit 1)
        UsageError (exit 2)
            BadSetting (exit 2)
                ScheduleError (exit 2)
            BadDatabase (exit 2)
                NoDatabase (exit 2)
                MigrationRefused (exit 2)
                NotMapwatchDatabase (exit 2)
            FetchError (exit 2)
            AskError (exit 2)
        RequestError (exit 1)
            BadOption (exit 1)
                BadChoice (exit 1)
            NotAllowed (exit 1)
            NotFound (exit 1)
                PaperNotFound (exit 1)
                DirectionNotFound (exit 1)
                PersonNotFound (exit 1)
            PersonChoice (exit 1)
            PathSearchTooLarge (exit 1)
        ParseError (exit 1)
        SourceError (exit 1)
            SourceDown (exit 1)
            BadAnswer (exit 1)
            OutOfTime (exit 1)
            Malformed (exit 1)
        SecretUnreadable (exit 1)
            KeyMissing (exit 1)
        DatabaseInUse (exit 1)
        RankNotConverged (exit 1)
        DiscordError (exit 1)
            BotLoginError (exit 1)
            ShardingRequired (exit 1)

Outside the tree, on purpose: the control-flow signals of `SIGNALS`, raised and caught inside
one module or room and never shown to anyone; and what Python and SQLite raise, which the
command maps itself (a database error: 2 when the --db cannot be opened as a database, 1
otherwise; an interrupt 130; a closed pipe 141; any other OSError 1).

Why here, at the store's top: every room may import it (mapwatch/layers.py). The classes once
defined beside their code are still importable there (store/secret_box.py, store/questions/teams.py,
store/scholarly/polite.py and parse.py, bot/supervisor.py, mapwatch/service/schedule.py,
mapwatch/cli/ask.py import them from here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

# The exit status of every command (docs/getting-started.md, "Exit status"): all done; a failure on the way
# (pages rejected, an error answer, a locked database, a full disk); a usage error.
EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2

# The exception classes of the package that are not MapwatchErrors, and why: each is raised and
# caught inside its own module or room, and never reaches a user.
SIGNALS = {
    "mapwatch.store.pages.html_tree_model.Reject": "a page out of bounds, turned into a ParseError by html_bounds",
    "mapwatch.store.scholarly.parse._Declared": "expat met a DTD: stops the scan at once",
    "mapwatch.store.sources.http_client.Retry": "a fetch worth retrying: the crawl retries or reports the page",
    "mapwatch.store.sources.http_client.Gone": "a fetch that ended without a body: the crawl records the outcome",
    "mapwatch.store.questions.rank_push.TooMuchToPush": "a push past its limit: the direction is computed whole",
    "mapwatch.store.database.migrations._refused.Refused": "a migration that cannot carry a database across:"
                                                           " open_db raises MigrationRefused",
}


class MapwatchError(Exception):
    """Base of every error mapwatch turns into a friendly message: a failure on the way, the
    command did not do all it was asked."""

    exit_status: ClassVar[int] = EXIT_REJECTED


# -- usage: what the operator typed cannot be used (exit 2, one line, no traceback) ---------------


class UsageError(MapwatchError):
    """What the operator typed (an option, an environment variable, a path, a command for
    `mapwatch ask`) cannot be used: a usage error, one line naming it."""

    exit_status: ClassVar[int] = EXIT_USAGE


class BadSetting(UsageError):
    """A setting an operator typed (an environment variable or an option) that cannot be
    used: one line naming the setting and what it accepts."""


class ScheduleError(BadSetting):
    """$MAPWATCH_REFRESH is neither an interval (1h, 30m, 90s, 1h30m; above 0 s and at most
    366 days) nor a 5-field cron expression that fires (mapwatch/service/schedule.py)."""


class BadDatabase(UsageError):
    """A --db that cannot be used as mapwatch's database; the file is not changed."""


class NoDatabase(BadDatabase):
    """A command that only reads was given a database file that does not exist (only
    ingest, refresh and run create one)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such database (mapwatch ingest, refresh or run creates one)")
        self.path = path


class MigrationRefused(BadDatabase):
    """A database made by an earlier version that holds what a migration of this one cannot
    carry across: the migration stopped before changing anything."""


class NotMapwatchDatabase(BadDatabase):
    """A --db file that is not a mapwatch database: another program's SQLite file, an empty
    file for a command that does not create databases, or one whose schema is newer than
    this code."""


class FetchError(UsageError):
    """A source the operator named that cannot be read: no such file or folder, a malformed
    URL. (A page of a folder that cannot be read is rejected, not raised to the command.)"""


class AskError(UsageError):
    """A slash command that `mapwatch ask` cannot read: none given, an unknown command, an
    option missing or too many (mapwatch/cli/ask.py)."""


# -- a request that cannot be answered as asked (the bot answers it; a command exits 1) -----------


class RequestError(MapwatchError):
    """A request (a slash command, `mapwatch ask`, an export) that cannot be answered as
    asked: the bot tells the user why, a command exits 1."""


class BadOption(RequestError):
    """An option a user gave that cannot be used (empty search, unknown sort, page out of range)."""


class BadChoice(BadOption):
    """A value that is not one of a choice option's: "mode is instant, daily or weekly, not “and”."
    The one wording of every choice option (the bot's cores and `mapwatch ask` alike); `quote`
    makes the value safe where it is shown (Discord's markdown)."""

    def __init__(self, name: str, value: str, choices: Sequence[str]) -> None:
        self.name, self.value, self.choices = name, value, tuple(choices)
        super().__init__(self.words())

    def words(self, quote: Callable[[str], str] = str) -> str:
        from mapwatch.store.one_line import one_line

        return f"{self.name} is {either(self.choices)}, not “{quote(one_line(self.value, 60))}”."


def either(words: Sequence[str]) -> str:
    """("a", "b", "c") -> "a, b or c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


class NotAllowed(RequestError):
    """The user lacks the permission a command needs (e.g. Manage Channels for /track)."""


class NotFound(RequestError):
    """Nothing in the map matches what the user named; `suggestions`: what comes close."""

    def __init__(self, message: str, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ref = ref
        self.suggestions = suggestions


class PaperNotFound(NotFound):
    """No paper matches the id, URL or title given."""

    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(f"No paper matches {ref!r}", ref, suggestions)


class DirectionNotFound(NotFound):
    """No research direction matches the name given."""

    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(f"No direction matches {ref!r}", ref, suggestions)


class PersonNotFound(NotFound):
    """No author in the map matches the ORCID, OpenAlex id or name given (store/questions/teams.py)."""

    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(f"No author in the map matches “{ref}”", ref, suggestions)


class PersonChoice(RequestError):
    """A name that fits several people: the caller answers with the choice, never a guess."""

    # people: store.questions.teams.Person, typed loosely as the store's top imports no subpackage
    def __init__(self, ref: str, people: tuple[Any, ...], more: int = 0) -> None:
        super().__init__(f"“{ref}” fits {len(people) + more} people: give an ORCID or OpenAlex id")
        self.ref = ref
        self.people = people
        self.more = more


class PathSearchTooLarge(RequestError):
    """A citation-path search that would visit more papers than its cap allows."""

    def __init__(self, a: str, b: str, cap: int) -> None:
        super().__init__(f"The search for a chain from {a} to {b} reached its limit of {cap:,} papers "
                         f"without finding one")
        self.a, self.b, self.cap = a, b, cap


# -- what the map and the sources hand over -------------------------------------------------------


class ParseError(MapwatchError):
    """A page that is not a valid map page. `line` is 1-based, 0 for the whole file."""

    def __init__(self, reason: str, line: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


def undecodable(data: bytes, e: UnicodeDecodeError, encoding: str = "UTF-8") -> ParseError:
    """The rejection of a page whose bytes are not text in `encoding`: its line and byte, the
    same for a text page and an HTML page (`e` from decoding all of `data`)."""
    what = "UTF-8 text (binary data?)" if encoding == "UTF-8" else f"{encoding} text, as it declares"
    return ParseError(f"not {what} at byte {e.start}", data.count(b"\n", 0, e.start) + 1)


class SourceError(MapwatchError):
    """A scholarly source (arXiv, OpenAlex, Semantic Scholar) did not answer as documented; an
    enrichment round reports it and goes on (store/scholarly/enrich.py). One line, never a secret."""


class SourceDown(SourceError):
    """The source cannot be asked again this round (one line: why)."""


class BadAnswer(SourceError):
    """One request failed (a malformed or oversized answer, a refused query); others may not."""


class OutOfTime(SourceError):
    """The round's deadline would pass before the next request could start."""


class Malformed(SourceError, ValueError):
    """An answer that is not the source's documented format (one line: what is wrong). A
    ValueError too, as the parsers' readers treat one (store/scholarly/parse.py)."""


# -- the rest: a secret, a computation, Discord ---------------------------------------------------


class SecretUnreadable(MapwatchError):
    """A sealed value whose key is missing or different, or that was altered (store/secret_box.py)."""


class KeyMissing(SecretUnreadable):
    """No key at all: neither $MAPWATCH_WEBHOOK_KEY nor the key file beside the database."""


class DatabaseInUse(MapwatchError):
    """A command that needs the database alone (`mapwatch compact`) found another process
    with it open; nothing was changed."""


class RankNotConverged(MapwatchError):
    """A direction's PageRank whose power iteration did not converge (networkx's
    PowerIterationFailedConvergence, for the same graph)."""


class DiscordError(MapwatchError):
    """Discord refused to run the bot (bot/supervisor.py)."""


class BotLoginError(DiscordError):
    """Discord refused the token."""


class ShardingRequired(DiscordError):
    """Discord wants more shards than the bot opened (close code 4011)."""
