"""One settings module (issue 22, item 3), one declared table (issue 31, item 3): every environment
variable mapwatch takes is an entry of store/settings_table.py, read in one pass at start
(store/environment.py), each once, and passed on; nothing else in the package reads the
environment; a bad value is a usage error (BadSetting: exit 2, one line naming it)."""

from __future__ import annotations

import ast
import os
from collections import Counter
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store import environment
from mapwatch.store.environment import NAMES, Environment
from mapwatch.store.errors import BadSetting
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.settings_table import BY_NAME, SECRETS, SETTINGS, Setting

ROOT = Path(__file__).resolve().parents[3]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")  # its settings table


class CountingEnviron(dict[str, str]):
    """An environment that counts the reads of each variable (and can be written, as os.environ)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.reads: Counter[str] = Counter()

    def __getitem__(self, key: str) -> str:
        self.reads[key] += 1
        return super().__getitem__(key)

    def get(self, key: str, default=None):  # type: ignore[no-untyped-def,override]
        self.reads[key] += 1
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.reads[key] += 1
        return super().__contains__(key)


def test_every_variable_is_documented_and_held_once() -> None:
    assert len(set(NAMES)) == len(NAMES) == 34
    for name in NAMES:
        assert f"| `{name}` |" in CONFIGURATION, f"{name} is not documented in docs/configuration.md"
    assert {"PORT", "DISCORD_TOKEN", "MAPWATCH_DB", "MAPWATCH_BASE_URL", "MAPWATCH_REFRESH"} <= set(NAMES)


def test_the_table_is_the_single_source() -> None:
    """Every variable named in the code is an entry of store.settings_table, and the
    Environment knows no other; docs/configuration.md's table is the generated one."""
    import re
    import sys

    named = set()
    for folder in ("store", "feeds", "bot", "mapwatch"):
        for path in (ROOT / folder).rglob("*.py"):
            named |= set(re.findall(r"\b(MAPWATCH_[A-Z0-9_]*[A-Z0-9]|DISCORD_TOKEN)\b", path.read_text("utf-8")))
    named |= {"PORT"}
    assert named == set(NAMES), sorted(named ^ set(NAMES))
    assert all(isinstance(s, Setting) and s.doc and s.default for s in SETTINGS)
    assert set(SECRETS) == {"DISCORD_TOKEN", "MAPWATCH_WEBHOOK_KEY", "MAPWATCH_S2_KEY"}
    assert set(Environment.read({}).raw_values) == set(BY_NAME)
    with pytest.raises(KeyError):
        Environment({"MAPWATCH_NOT_A_SETTING": "1"})
    sys.path.insert(0, str(ROOT / "docs" / "gen"))
    try:
        import settings_reference
    finally:
        sys.path.remove(str(ROOT / "docs" / "gen"))
    assert settings_reference.render() in CONFIGURATION


@pytest.mark.parametrize("name", ["DISCORD_TOKEN", "MAPWATCH_S2_KEY", "MAPWATCH_WEBHOOK_KEY"])
def test_a_secret_is_in_no_error_line(name: str) -> None:
    """A secret's parser never puts the value in its error (nor does anything else)."""
    secret = "planted\x01secret-value"
    env = Environment({name: secret})
    try:
        env.value(name)
    except BadSetting as e:
        assert "planted" not in str(e)
    assert (name, secret.strip()) in env.secret_values()


def test_one_pass_reads_each_variable_once() -> None:
    env = CountingEnviron({"PORT": "9000", "MAPWATCH_BASE_URL": "https://feeds.example.org/", "HOME": "/x"})
    read = Environment.read(env)
    assert env.reads == Counter(NAMES)  # each of ours once, nothing else
    assert read.listen_port() == 9000 and read.given_base_url() == "https://feeds.example.org"
    assert Environment().listen_port() == 8080 and Environment().given_base_url() is None  # the defaults
    with pytest.raises(AttributeError):
        read.raw_values = {}  # type: ignore[misc]  # frozen


def test_a_command_reads_the_environment_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`mapwatch publish` opens the database several times and reads the feeds folder, the base
    URL, the busy timeout: each variable is still read once, at start."""
    assert main(["ingest", "--db", str(tmp_path / "m.db"), "--quiet", str(SEEDS_DIR)]) == 0
    counting = CountingEnviron({**os.environ, "MAPWATCH_FEEDS_DIR": str(tmp_path / "out"),
                                "MAPWATCH_BASE_URL": "https://feeds.example.org", "MAPWATCH_BUSY_TIMEOUT": "3"})
    monkeypatch.setattr(os, "environ", counting)
    assert main(["publish", "--db", str(tmp_path / "m.db")]) == 0
    assert (tmp_path / "out" / "feeds.opml").read_text().count("https://feeds.example.org/") > 0
    ours = {k: n for k, n in counting.reads.items() if k in NAMES}
    assert ours == dict.fromkeys(NAMES, 1)


def test_nothing_else_reads_the_environment() -> None:
    readers = []
    for folder in ("store", "feeds", "bot", "mapwatch"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "store/environment.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")
                        and isinstance(node.value, ast.Name) and node.value.id == "os"):
                    readers.append(f"{rel}:{node.lineno}")
    assert readers == []


BAD = {  # variable, value, a command that uses it
    "MAPWATCH_BUSY_TIMEOUT": ("soon", ["stats"]),
    "MAPWATCH_DB_CACHE_MIB": ("0", ["stats"]),
    "MAPWATCH_BACKGROUND_NICE": ("20", ["ingest", "--quiet"]),
    "MAPWATCH_TICK_DEADLINE": ("0", ["refresh", "--source", str(SEEDS_DIR), "--out", "public"]),
    "MAPWATCH_HEADER_TIMEOUT": ("-1", ["serve", "--out", "public", "--port", "0"]),
    "MAPWATCH_MAX_CONNECTIONS": ("many", ["serve", "--out", "public", "--port", "0"]),
    "MAPWATCH_NOT_FOUND_BURST": ("-1", ["serve", "--out", "public", "--port", "0"]),
    "PORT": ("http", ["serve", "--out", "public"]),
    "MAPWATCH_BASE_URL": ("javascript:x", ["ask", "/paper 2412.10400"]),
    "MAPWATCH_FEEDS_DIR": ("a-file", ["publish"]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_is_one_usage_line(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    assert main(["ingest", "--db", str(db), "--quiet", str(SEEDS_DIR)]) == 0
    capsys.readouterr()
    (tmp_path / "a-file").write_text("not a folder\n")
    monkeypatch.chdir(tmp_path)
    value, command = BAD[name]
    monkeypatch.setenv(name, value)
    assert main([*command, "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mapwatch: error: ") and f"${name}" in err[0], err
    assert not (tmp_path / "public").exists()


def test_a_bad_value_matters_only_to_the_commands_that_use_it(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """Read once for every command, but checked where used: `stats` ignores a bad $PORT."""
    db = tmp_path / "m.db"
    assert main(["ingest", "--db", str(db), "--quiet", str(SEEDS_DIR)]) == 0
    monkeypatch.setenv("PORT", "http")
    assert main(["stats", "--db", str(db)]) == 0
    with pytest.raises(BadSetting, match=r"\$PORT"):
        Environment.read().listen_port()


def test_the_command_environment_is_current_only_while_it_runs() -> None:
    mine = Environment({"PORT": "1234"})
    with environment.installed(mine):
        assert environment.current() is mine
    assert environment.current() is not mine


def test_the_bound_before_alerts() -> None:
    assert Environment({}).before_alerts_seconds() == 30.0
    assert Environment({"MAPWATCH_BEFORE_ALERTS": "0"}).before_alerts_seconds() == 0.0
    assert Environment({"MAPWATCH_BEFORE_ALERTS": "12.5"}).before_alerts_seconds() == 12.5
    for bad in ("-1", "soon", "nan", "601"):
        with pytest.raises(BadSetting, match=r"\$MAPWATCH_BEFORE_ALERTS must be seconds \(0 to 600\)"):
            Environment({"MAPWATCH_BEFORE_ALERTS": bad}).before_alerts_seconds()


def test_how_old_a_pushed_directions_whole_computation_may_be() -> None:
    assert Environment({}).ranks_whole_every() == timedelta(days=1)
    assert Environment({"MAPWATCH_RANKS_WHOLE_EVERY": "0"}).ranks_whole_every() == timedelta(0)
    assert Environment({"MAPWATCH_RANKS_WHOLE_EVERY": " 3600 "}).ranks_whole_every() == timedelta(hours=1)
    for bad in ("-1", "daily", "nan", "2592001"):
        with pytest.raises(BadSetting, match=r"\$MAPWATCH_RANKS_WHOLE_EVERY must be seconds \(0 to 2592000\)"):
            Environment({"MAPWATCH_RANKS_WHOLE_EVERY": bad}).ranks_whole_every()


def test_each_connection_keeps_the_page_cache_the_environment_gives(tmp_path: Path) -> None:
    """$MAPWATCH_DB_CACHE_MIB (default 16 MiB, SQLite's own being 2) is each connection's page
    cache: PRAGMA cache_size in KiB, negative."""
    from mapwatch.store.database.db import open_db

    for env, kib in (({}, 16 * 1024), ({"MAPWATCH_DB_CACHE_MIB": "64"}, 64 * 1024),
                     ({"MAPWATCH_DB_CACHE_MIB": " 1 "}, 1024)):
        with environment.installed(Environment(env)):
            db = open_db(tmp_path / "m.db", create=True)
            try:
                assert db.conn.execute("PRAGMA cache_size").fetchone()[0] == -kib
            finally:
                db.close()
    for bad in ("0", "4097", "lots", "1.5"):
        with pytest.raises(BadSetting, match=r"\$MAPWATCH_DB_CACHE_MIB must be a whole number of MiB from 1 to 4096"):
            Environment({"MAPWATCH_DB_CACHE_MIB": bad}).db_cache_kib()
