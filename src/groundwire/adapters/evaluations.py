"""groundwire's results as the evaluation records observability tools store (Phoenix span annotations, Langfuse
scores): one `Evaluation` per answer, from `verify_many`'s frame or from one adapter check.

It follows the adapters' one rule (common.py, docs/adapters.md): the value is the share of supported claims by
default (`metric="score"`: the answer score, the weakest claim's), logged under the name of that quantity
(`groundwire_supported_share` / `groundwire_score`); the route is groundwire's routing (accept, escalate, reject),
logged as a record of its own (`groundwire_route`), and the outcome its pass / fail / review, never a cut on the
value; the explanation starts with the outcome, as every adapter's reason does. A row verify_many could not check
is an Evaluation routed "error", with its error code and message, and no value.

No framework is imported here: pandas only reads the frame it is given.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Never

from groundwire.adapters.common import (
    DEFAULT_METRIC,
    OUTCOME_OF_ROUTE,
    Assessment,
    Metric,
    Outcome,
    check_metric,
    metric_name,
)
from groundwire.core.settings import refuse_unknown_options
from groundwire.core.tracing import explain
from groundwire.foundation.types import Route, Verdict

if TYPE_CHECKING:
    import pandas as pd

ROUTE_NAME = "groundwire_route"
"""The route's own record (a label, no value): a tool that shows a score when there is one (Phoenix's span list,
Langfuse's numeric chart) shows accept / escalate / reject apart. With a `name=` of your own it is that name +
`ROUTE_SUFFIX`. The value's record is named after its quantity (`common.metric_name`)."""
ROUTE_SUFFIX = "_route"
ERROR_LABEL = "error"
VERDICT_COLUMNS = {Verdict.SUPPORTED: "n_supported", Verdict.CONTRADICTED: "n_contradicted",
                   Verdict.NOT_FOUND: "n_not_found", Verdict.UNRESOLVED: "n_unresolved"}
"""verify_many's count column for each verdict."""


@dataclass(frozen=True)
class Evaluation:
    """One answer's evaluation, keyed by what it is about (`target`: a span id, a trace id)."""

    target: str
    name: str
    """The value's record: the quantity it is (`groundwire_supported_share`, `groundwire_score`), or a name given."""
    route: str
    """groundwire's routing: "accept", "escalate" or "reject"; "error" for a row that could not be checked. It is the
    label of both records (Phoenix's annotation label, Langfuse's categorical score)."""
    explanation: str
    value: float | None = None
    """The quantity `metric` names (the share of supported claims by default); None for a row not checked. The
    answer score and the share are also in `metadata` ("score", "supported_share")."""
    outcome: Outcome | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    route_name: str = ROUTE_NAME
    """The route's record: `groundwire_route`, or the `name` given + "_route"."""

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS

    @property
    def headline(self) -> str:
        """The explanation's first line (the outcome and counts), or all of it for a row that was not checked."""
        return self.explanation if self.route == ERROR_LABEL else self.explanation.splitlines()[0]

    @property
    def label(self) -> str:
        """Deprecated (0.1's name): the route."""
        warnings.warn("Evaluation.label is deprecated: read Evaluation.route", DeprecationWarning, stacklevel=2)
        return self.route

    @property
    def score(self) -> float | None:
        """Deprecated (0.1's name for the logged value, which was the share by default): read `value`, or
        `metadata["score"]` for the answer score."""
        warnings.warn("Evaluation.score is deprecated: the logged value is Evaluation.value (the quantity metric= "
                      "names); the answer score is metadata['score']", DeprecationWarning, stacklevel=2)
        return self.value

    @property
    def decision_name(self) -> str:
        """Deprecated (0.1's name): `route_name`."""
        warnings.warn("Evaluation.decision_name is deprecated: read Evaluation.route_name", DeprecationWarning,
                      stacklevel=2)
        return self.route_name


def names(metric: Metric = DEFAULT_METRIC, name: str | None = None) -> tuple[str, str]:
    """The two records' names: the value's and the route's. None: the quantity's name and `groundwire_route`;
    a name given, it and it + "_route"."""
    if name is None:
        return metric_name(metric), ROUTE_NAME
    return name, name + ROUTE_SUFFIX


def from_frame(results: pd.DataFrame, *, claims: pd.DataFrame | None = None, metric: Metric = DEFAULT_METRIC,
               name: str | None = None, targets: Sequence[str] | None = None, **refused: Never) -> list[Evaluation]:
    """One Evaluation per row of `verify_many(df)`'s result. The target is the row's index label (verify_many keeps
    the input's index: index your frame by span or trace id), or the matching item of `targets`. With the claims
    frame of `verify_many(df, claims=True)`, each explanation also lists the row's unsupported claims. `name`:
    the value's record (None: the quantity's name; see `names`)."""
    refuse_unknown_options("from_frame()", refused, ("claims", "metric", "name", "targets"))
    check_metric(metric)
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
    value_name, route_name = names(metric, name)
    return [_from_row(str(target), row, unsupported.get(label, []), metric, value_name, route_name)
            for target, label, row in zip(labels, results.index, records, strict=True)]


def from_assessment(assessment: Assessment, target: str = "", *, name: str | None = None) -> Evaluation:
    """One adapter check (AdapterCheck.run) as an Evaluation: its value (the quantity of its `metric`), outcome and
    full reason."""
    report = assessment.report
    value_name, route_name = names(assessment.metric, name)
    return Evaluation(target, value_name, report.route.value, assessment.reason, assessment.value,
                      assessment.outcome,
                      _metadata(report.route.value, assessment.outcome, report.score, report.supported_share,
                                len(report.claims), report.model_id),
                      route_name)


def _from_row(target: str, row: Mapping[str, Any], unsupported: list[str], metric: Metric, name: str,
              route_name: str) -> Evaluation:
    if _present(row.get("error_code")):
        explanation = f"error: {row['error_code']}: {row.get('error') or 'not checked'}"
        return Evaluation(target, name, ERROR_LABEL, explanation, metadata={"error_code": str(row["error_code"])},
                          route_name=route_name)
    label = str(row["route"])
    outcome = OUTCOME_OF_ROUTE[Route(label)]
    verdicts = [verdict for verdict, column in VERDICT_COLUMNS.items() for _ in range(_count(row.get(column)))]
    head = explain(label, verdicts, float(row["score"]), abstained=bool(row.get("abstained")))
    explanation = "\n".join([head + (":" if unsupported else ""), *unsupported])
    value = float(row[metric])  # the frame's columns are named as the quantities are
    return Evaluation(target, name, label, explanation, value, outcome,
                      _metadata(label, outcome, float(row["score"]), float(row["supported_share"]), len(verdicts),
                                row.get("model_id")),
                      route_name)


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
