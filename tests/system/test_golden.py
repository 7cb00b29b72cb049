"""Golden comparison: the real `mapwatch` command's published bytes, `ask` answers and failure
exits, compared with files under tests/data/golden/ so a refactor that changes any output fails.

Two maps: the bundled seeds (every output stored in full) and a generated 2,000-page map read
from a folder, twice (v1 then v2; a sha256 per output file plus the full text of a few).
The commands have no fixed clock, so run-time instants are normalised: only timestamps and
dates that fall inside the test's own run window are replaced (see `normalise`); every other
byte must match. `.generation` (a nanosecond counter) is not compared.

Regenerate after an intended change: `MAPWATCH_UPDATE_GOLDEN=1 pytest tests/system/test_golden.py`.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from mapwatch.store.pages.files import SEEDS_DIR
from tests.pagegen import generate, write

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/data/golden"
UPDATE = os.environ.get("MAPWATCH_UPDATE_GOLDEN") == "1"
BASE = "http://feeds.test"
SKIPPED = {".generation"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

SEED_QUESTIONS = [
    "/paper 2412.10400", "/citers 2412.10400", "/citers 2412.10400 sort:newest", "/refs 2507.04136",
    "/search reward", "/directions", "/direction Reward modeling and RLHF",
    "/feed alignment/reward-modeling-and-rlhf", "/stats", "/related 2412.10400",
    "/path 2509.02547 2412.10400",
]
MAP_QUESTIONS = [
    "/paper 2601.00003", "/citers 2601.00000", "/refs 2601.01999", "/directions", "/direction Direction 5",
    "/stats", "/related 2601.00010", "/path 2601.01999 2601.00000",
]


@dataclass
class Window:
    """The instants the commands ran in: a timestamp inside it is a run-time one."""
    start: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(seconds=2))
    end: datetime | None = None

    def close(self) -> None:
        self.end = datetime.now(UTC) + timedelta(seconds=2)

    def holds(self, t: datetime) -> bool:
        assert self.end is not None
        return self.start.replace(second=0, microsecond=0) <= t <= self.end

    def holds_day(self, d: date) -> bool:
        assert self.end is not None
        return self.start.date() <= d <= self.end.date()


_ISO = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?(?:\+00:00|Z| UTC)?")
_LONG = re.compile(r"\b(\d{1,2}) (January|February|March|April|May|June|July|August|September|October|"
                   r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4})"
                   r"(?: (\d\d):(\d\d) UTC)?")
_DAY = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)\b")


def normalise(text: str, window: Window) -> str:
    """Replace run-time instants (inside `window`) with <RUN-TIME>, run-time days with <RUN-DAY>."""
    def iso(m: re.Match[str]) -> str:
        y, mo, d, h, mi, s = (int(g or 0) for g in m.groups())
        return "<RUN-TIME>" if window.holds(datetime(y, mo, d, h, mi, s, tzinfo=UTC)) else m.group(0)

    def long(m: re.Match[str]) -> str:
        month = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(m.group(2)))
        day = date(int(m.group(3)), month, int(m.group(1)))
        if m.group(4):
            t = datetime(day.year, day.month, day.day, int(m.group(4)), int(m.group(5)), tzinfo=UTC)
            return "<RUN-TIME>" if window.holds(t) else m.group(0)
        return "<RUN-DAY>" if window.holds_day(day) else m.group(0)

    def day(m: re.Match[str]) -> str:
        d = date(*(int(g) for g in m.groups()))
        return "<RUN-DAY>" if window.holds_day(d) else m.group(0)

    return _DAY.sub(day, _LONG.sub(long, _ISO.sub(iso, text)))


def clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAPWATCH_", "DISCORD_"))}
    env["HOME"] = str(tmp)
    return env


def mapwatch(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *args], cwd=cwd, env=env or clean_env(cwd),
                          capture_output=True, text=True, timeout=120)


def published(out: Path, window: Window) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): normalise(p.read_text(encoding="utf-8"), window)
            for p in sorted(out.rglob("*")) if p.is_file() and p.name not in SKIPPED}


def answers(db: Path, questions: list[str], cwd: Path) -> str:
    parts = []
    for q in questions:
        r = mapwatch(["ask", "--db", str(db), q], cwd)
        parts.append(f"=== {q}\nexit {r.returncode}\n{r.stdout}{r.stderr}")
    return "\n".join(parts)


class Golden:
    """Collects the differences from the stored files (or rewrites them when updating)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.problems = folder, []  # type: list[str]

    def text(self, name: str, actual: str) -> None:
        path = self.folder / name
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        expected = path.read_text(encoding="utf-8") if path.exists() else ""
        if expected != actual:
            diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"golden/{name}",
                                        f"now/{name}", lineterm="", n=1)
            self.problems.append(f"{path.relative_to(ROOT)} changed:\n" + "\n".join(list(diff)[:40]))

    def check(self) -> None:
        assert not self.problems, "outputs differ from the golden files " \
            "(MAPWATCH_UPDATE_GOLDEN=1 rewrites them):\n\n" + "\n\n".join(self.problems)


def test_seeds_golden(tmp_path: Path) -> None:
    golden, window = Golden(GOLDEN / "seeds"), Window()
    db, out = tmp_path / "m.db", tmp_path / "public"
    r = mapwatch(["refresh", "--db", str(db), "--source", str(SEEDS_DIR), "--out", str(out), "--base-url", BASE],
                 tmp_path)
    assert r.returncode == 0, r.stderr
    asked = answers(db, SEED_QUESTIONS, tmp_path)
    window.close()
    for name, text in published(out, window).items():
        golden.text(f"public/{name}", text)
    golden.text("ask.txt", normalise(asked, window))
    golden.text("failures.txt", failures(tmp_path, db))
    golden.check()


def failures(tmp: Path, db: Path) -> str:
    broken = tmp / "broken"
    broken.mkdir()
    for p in SEEDS_DIR.glob("*.txt"):
        (broken / p.name).write_bytes(p.read_bytes())
    (broken / "9999.99999.txt").write_text("not a map page\n", encoding="utf-8")
    (tmp / "notdb.db").write_text("junk\n", encoding="utf-8")
    env = clean_env(tmp) | {"MAPWATCH_REFRESH": "nonsense"}
    runs = [
        ("stats --db <missing>", mapwatch(["stats", "--db", str(tmp / "missing/x.db")], tmp)),
        ("stats --db <not a database>", mapwatch(["stats", "--db", str(tmp / "notdb.db")], tmp)),
        ("ask /paper 9999.99999", mapwatch(["ask", "--db", str(db), "/paper 9999.99999"], tmp)),
        ("ask /nosuchcommand", mapwatch(["ask", "--db", str(db), "/nosuchcommand"], tmp)),
        ("MAPWATCH_REFRESH=nonsense run", mapwatch(["run", "--db", str(db)], tmp, env)),
        ("refresh <folder with a broken page>",
         mapwatch(["refresh", "--db", str(tmp / "b.db"), "--source", str(broken), "--out", str(tmp / "bpub")], tmp)),
    ]
    lines = []
    for what, r in runs:
        err, out = ((s.strip().splitlines() or [""])[0].replace(str(tmp), "<TMP>") for s in (r.stderr, r.stdout))
        lines.append(f"{what}\nexit {r.returncode}\nstderr: {err}\nstdout: {out}\n")
    return "\n".join(lines)


MAP_FULL = ("feeds.opml", "index.html")
ORDER_BY_CLOCK = ("feeds/", "directions/")


def digest(name: str, text: str) -> str:
    """sha256 of a file; of its sorted lines for the feeds and direction pages, whose entries are
    ordered newest first by first-seen instant: a 2,000-page refresh stores its batches over a few
    wall-clock seconds, so which entries fall into the newest N, and their order, depends on where
    the second boundaries fall; sorting lines is not enough (the newest-N set changes), so for
    now only their presence is checked. TODO: a fixed clock for commands would let these be hashed."""
    if name.startswith(ORDER_BY_CLOCK):
        return "(clock-ordered: presence only)"
    return hashlib.sha256(text.encode()).hexdigest()


def test_generated_map_golden(tmp_path: Path) -> None:
    golden, window = Golden(GOLDEN / "map2k"), Window()
    corpus = generate(2000, seed=31)
    db, out = tmp_path / "m.db", tmp_path / "public"
    summaries = []
    for version, pages in (("v1", corpus.v1), ("v2", corpus.v2)):
        folder = tmp_path / version
        write(folder, pages)
        r = mapwatch(["refresh", "--db", str(db), "--source", str(folder), "--out", str(out), "--base-url", BASE],
                     tmp_path)
        assert r.returncode == 0, r.stderr
        summaries.append(r.stdout.replace(str(tmp_path), "<TMP>"))
    asked = answers(db, MAP_QUESTIONS, tmp_path)
    window.close()
    files = published(out, window)
    golden.text("refresh.txt", "".join(summaries))
    golden.text("sha256.txt", "".join(f"{digest(n, t)}  {n}\n" for n, t in files.items()))
    for name in MAP_FULL:
        golden.text(f"public/{name}", files[name])
    golden.text("ask.txt", normalise(asked, window))
    golden.check()
