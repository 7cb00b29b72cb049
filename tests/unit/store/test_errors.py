"""One exception tree (store/errors.py): every exception class of the package is in it, or is a
control-flow signal it names; its docstring draws it; each class carries the exit status the
`mapwatch` command has always ended with for it, and the command maps by class."""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest

import mapwatch
import mapwatch.cli
from mapwatch.store import errors

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "docs" / "gen"))

import error_tree  # noqa: E402  (docs/gen, the generators cog runs)

# The statuses before the tree existed (mapwatch/cli's `except (FetchError, NoDatabase,
# NotMapwatchDatabase, BadSetting)` -> 2, any other MapwatchError -> 1; `mapwatch ask`'s AskError -> 2).
USAGE = {"UsageError", "BadSetting", "ScheduleError", "BadDatabase", "NoDatabase", "MigrationRefused",
         "NotMapwatchDatabase",
         "FetchError", "AskError"}

# One instance of each class of the tree, as its code raises it.
EXAMPLES: dict[str, errors.MapwatchError] = {
    "MapwatchError": errors.MapwatchError("something failed"),
    "UsageError": errors.UsageError("--x: not a choice"),
    "BadSetting": errors.BadSetting("PORT: 99999 is not a port"),
    "ScheduleError": errors.ScheduleError("MAPWATCH_REFRESH: 0 is not an interval"),
    "BadDatabase": errors.BadDatabase("m.db: cannot be used"),
    "NoDatabase": errors.NoDatabase("typo.db"),
    "MigrationRefused": errors.MigrationRefused("old.db: migration 0047_lean_events: event 7 is a citation event"
                                                " without a citer; the file is unchanged"),
    "NotMapwatchDatabase": errors.NotMapwatchDatabase("other.db is not a mapwatch database"),
    "FetchError": errors.FetchError("pages/: no such file or folder"),
    "AskError": errors.AskError("unknown command /nope"),
    "RequestError": errors.RequestError("cannot answer"),
    "BadOption": errors.BadOption("page out of range"),
    "BadChoice": errors.BadChoice("mode", "and", ("instant", "daily", "weekly")),
    "NotAllowed": errors.NotAllowed("You need Manage Channels"),
    "NotFound": errors.NotFound("No such thing", "thing"),
    "PaperNotFound": errors.PaperNotFound("9999.99999"),
    "DirectionNotFound": errors.DirectionNotFound("nowhere"),
    "PersonNotFound": errors.PersonNotFound("Nobody"),
    "PersonChoice": errors.PersonChoice("Ada", (), 2),
    "PathSearchTooLarge": errors.PathSearchTooLarge("2412.10400", "2507.04136", 1000),
    "ParseError": errors.ParseError("no title", 3),
    "SourceError": errors.SourceError("arXiv said no"),
    "SourceDown": errors.SourceDown("arXiv: timed out"),
    "BadAnswer": errors.BadAnswer("OpenAlex: 400"),
    "OutOfTime": errors.OutOfTime("the round's deadline"),
    "Malformed": errors.Malformed("the arXiv answer is not XML"),
    "SecretUnreadable": errors.SecretUnreadable("the key does not open it"),
    "KeyMissing": errors.KeyMissing("the key file is missing"),
    "DatabaseInUse": errors.DatabaseInUse("mapwatch.db: another process has the database open"),
    "RankNotConverged": errors.RankNotConverged("PageRank did not converge"),
    "DiscordError": errors.DiscordError("Discord refused"),
    "BotLoginError": errors.BotLoginError("Discord refused the token"),
    "ShardingRequired": errors.ShardingRequired("4011"),
}


def tree() -> list[type[errors.MapwatchError]]:
    return [cls for _, cls in error_tree.walk()]


def package_exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the package defines at a module's top, by its dotted name."""
    found = {}
    for info in pkgutil.walk_packages(mapwatch.__path__, "mapwatch."):
        if info.name == "mapwatch.__main__":  # it runs the command
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_exception_class_is_in_the_tree_or_a_named_signal() -> None:
    classes = package_exception_classes()
    assert len(classes) > 30, sorted(classes)  # the walk sees the subpackages
    outside = {name for name, cls in classes.items() if not issubclass(cls, errors.MapwatchError)}
    assert outside == set(errors.SIGNALS), "an exception class outside the tree: add it, or name it in SIGNALS"
    elsewhere = {name for name, cls in classes.items()
                 if issubclass(cls, errors.MapwatchError) and cls.__module__ != errors.__name__}
    assert elsewhere == set(), "the tree is defined in store/errors.py alone"
    assert set(tree()) == {cls for cls in classes.values() if issubclass(cls, errors.MapwatchError)}


def test_the_old_homes_still_give_the_same_classes() -> None:
    """Code and tests that imported a class from beside its code get the tree's class."""
    from mapwatch.bot import supervisor
    from mapwatch.cli import ask
    from mapwatch.service import schedule
    from mapwatch.store import secret_box
    from mapwatch.store.questions import teams
    from mapwatch.store.scholarly import parse, polite

    assert (secret_box.SecretUnreadable, secret_box.KeyMissing) == (errors.SecretUnreadable, errors.KeyMissing)
    assert (teams.PersonNotFound, teams.PersonChoice) == (errors.PersonNotFound, errors.PersonChoice)
    assert (polite.SourceDown, polite.BadAnswer, polite.OutOfTime) == (errors.SourceDown, errors.BadAnswer,
                                                                       errors.OutOfTime)
    assert parse.Malformed is errors.Malformed and issubclass(parse.Malformed, ValueError)
    assert (supervisor.BotLoginError, supervisor.ShardingRequired) == (errors.BotLoginError, errors.ShardingRequired)
    assert schedule.ScheduleError is errors.ScheduleError and ask.AskError is errors.AskError


def test_the_module_docstring_draws_the_tree() -> None:
    drawn = "\n".join("    " + line for line in error_tree.plain().splitlines())
    assert drawn in (errors.__doc__ or ""), f"store/errors.py's docstring should draw:\n{drawn}"
    assert [cls.__name__ for cls in tree()] == list(EXAMPLES)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_class_keeps_its_exit_status(name: str) -> None:
    cls = type(EXAMPLES[name])
    assert cls.__name__ == name
    assert cls.exit_status == (errors.EXIT_USAGE if name in USAGE else errors.EXIT_REJECTED)
    assert cls.exit_status == (2 if issubclass(cls, errors.UsageError) else 1)  # the kind decides


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_command_maps_by_class(name: str, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever command raises it, `mapwatch` ends with the class's status and one line."""
    error = EXAMPLES[name]

    def fails(_: argparse.Namespace) -> int:
        raise error

    def parser() -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(prog="mapwatch")
        p.set_defaults(func=fails)
        return p

    monkeypatch.setattr(mapwatch.cli, "build_parser", parser)
    assert mapwatch.cli.main([]) == (2 if name in USAGE else 1)
    assert capsys.readouterr().err == f"mapwatch: error: {error}\n"
