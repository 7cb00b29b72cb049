"""Saving in batches, the one way: items in, a batch stored every `batch_size` items.

A saver collects items (`take`) into its current batch; `cut` hands the batch over and starts
a new one; `store` writes a batch that was cut, in one go. The ingest's saver
(store.database.ingest: prepared pages and rejections) and the HTTP refresh's (store.sources.crawl_saver:
crawl outcomes) are both driven this way: `save_in_batches` for an iterable, in the calling
thread; store.sources.refresh's pipeline for a crawl on the event loop, `store` in its writer.
Nothing is kept once a batch is stored, so the memory a save needs does not grow with its size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

Progress = Callable[[int, int], None]  # (done, total)
Item = TypeVar("Item", contravariant=True)
Batch = TypeVar("Batch")


class BatchSaver(Protocol[Item, Batch]):
    @property
    def pending(self) -> int:
        """Items in the current batch (what counts towards `batch_size`)."""

    def take(self, item: Item) -> bool:
        """Add an item to the current batch; True when it counts for progress."""

    def cut(self) -> Batch:
        """The current batch, handed over; a new one starts."""

    def store(self, batch: Batch) -> None:
        """Write a batch that was cut."""


def flush(saver: BatchSaver[Item, Batch]) -> None:
    saver.store(saver.cut())


def save_in_batches(saver: BatchSaver[Item, Batch], items: Iterable[Item], batch_size: int,
                    progress: Progress | None = None, done: int = 0,
                    total: Callable[[int], int] = lambda done: done) -> int:
    """Take every item, storing a batch whenever `batch_size` are pending and the rest at the
    end; `progress(done, total(done))` after each item that counts. Returns the count."""
    for item in items:
        counted = saver.take(item)
        if saver.pending >= batch_size:
            flush(saver)
        if counted:
            done += 1
            if progress:
                progress(done, total(done))
    flush(saver)
    return done
