"""One exception root for everything mapwatch reports to a user."""

from __future__ import annotations

from collections.abc import Callable, Sequence

# The exit status of every command (docs/getting-started.md, "Exit status"): all done; a failure on the way
# (pages rejected, an error answer, a locked database, a full disk); a usage error.
EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2


class MapwatchError(Exception):
    """Base of every error mapwatch turns into a friendly message."""


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


class NoDatabase(MapwatchError):
    """A command that only reads was given a database file that does not exist (only
    ingest, refresh and run create one)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such database (mapwatch ingest, refresh or run creates one)")
        self.path = path


class BadSetting(MapwatchError):
    """A setting an operator typed (an environment variable or an option) that cannot be
    used: a usage error (exit 2), one line naming the setting and what it accepts."""


class NotMapwatchDatabase(MapwatchError):
    """A --db file that is not a mapwatch database: another program's SQLite file, an empty
    file for a command that does not create databases, or one whose schema is newer than
    this code. A usage error (exit 2); the file is not changed."""


class FetchError(MapwatchError):
    """A page that could not be retrieved (missing file, HTTP failure, too large)."""


class PaperNotFound(MapwatchError):
    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(f"No paper matches {ref!r}")
        self.ref = ref
        self.suggestions = suggestions


class DirectionNotFound(MapwatchError):
    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(f"No direction matches {ref!r}")
        self.ref = ref
        self.suggestions = suggestions


class BadOption(MapwatchError):
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


class NotAllowed(MapwatchError):
    """The user lacks the permission a command needs (e.g. Manage Channels for /track)."""


class PathSearchTooLarge(MapwatchError):
    """A citation-path search that would visit more papers than its cap allows."""

    def __init__(self, a: str, b: str, cap: int) -> None:
        super().__init__(f"The search for a chain from {a} to {b} reached its limit of {cap:,} papers "
                         f"without finding one")
        self.a, self.b, self.cap = a, b, cap


class RankNotConverged(MapwatchError):
    """A direction's PageRank whose power iteration did not converge (networkx's
    PowerIterationFailedConvergence, for the same graph)."""
