"""What a hostile arXiv answer costs its parser (tests/RELIABILITY.md, section 20, item 1).

    .venv/bin/python -m bench.arxiv_dtd [--sizes 1 3] [--codecs utf-8 utf-16-le] [--expat-only] [--memory-mib N]

The answer is `tests.scholarly_fakes.arxiv_bomb`: a feed with a DTD after a 5 KB comment
(past the first 4 KB) whose entity the rest of the answer references, 448 bytes of empty
elements for every 11 (40-fold, within the 100-fold expat allows), in UTF-8 or in UTF-16 with
a BOM. Each size and encoding is parsed by `parse_arxiv` in a child process of its own, so
its peak memory (ru_maxrss of `resource.getrusage`) is the parse's: the seconds it took, the
peak RSS, the RSS before the parse (the interpreter, the modules and the answer), and what
came of it (records, or the Malformed reason). With `--expat-only`, the scan of the whole text
is left out: expat alone refuses the DTD (the second of the two checks). With `--memory-mib`,
each child's address space is limited to that (RLIMIT_AS), as a container's memory limit would.
"""

from __future__ import annotations

import argparse
import codecs
import json
import resource
import subprocess
import sys
import time

MB = 1024 * 1024
BOMS = {"utf-8": b"", "utf-16-le": codecs.BOM_UTF16_LE}


def child(size_mb: float, codec: str, expat_only: bool, memory_mib: int | None) -> dict[str, object]:
    if memory_mib:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mib * MB, memory_mib * MB))
    from mapwatch.store.scholarly import parse
    from mapwatch.store.scholarly.parse import Malformed, parse_arxiv
    from tests.scholarly_fakes import ArxivEntry, arxiv_bomb, arxiv_entry_xml

    if expat_only:
        parse._dtd_in = lambda body: False  # the scan left out

    entry = arxiv_entry_xml("2412.10400", ArxivEntry("A survey", [("A. Author", [])]))
    body = arxiv_bomb(int(size_mb * MB), entry, codec=codec, bom=BOMS[codec])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        outcome = f"read: {len(parse_arxiv(body, ['2412.10400']))} record"
    except Malformed as e:
        outcome = f"Malformed: {e}"
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"bytes": len(body), "codec": codec, "seconds": seconds, "cpu_seconds": cpu, "rss_before_mib": before,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "outcome": outcome}


def took(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 1 else f"{seconds * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.0, 3.0], help="answer sizes in MB")
    ap.add_argument("--codecs", nargs="+", default=list(BOMS), choices=list(BOMS))
    ap.add_argument("--expat-only", action="store_true", help="leave the scan of the text out")
    ap.add_argument("--memory-mib", type=int, default=None, help="limit each child's address space to this")
    ap.add_argument("--child", nargs=2, metavar=("SIZE", "CODEC"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(float(args.child[0]), args.child[1], args.expat_only, args.memory_mib)))
        return
    print("| answer | encoding | wall time (CPU) | peak RSS (before the parse) | outcome |")
    print("| --- | --- | --- | --- | --- |")
    extra = ["--expat-only"] * args.expat_only + ([f"--memory-mib={args.memory_mib}"] if args.memory_mib else [])
    for size in args.sizes:
        for codec in args.codecs:
            cmd = [sys.executable, "-m", "bench.arxiv_dtd", "--child", str(size), codec, *extra]
            run = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if run.returncode:
                last = run.stderr.strip().splitlines()[-1:] or [""]
                print(f"| {size:g} MB | {codec} | - | - | exit {run.returncode}: {last[0][:200]} |")
                continue
            r = json.loads(run.stdout)
            print(f"| {r['bytes']:,} bytes | {codec} | {took(r['seconds'])} ({took(r['cpu_seconds'])}) | "
                  f"{r['peak_rss_mib']:,.0f} MiB "
                  f"({r['rss_before_mib']:,.0f}) | {r['outcome']} |")


if __name__ == "__main__":
    main()
