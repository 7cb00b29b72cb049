"""Background work at a lower CPU priority, so that the bot's answers come first.

On a machine with few cores a refresh (its writer and its parse workers) keeps the CPUs busy,
and a command answered meanwhile spends most of its time waiting for one (docs/configuration.md,
"Configuration": `MAPWATCH_BACKGROUND_NICE`). Work that can wait therefore lowers its own
priority, the way `nice` would:

- `mapwatch run`'s tick does its database work (the refresh's batches, the publish) in one
  thread of its own and its parsing in threads of their own, which lower their priority
  (`MAPWATCH_BACKGROUND_NICE`, default 10); the crawl's requests go out from the event loop;
  the bot, the feed server and the other threads keep theirs;
- `mapwatch ingest` and `mapwatch refresh` run from the shell do the same when
  `MAPWATCH_BACKGROUND_NICE` is set;
- threads and parse workers started by that work inherit its priority.

A priority is only ever lowered: raising it back needs privileges an ordinary user lacks.
On Linux a thread has a priority of its own (`os.setpriority` on its native id); elsewhere
only the whole process can be lowered, so a thread there keeps its priority.
"""

from __future__ import annotations

import os
import sys
import threading

from mapwatch.store.settings_table import MAX_NICE

ENV = "MAPWATCH_BACKGROUND_NICE"


def lower_thread_priority(steps: int | None) -> bool:
    """Lower the calling thread's CPU priority by `steps` (nice values, capped at 19). True
    when it was lowered; False for 0/None steps, or where a thread cannot be lowered alone."""
    if not steps or not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()  # on Linux, PRIO_PROCESS with a thread id is that thread
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(MAX_NICE, current + steps))
    except OSError:
        return False
    return True


def lower_priority_if_asked(steps: int | None) -> bool:
    """For `mapwatch ingest` and `mapwatch refresh`: lower this thread's priority when
    $MAPWATCH_BACKGROUND_NICE asks for it (`steps`: the command's `nice_steps(None)`; None,
    unset: unchanged)."""
    return lower_thread_priority(steps)
