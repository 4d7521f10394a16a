"""Issue 58, item 1: the long steps of a check stop at its time budget (core.cancel).

A service request's check runs under a CancelToken; these tests run the steps under a token that is already cancelled
(or is cancelled by the work itself) and assert that the step stops at a checkpoint of its own, and that the same
step without a token (the CLI, the library) runs to its end. Nothing here is timed."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from groundwire.core.cancel import Cancelled, CancelToken, awaited, batches, cancellable, commit
from groundwire.foundation.types import Chunk
from groundwire.scoring.base import PairScores

LONG = " ".join(f"The pump of unit {n} runs at {n % 90 + 5} bar since week {n % 52}." for n in range(400))
"""About 24,000 characters: long enough that reading its figures checks the token (figures.LONG_TEXT)."""


def _stopped() -> CancelToken:
    token = CancelToken()
    token.cancel()
    return token


class CountingScorer:
    """A scorer whose support is the hypothesis' number, that records its calls and may cancel a token in its first."""

    model_id, max_tokens = "counting", None

    def __init__(self, cancels: CancelToken | None = None) -> None:
        self.calls: list[int] = []
        self.cancels = cancels

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        self.calls.append(len(pairs))
        if self.cancels is not None:
            self.cancels.cancel()
        support = np.array([float(hypothesis) for _, hypothesis in pairs], dtype=np.float32)
        return PairScores(support, support / 2, np.array([int(h) % 2 == 0 for _, h in pairs], dtype=bool))


PAIRS = [("premise", str(n)) for n in range(100)]


def test_the_scorer_batches_stop_once_the_token_is_cancelled_between_them() -> None:
    from groundwire.core.batched import score_in_batches
    from groundwire.core.cancel import FIRST_BATCH

    token = CancelToken.after(600)
    scorer = CountingScorer(cancels=token)  # the caller goes while the first batch is scored
    with cancellable(token), pytest.raises(Cancelled) as stopped:
        score_in_batches(scorer, PAIRS)
    assert stopped.value.reason == "disconnected"
    assert scorer.calls == [FIRST_BATCH]  # the first batch, and no other
    alone = CountingScorer()
    whole = score_in_batches(alone, PAIRS)  # without a token: the one batched call, as before
    assert alone.calls == [len(PAIRS)]
    assert whole.support.tolist() == list(range(100))


def test_batched_scores_are_the_pairs_own_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from functools import partial

    from groundwire.core import batched
    from groundwire.core.batched import score_in_batches

    # Batches of one pair after the first, whatever the machine's speed: every seam of the concatenation is used.
    monkeypatch.setattr(batched, "batches", partial(batches, first=7, longest_s=0.0))
    scorer = CountingScorer()
    with cancellable(CancelToken.after(600)):
        split = score_in_batches(scorer, PAIRS)
    assert scorer.calls == [7] + [1] * 93
    whole = CountingScorer().score(PAIRS)
    assert split.support.tolist() == whole.support.tolist()
    assert split.contradiction is not None and whole.contradiction is not None
    assert split.contradiction.tolist() == whole.contradiction.tolist()
    assert split.truncated is not None and whole.truncated is not None
    assert split.truncated.tolist() == whole.truncated.tolist()


def test_batches_without_a_token_are_one_or_the_largest_allowed() -> None:
    assert list(batches(10)) == [slice(0, 10)]
    assert list(batches(10, most=4)) == [slice(0, 4), slice(4, 8), slice(8, 10)]
    assert list(batches(0)) == []
    with cancellable(CancelToken.after(600)):
        sizes = [part.stop - part.start for part in batches(50, first=5, most=8, longest_s=600)]
    assert sizes[0] == 5 and max(sizes) <= 8 and sum(sizes) == 50


def test_the_context_index_checks_the_token() -> None:
    from groundwire.core.checks.context import ContextIndex

    chunks = [Chunk("S1", "The pump runs at 40 bar. The valve opens at 5 bar.")]
    with cancellable(_stopped()), pytest.raises(Cancelled):
        ContextIndex.build(chunks)
    assert ContextIndex.build(chunks).keys  # without a token it is built


def test_reading_a_long_text_s_figures_checks_the_token_and_a_short_one_does_not() -> None:
    from groundwire.core.figures import LONG_TEXT, canonical_text, extract_figures

    assert len(LONG) >= LONG_TEXT
    for step in (extract_figures, canonical_text):
        with cancellable(_stopped()), pytest.raises(Cancelled):
            step(LONG)
        with cancellable(_stopped()):  # a sentence is read thousands of times a check: no checkpoint there
            assert step("The pump runs at 40 bar.")
    assert extract_figures(LONG)


def test_cutting_the_context_into_windows_checks_the_token() -> None:
    from groundwire.core.windows import claim_windows, make_windows
    from groundwire.foundation.types import Claim

    chunks = [Chunk("S1", LONG)]
    scorer = CountingScorer()
    with cancellable(_stopped()), pytest.raises(Cancelled):
        make_windows(chunks, budget=64, count_tokens=scorer.count_tokens)
    claims = [Claim("The pump runs at 40 bar.", (0, 24), "The pump runs at 40 bar.")]
    with cancellable(_stopped()), pytest.raises(Cancelled):
        claim_windows(claims, chunks, 256, scorer.count_tokens)
    windows, _ = claim_windows(claims, chunks, 256, scorer.count_tokens)
    assert len(windows) > 1


def test_a_verbatim_search_over_many_windows_checks_the_token() -> None:
    from groundwire.core.verbatim import verbatim_match

    windows = ["The pump of unit 3 runs at 8 bar since week 3."] * 5
    claim = "The pump of unit 3 runs at 8 bar since week 3."
    with cancellable(_stopped()), pytest.raises(Cancelled):
        verbatim_match(claim, windows, range(5))
    assert verbatim_match(claim, windows, range(5)) is not None


def test_the_meaning_layer_embeds_in_batches_that_check_the_token() -> None:
    from groundwire.core.meaning import align

    class Embeds:
        model_id, dim = "fake", 4

        def __init__(self) -> None:
            self.calls = 0

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            self.calls += 1
            return np.ones((len(texts), 4), dtype=np.float32) / 2

    embedder = Embeds()
    with cancellable(_stopped()), pytest.raises(Cancelled):
        align(["The pump runs at 40 bar."], [Chunk("S1", LONG)], embedder)
    assert embedder.calls == 0
    assert align(["The pump runs at 40 bar."], [Chunk("S1", LONG)], embedder)[0] is not None


def test_a_committed_result_is_waited_for_and_an_abandoned_work_cannot_commit() -> None:
    token = CancelToken.after(600)
    with cancellable(token):
        commit()
    assert token.abandon() is False  # its row is being written: the caller waits for it
    assert token.reason is None
    later = CancelToken.after(600)
    assert later.abandon() is True  # the caller answered 504: the work stops at its next checkpoint or commit
    assert later.reason == "deadline"
    with cancellable(later), pytest.raises(Cancelled) as stopped:
        commit()
    assert stopped.value.reason == "deadline"
    parent = CancelToken.after(600)
    child = parent.within(1)
    parent.abandon()
    assert child.reason == "deadline"  # the eval loop's reserve stops with the request
    commit()  # without a token: nothing


def test_a_load_awaited_under_a_token_stops_the_work_not_the_load() -> None:
    release = threading.Event()
    loads: list[int] = []

    def load() -> str:
        assert release.wait(30)
        loads.append(1)
        return "model"

    with cancellable(_stopped()), pytest.raises(Cancelled):
        awaited(load)
    release.set()  # the load goes on without the work that asked for it
    with cancellable(CancelToken.after(600)):
        assert awaited(load) == "model"
    assert loads == [1]  # loaded once, for both
