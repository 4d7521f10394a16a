"""Work shared by the checks of one task on one context: what a check computes from the context alone (each window's
text as compared, the context's figure index, its content words) is computed once for all of them.

repair checks the answer, then each part of a claim it splits and the repaired answer, every one against the same
chunks; each check read the whole context again. On 200,000 characters of '[1][2][3]' (66,667 figures, 904
windows) one check took about 4 s, nearly all of it context work, and a repair of one claim that splits in two took
12 s (bench/hostile.py counted it a hang). A task opens `shared_work()` around its checks; the steps that depend on
the context only ask `remembered` for their result. Outside `shared_work` nothing is kept (the CLI's and the
library's single checks run as before), and what a task kept goes with it: no process-wide cache grows with the
contexts it has seen. The memo lives in a context variable, so it belongs to the thread (or task) that opened it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar, cast

T = TypeVar("T")

_current: ContextVar[dict[tuple[str, Hashable], object] | None] = ContextVar("groundwire_shared_work", default=None)


@contextmanager
def shared_work() -> Iterator[None]:
    """Keep what the checks inside the block compute from their context (`remembered`) until it ends; inside
    another `shared_work`, the outer one's memo is used."""
    if _current.get() is not None:
        yield
        return
    reset = _current.set({})
    try:
        yield
    finally:
        _current.reset(reset)


def remembered(kind: str, key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, or, inside `shared_work`, what it returned the first time for (`kind`, `key`). `compute` must
    depend on `key` alone. A computation that raises (a check stopped at its time budget) keeps nothing."""
    memo = _current.get()
    if memo is None:
        return compute()
    slot = (kind, key)
    if slot in memo:
        return cast(T, memo[slot])
    value = memo[slot] = compute()
    return value
