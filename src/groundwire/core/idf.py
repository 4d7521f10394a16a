"""Word rarity (inverse document frequency) from a table built on the training pairs (train/idf.py).

A claim that adds "various important benefits" to its context adds common words; one that adds "Dr. Lindqvist"
or "hydrochlorothiazide" adds rare ones, and rare words are where fabricated specifics live. The table ships in
the package (models/idf.json.gz, 0.3 MB) and loads once, on first use.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
from collections.abc import Iterable
from importlib import resources

TABLE = "models/idf.json.gz"


@functools.cache
def _table() -> tuple[dict[str, int], int]:
    with gzip.open(str(resources.files("groundwire") / TABLE), "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    return data["df"], int(data["documents"])


def idf(word: str) -> float:
    """log((documents + 1) / (df + 1)) of a stemmed content word; a word the table lacks counts as seen once."""
    df, documents = _table()
    return math.log((documents + 1) / (df.get(word, 0) + 1))


def weighted_share(words: Iterable[str], found: frozenset[str] | set[str]) -> float:
    """The rarity-weighted share of `words` that are in `found` (1.0 for no words)."""
    total = hit = 0.0
    for word in words:
        weight = idf(word)
        total += weight
        hit += weight if word in found else 0.0
    return hit / total if total else 1.0
