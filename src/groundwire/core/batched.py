"""A scorer's scores for many pairs in batches that fit a time budget (core.cancel.batches).

One call scores every pair of a check's matrix; under a service request's time budget, one call on a large context
(thousands of pairs) could not be stopped before it ended, and the request overran its budget by the call's length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groundwire.core.cancel import batches
from groundwire.scoring.base import PairScores, Scorer


def score_in_batches(scorer: Scorer, pairs: Sequence[tuple[str, str]]) -> PairScores:
    """The scorer's scores for `pairs`: one call, or, for work under a time budget (a service request), batches
    that each fit what is left of it, with a checkpoint between them (core.cancel.batches), so that a large matrix
    stops within about one pair of its deadline. A pair's score does not depend on its batch (the bundled model's, up
    to rounding: a batch is padded to its longest pair)."""
    parts = [scorer.score(pairs[part]) for part in batches(len(pairs))]
    if len(parts) <= 1:
        return parts[0] if parts else scorer.score(pairs)
    contradiction = None
    if all(part.contradiction is not None for part in parts):
        contradiction = np.concatenate([part.contradiction for part in parts if part.contradiction is not None])
    truncated = None
    if any(part.truncated is not None for part in parts):
        truncated = np.concatenate(
            [part.truncated if part.truncated is not None else np.zeros(len(part.support), bool) for part in parts]
        )
    return PairScores(np.concatenate([part.support for part in parts]), contradiction, truncated)
