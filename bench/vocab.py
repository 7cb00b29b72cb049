"""A title and abstract vocabulary closer to real papers than the field words of bench/words.py.

Real titles draw on some thousands of words with a Zipf-like frequency: a few words
("learning", "model") are in a large share of papers, most words are rare. `zipf()` gives
such a vocabulary, deterministic for a seed: the field words (bench/words.py) first
(the most frequent ranks), then made-up words built from syllables, `size` words in all,
drawn with weight 1 / rank ** exponent.

    from bench.vocab import zipf
    v = zipf()            # 6,000 words, exponent 1.0, seed 1
    v.words(rng, 8)       # eight words for a title
    v.query_words(rng)    # words as a user would search them (frequent and rare mixed)
"""

from __future__ import annotations

import itertools
import random
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

from bench.words import FIELD_WORDS

DEFAULT_SIZE = 6_000
DEFAULT_EXPONENT = 1.0
_ONSETS = ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "cl", "dr", "fl", "gr", "pl", "pr", "sk", "st", "tr", "ch", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
_CODAS = ("", "n", "r", "s", "l", "m", "x", "nt", "rk", "st")


@dataclass(frozen=True)
class Vocabulary:
    """Words by rank (most frequent first) and their cumulative Zipf weights."""

    ranked: tuple[str, ...]
    cumulative: tuple[float, ...]

    def words(self, rng: random.Random, k: int) -> list[str]:
        """k words drawn by frequency."""
        total = self.cumulative[-1]
        return [self.ranked[bisect_left(self.cumulative, rng.random() * total)] for _ in range(k)]

    def query_words(self, rng: random.Random) -> list[str]:
        """1-3 words for a search: half drawn by frequency (common words, many matches),
        half uniformly over the vocabulary (mostly rare words, few matches)."""
        k = rng.randint(1, 3)
        if rng.random() < 0.5:
            return self.words(rng, k)
        return [self.ranked[rng.randrange(len(self.ranked))] for _ in range(k)]

    def share_of_top(self, n: int) -> float:
        """The share of drawn words that are among the n most frequent."""
        return self.cumulative[n - 1] / self.cumulative[-1]


def _made_up_words(rng: random.Random, taken: set[str]) -> Iterator[str]:
    """Pronounceable made-up words, never one already taken."""
    while True:
        syllables = rng.randint(2, 4)
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        word += rng.choice(_CODAS)
        if word not in taken:
            taken.add(word)
            yield word


def zipf(size: int = DEFAULT_SIZE, exponent: float = DEFAULT_EXPONENT, seed: int = 1,
         field_words: tuple[str, ...] | None = None) -> Vocabulary:
    """`size` words, the field words first, weighted 1 / rank ** exponent."""
    if field_words is None:
        field_words = FIELD_WORDS
    rng = random.Random(seed * 104_729 + size)
    head = list(dict.fromkeys(field_words))[:size]
    taken = set(head)
    tail = list(itertools.islice(_made_up_words(rng, taken), size - len(head)))
    ranked = tuple(head + tail)
    cumulative = tuple(itertools.accumulate(1 / (r + 1) ** exponent for r in range(len(ranked))))
    return Vocabulary(ranked, cumulative)
