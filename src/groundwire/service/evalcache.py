"""Eval-loop results cached per release and scope, until the scope's log changes.

The eval loop re-runs the verifier over a sample of the log (48 s for limit=10000 in issue 14). Its result
depends only on the release (model, calibration, code version), the sample size and the scope's rows, so a
result is kept under those and served until a request, feedback, eval run or document is added to the scope.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class EvalCache(Generic[T]):
    """Results (the eval loop's, the labels section's) kept per key, the newest `max_entries`."""

    def __init__(self, *, max_entries: int = 32) -> None:
        self._entries: OrderedDict[Hashable, T] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    def get_or_compute(self, key: Hashable, compute: Callable[[], T],
                       keep: Callable[[T], bool] = lambda _: True) -> T:
        """The cached result for `key`, or `compute()`'s (kept when `keep` says so); concurrent callers of one key
        compute it once."""
        with self._lock:
            flight = self._computing.setdefault(key, threading.Lock())
        with flight:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    return self._entries[key]
            result = compute()
            if keep(result):
                self.put(key, result)
            with self._lock:
                self._computing.pop(key, None)
            return result

    def put(self, key: Hashable, result: T) -> None:
        with self._lock:
            self._entries[key] = result
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
