"""groundwire's results as the evaluation records observability tools store (Phoenix span annotations, Langfuse
scores): one `Evaluation` per answer, from `verify_many`'s frame or from one adapter check.

It follows the adapters' one rule (common.py, docs/adapters.md): `score` is the share of supported claims by
default ("min": the answer score, the weakest claim's); the label is groundwire's decision (accept, escalate,
reject) and the outcome its routing (pass, fail, review), never a cut on the score; the explanation starts with
the outcome, as every adapter's reason does. A row verify_many could not check is an Evaluation labelled "error"
with its error code and message, and no score.

No framework is imported here: pandas only reads the frame it is given.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groundwire.adapters.common import DEFAULT_SCORE, OUTCOME_OF_ROUTE, AnswerScore, Assessment, Outcome
from groundwire.core.tracing import explain
from groundwire.foundation.types import Route, Verdict

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_NAME = "groundwire_faithfulness"
"""The evaluation's name (Phoenix annotation, Langfuse score), as the RAGAS metric is named."""
ERROR_LABEL = "error"
DECISION_SUFFIX = "_decision"
"""The decision's own record (a label, no score) is named the evaluation's name + this: a tool that shows a score
when there is one (Phoenix's span list, Langfuse's numeric chart) shows accept / escalate / reject apart."""
VERDICT_COLUMNS = {Verdict.SUPPORTED: "n_supported", Verdict.CONTRADICTED: "n_contradicted",
                   Verdict.NOT_FOUND: "n_not_found", Verdict.UNRESOLVED: "n_unresolved"}
"""verify_many's count column for each verdict."""


@dataclass(frozen=True)
class Evaluation:
    """One answer's evaluation, keyed by what it is about (`target`: a span id, a trace id)."""

    target: str
    name: str
    label: str
    """groundwire's decision: "accept", "escalate" or "reject"; "error" for a row that could not be checked."""
    explanation: str
    score: float | None = None
    outcome: Outcome | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS

    @property
    def decision_name(self) -> str:
        """The decision record's name: `name` + "_decision"."""
        return self.name + DECISION_SUFFIX

    @property
    def headline(self) -> str:
        """The explanation's first line (the outcome and counts), or all of it for a row that was not checked."""
        return self.explanation if self.label == ERROR_LABEL else self.explanation.splitlines()[0]


def from_frame(results: pd.DataFrame, *, claims: pd.DataFrame | None = None, score: AnswerScore = DEFAULT_SCORE,
               name: str = DEFAULT_NAME, targets: Sequence[str] | None = None) -> list[Evaluation]:
    """One Evaluation per row of `verify_many(df)`'s result. The target is the row's index label (verify_many keeps
    the input's index: index your frame by span or trace id), or the matching item of `targets`. With the claims
    frame of `verify_many(df, claims=True)`, each explanation also lists the row's unsupported claims."""
    if score not in ("share", "min"):
        raise ValueError(f"score must be 'share' or 'min', not {score!r}")
    if "route" not in results and "decision" in results:  # a frame of 0.1's verify_many
        warnings.warn("a verify_many result with a 'decision' column is read for one release: its column is "
                      "'route' now", DeprecationWarning, stacklevel=2)
        results = results.rename(columns={"decision": "route"})
    missing = [column for column in ("route", "score", "supported_share", "error_code") if column not in results]
    if missing:
        raise ValueError(f"not a verify_many result: no column {', '.join(missing)}")
    labels = list(results.index) if targets is None else list(targets)
    if len(labels) != len(results):
        raise ValueError(f"{len(labels)} targets for {len(results)} results")
    unsupported = _unsupported_claims(claims)
    records = results.to_dict("records")
    return [_from_row(str(target), row, unsupported.get(label, []), score, name)
            for target, label, row in zip(labels, results.index, records, strict=True)]


def from_assessment(assessment: Assessment, target: str = "", *, name: str = DEFAULT_NAME) -> Evaluation:
    """One adapter check (AdapterCheck.run) as an Evaluation: its score, outcome and full reason."""
    report = assessment.report
    return Evaluation(target, name, report.route.value, assessment.reason, assessment.score, assessment.outcome,
                      _metadata(report.route.value, assessment.outcome, report.score, report.supported_share,
                                len(report.claims), report.model_id))


def _from_row(target: str, row: Mapping[str, Any], unsupported: list[str], kind: AnswerScore,
              name: str) -> Evaluation:
    if _present(row.get("error_code")):
        explanation = f"error: {row['error_code']}: {row.get('error') or 'not checked'}"
        return Evaluation(target, name, ERROR_LABEL, explanation, metadata={"error_code": str(row["error_code"])})
    label = str(row["route"])
    outcome = OUTCOME_OF_ROUTE[Route(label)]
    verdicts = [verdict for verdict, column in VERDICT_COLUMNS.items() for _ in range(_count(row.get(column)))]
    head = explain(label, verdicts, float(row["score"]), abstained=bool(row.get("abstained")))
    explanation = "\n".join([head + (":" if unsupported else ""), *unsupported])
    value = float(row["supported_share"] if kind == "share" else row["score"])
    return Evaluation(target, name, label, explanation, value, outcome,
                      _metadata(label, outcome, float(row["score"]), float(row["supported_share"]), len(verdicts),
                                row.get("model_id")))


def _metadata(route: str, outcome: Outcome, score: float, share: float, claims: int,
              model_id: object) -> dict[str, Any]:
    # `score` is the weakest claim's, as on every groundwire surface; the share of supported claims is its own key.
    meta: dict[str, Any] = {"route": route, "outcome": outcome.value, "passed": outcome is Outcome.PASS,
                            "score": score, "supported_share": share, "claims": claims}
    if _present(model_id):
        meta["model_id"] = str(model_id)
    return meta


def _unsupported_claims(claims: pd.DataFrame | None) -> dict[Hashable, list[str]]:
    """{row label: ['- "claim": VERDICT, score 0.20', ...]} for the claims that are not SUPPORTED."""
    if claims is None:
        return {}
    found: dict[Hashable, list[str]] = {}
    for claim in _records(claims):
        if claim["verdict"] != Verdict.SUPPORTED.value:
            found.setdefault(claim["row"], []).append(
                f'- "{claim["text"]}": {claim["verdict"]}, score {float(claim["score"]):.2f}')
    return found


def _records(frame: pd.DataFrame) -> Iterable[dict[str, Any]]:
    return frame.to_dict("records")  # type: ignore[no-any-return]


def _count(value: object) -> int:
    return int(value) if _present(value) else 0  # type: ignore[call-overload]


def _present(value: object) -> bool:
    """Not None and not NaN (pandas fills a column's missing cells with either)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))
