"""The hybrid combiner: a logistic regression over claim features, stored as JSON and applied with numpy.

It maps `ClaimResult.features` (model support/contradiction, lexical novelty, deterministic-check flags,
claim length and position) to a calibrated claim support score in [0, 1]. Fitting lives in
groundwire.calibration.combine (scikit-learn); applying it here needs only numpy.

A feature name may carry a transform prefix: "logit:support" is log(p / (1 - p)) of "support".
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

_EPS = 1e-4
LONG_FORM_CLAIMS = 4
"""An answer with at least this many claims is long-form and is calibrated apart from short answers."""


def calibration_key(task: str | None, n_claims: int) -> str | None:
    """The key that picks an answer's combiner and thresholds: its task type, plus "/long" for a long-form
    answer ("qa/long").

    The min over a dozen claims sits lower than the min over one or two, and multi-paragraph RAG answers
    differ from one-line answers in what goes wrong, so a bundle may calibrate them apart. A key the
    bundle has no calibration for gets the pooled one.
    """
    return f"{task}/long" if task and n_claims >= LONG_FORM_CLAIMS else task


def threshold_keys(key: str | None) -> tuple[str, ...]:
    """The keys an answer's thresholds are looked up under, most specific first, ending with the pooled "":
    "summary/long" -> ("summary/long", "summary", ""). A key calibrated on too few answers is not stored,
    so it falls back to its parent, then to the pooled pair."""
    if not key:
        return ("",)
    parent = key.rpartition("/")[0]
    return (key, *threshold_keys(parent)) if parent else (key, "")


TRANSFORMS: dict[str, Callable[[float], float]] = {
    "logit": lambda p: math.log(min(max(p, _EPS), 1 - _EPS) / (1 - min(max(p, _EPS), 1 - _EPS))),
    "log1p": lambda x: math.log1p(max(x, 0.0)),
}


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    """One row per feature mapping, one column per name (a transform prefix applied). Built a column at a time:
    a refit scores every claim's readings dozens of times, and this is its inner loop."""
    out = np.empty((len(rows), len(names)), dtype=np.float64)
    for j, name in enumerate(names):
        transform, _, base = name.rpartition(":")
        try:
            column = [float(row[base]) for row in rows]
        except KeyError:
            lacking = next(row for row in rows if base not in row)
            raise KeyError(f"combiner needs feature {base!r}, which the verifier did not produce; "
                           f"available: {sorted(lacking)}") from None
        if transform:
            apply = TRANSFORMS[transform]
            column = [apply(value) for value in column]
        out[:, j] = column
    return out


@dataclass(frozen=True, slots=True)
class LogisticCombiner:
    """P(claim supported) = sigmoid(((x - mean) / scale) . coef + intercept)."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    meta: Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        n = len(self.names)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError("combiner names, mean, scale and coef must have the same length")

    def predict(self, features: Sequence[Mapping[str, float]], task: str | None = None) -> np.ndarray:
        """Claim support scores; `task` is accepted for the Combiner protocol and ignored."""
        if not features:
            return np.zeros(0)
        x = (feature_matrix(features, self.names) - np.asarray(self.mean)) / np.asarray(self.scale)
        z = x @ np.asarray(self.coef) + self.intercept
        scores: np.ndarray = np.exp(-np.logaddexp(0.0, -z))  # sigmoid without overflow for large |z|
        return scores

    def to_json(self) -> str:
        return json.dumps({"kind": "logistic", **asdict(self)}, indent=2)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> LogisticCombiner:
        if data.get("kind") != "logistic":
            raise ValueError(f"unknown combiner kind {data.get('kind')!r}; expected 'logistic'")
        return cls(names=tuple(data["names"]), mean=tuple(data["mean"]), scale=tuple(data["scale"]),  # type: ignore[arg-type]
                   coef=tuple(data["coef"]), intercept=float(data["intercept"]), meta=data.get("meta"))  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> LogisticCombiner:
        return cls.from_dict(json.loads(Path(path).read_text()))


@dataclass(frozen=True, slots=True)
class TaskCombiner:
    """One logistic combiner per task type ("qa", "summary", "data2text", ...) and a pooled one for the rest.

    Features weigh differently by task: on JSON records the claim count and novel words matter most, on
    short QA answers the model's support does. An unknown or absent task gets the pooled combiner.
    """

    default: LogisticCombiner
    by_task: Mapping[str, LogisticCombiner]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for c in (self.default, *self.by_task.values()) for n in c.names))

    def predict(self, features: Sequence[Mapping[str, float]], task: str | None = None) -> np.ndarray:
        return self.by_task.get(task or "", self.default).predict(features)

    def to_json(self) -> str:
        return json.dumps({"kind": "per_task", "default": asdict(self.default),
                           "by_task": {t: asdict(c) for t, c in sorted(self.by_task.items())}}, indent=2)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> TaskCombiner:
        def one(d: Mapping[str, object]) -> LogisticCombiner:
            return LogisticCombiner.from_dict({"kind": "logistic", **d})

        return cls(default=one(data["default"]),  # type: ignore[arg-type]
                   by_task={str(t): one(d) for t, d in data["by_task"].items()})  # type: ignore[attr-defined]


def load_combiner(path: str | Path) -> LogisticCombiner | TaskCombiner:
    """A combiner file of either kind."""
    data = json.loads(Path(path).read_text())
    if data.get("kind") == "per_task":
        return TaskCombiner.from_dict(data)
    return LogisticCombiner.from_dict(data)
