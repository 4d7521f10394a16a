"""Semantic answer cache: serve a stored answer only to the same question, scope and document set.

An entry is served only when all of these hold: cosine similarity of the query embeddings >= the threshold (0.92
by default), the two questions are one question by the guard (data.question_guard: the same figures, negation and
contrastive words; no word of one the opposite of a word of the other; every content word of each with its like
in the other; the same order and roles: "Did GitHub acquire Microsoft?" is not "Did Microsoft acquire GitHub?",
though the two embed at 0.989), the document-set version matches, and the permission scope matches.
Scope is a hard partition (entries of one scope are never compared with another's queries), so a
user's answer cannot reach another scope even on an identical question. Ingest invalidates the
entries that depend on the changed documents. In memory, per process; thread-safe.

The threshold is 0.92, not higher, because the guard decides what two near questions mean: plain rewordings (a
plural, an abbreviation, an added "usually") embed below 0.97, and the guard, not the cosine, refuses swapped,
opposite and other-entity questions (bench/cache_pairs.py; its figures are in docs/data-layer.md).
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from groundwire.core.lexicon import lexicon
from groundwire.data.question_guard import (
    QuestionShape,
    missing_parser,
    parser_available,
    read_question,
    same_question,
)
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.scoring.embedder import default_embedder

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.scoring.embedder import Embedder

DEFAULT_THRESHOLD = 0.92


@dataclass(frozen=True, slots=True)
class CacheHit:
    entry_id: str
    query: str
    """The cached query that matched (not the one asked)."""
    response: Any
    similarity: float
    doc_version: str


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    misses: int
    invalidations: int
    """Entries removed because a document they depend on changed (or their scope was cleared)."""
    evictions: int
    entries: int
    stale_version_misses: int
    """Misses where a similar-enough entry existed but for another document-set version."""
    guarded_misses: int = 0
    """Misses where a similar-enough entry existed but the guard found another question (data.question_guard:
    figures, negation, contrast, a word and its opposite, a content word without its like, order or roles)."""

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "lookups": self.lookups,
            "hit_rate": self.hit_rate,
            "invalidations": self.invalidations,
            "evictions": self.evictions,
            "entries": self.entries,
            "stale_version_misses": self.stale_version_misses,
            "guarded_misses": self.guarded_misses,
        }


@dataclass(slots=True)
class _Entry:
    query: str
    vector: np.ndarray
    response: Any
    doc_version: str
    doc_ids: frozenset[str]
    shape: QuestionShape


class SemanticCache:
    """Cache keyed by query meaning, partitioned by scope, guarded by document-set version.

    `doc_version` is whatever identifies the document set an answer was produced from; with the
    store it is `str(store.doc_version(scope=...))`. `doc_ids` are the documents an answer drew on,
    so that `invalidate(scope=..., doc_ids=...)` after an ingest drops exactly the affected entries.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        max_entries: int = 10_000,
        parse: bool | None = None,
    ) -> None:
        """`parse`: read each question's roles with spaCy's dependency parse (`question_guard`): None (the
        default) where the [entities] extra is installed, True always (an error without it), False never (the
        core guard alone: word order)."""
        if not 0.0 < threshold <= 1.0:
            raise InputError(f"cache threshold must be in (0, 1], not {threshold}", code=ErrorCode.INVALID_SETTINGS)
        if max_entries < 1:
            raise InputError("max_entries must be at least 1", code=ErrorCode.INVALID_SETTINGS)
        self._embedder = embedder
        self.threshold = threshold
        self.max_entries = max_entries
        if parse and not parser_available():
            raise missing_parser("SemanticCache(parse=True)")
        self.parse = parser_available() if parse is None else parse
        self._lock = threading.Lock()
        self._scopes: dict[str, OrderedDict[str, _Entry]] = {}
        # The last queries' vectors: a miss is followed by a put of the same query (generate, then store), which
        # would otherwise embed it twice. The embedder is deterministic, so a remembered vector is the same.
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._hits = self._misses = self._invalidations = self._evictions = self._stale = self._guarded = 0

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    def get(self, query: str, *, scope: str, doc_version: str | int) -> CacheHit | None:
        """The stored answer for this query in this scope and document-set version, or None (a miss)."""
        vector = self._embed(query)
        shape = self._read(query)
        doc_version = str(doc_version)
        with self._lock:
            entries = self._scopes.get(_scope(scope)) or OrderedDict()
            ids = list(entries)
            similarities = np.stack([entries[i].vector for i in ids]) @ vector if ids else np.zeros(0)
            best_id, best_sim, stale, guarded = None, -1.0, False, False
            for position in np.flatnonzero(similarities >= self.threshold):
                entry_id = ids[position]
                if not same_question(entries[entry_id].shape, shape):
                    guarded = True
                elif entries[entry_id].doc_version != doc_version:
                    stale = True
                elif similarities[position] > best_sim:
                    best_id, best_sim = entry_id, float(similarities[position])
            if best_id is None:
                self._misses += 1
                self._stale += stale
                self._guarded += guarded
                return None
            entries.move_to_end(best_id)  # least recently used goes first when full
            entry = entries[best_id]
            self._hits += 1
            return CacheHit(best_id, entry.query, entry.response, best_sim, entry.doc_version)

    def put(
        self,
        query: str,
        response: Any,
        *,
        scope: str,
        doc_version: str | int,
        doc_ids: Iterable[str] = (),
    ) -> str:
        """Store an answer; returns the entry id. An entry of the same scope and document-set version that
        this query matches is replaced. Entries for other versions stay: a fingerprint version may belong
        to another document selection that is still current. Stale ones age out by LRU eviction."""
        vector = self._embed(query)
        doc_version = str(doc_version)
        entry = _Entry(query, vector, response, doc_version, frozenset(doc_ids), self._read(query))
        entry_id = uuid.uuid4().hex
        with self._lock:
            entries = self._scopes.setdefault(_scope(scope), OrderedDict())
            duplicates = [
                i
                for i, e in entries.items()
                if e.doc_version == doc_version
                and same_question(e.shape, entry.shape)
                and float(e.vector @ vector) >= self.threshold
            ]
            for old_id in duplicates:
                del entries[old_id]
            entries[entry_id] = entry
            while sum(len(e) for e in self._scopes.values()) > self.max_entries:
                # The fullest scope gives up its least recently used entry, so one busy tenant cannot
                # flush everyone else's cache.
                fullest = max(self._scopes.values(), key=len)
                fullest.popitem(last=False)
                self._evictions += 1
        return entry_id

    def invalidate(self, *, scope: str, doc_ids: Iterable[str] | None = None) -> int:
        """Drop the scope's entries that depend on any of `doc_ids` (all its entries when None).

        An entry stored without doc_ids depends on the whole document set and is always dropped.
        Returns how many entries were removed.
        """
        targets = None if doc_ids is None else frozenset(doc_ids)
        with self._lock:
            entries = self._scopes.get(_scope(scope))
            if not entries:
                return 0
            doomed = [i for i, e in entries.items() if targets is None or not e.doc_ids or e.doc_ids & targets]
            for entry_id in doomed:
                del entries[entry_id]
            self._invalidations += len(doomed)
            return len(doomed)

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                invalidations=self._invalidations,
                evictions=self._evictions,
                entries=sum(len(e) for e in self._scopes.values()),
                stale_version_misses=self._stale,
                guarded_misses=self._guarded,
            )

    def warm(self) -> None:
        """Load what the first lookup would: the embedder, WordNet and (with `parse`) spaCy's pipeline."""
        self._embed("Is the service warm?")
        self._read("Is the service warm?")

    def _read(self, query: str) -> QuestionShape:
        # WordNet (about 1.5 s) and spaCy (1-4 s) load once per process, on first use: here, outside the lock.
        lexicon()
        return read_question(query, parse=self.parse)

    def _embed(self, query: str) -> np.ndarray:
        if not isinstance(query, str) or not query.strip():
            raise InputError("the cache needs a non-empty query", code=ErrorCode.INVALID_INPUT)
        text = " ".join(query.split())
        with self._lock:
            vector = self._recent.get(text)
            if vector is not None:
                self._recent.move_to_end(text)
                return vector
        vector = np.asarray(self.embedder.embed([text])[0])
        with self._lock:
            self._recent[text] = vector
            if len(self._recent) > _RECENT_QUERIES:
                self._recent.popitem(last=False)
        return vector


_RECENT_QUERIES = 64
"""Query vectors remembered for the put that follows a miss (and repeated questions)."""


def _scope(scope: str) -> str:
    if not isinstance(scope, str) or not scope.strip():
        raise InputError("a permission scope is required (a non-empty string)", code=ErrorCode.INVALID_INPUT)
    return scope
