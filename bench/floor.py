"""Can a combiner be kept from ranking below its own lexical feature on any dataset family? Leave-one-dataset-out.

    .venv/bin/python bench/lodo.py --cache runs/issue33/features.jsonl --lexical-cache runs/issue33/lexical.jsonl   # first
    .venv/bin/python bench/floor.py --cache runs/issue33/features.jsonl --lexical-cache runs/issue33/lexical.jsonl

Every recipe is fitted on the other families and scored on the held-out one (calibration.lodo), as bench/lodo.py does:
the shipped recipe (mono), with the meaning layer's paraphrase gate (+gate), with the meaning features in the
combiner (meaningF), and answer-level blends of the combiner's answer score with the lexical baseline's (a weighted
mean, the min, the geometric mean, and a logistic stack of the two fitted on the training families). Per recipe:
mean AUROC, mean escalation, the worst family's false-accept and false-reject rates, then each family's AUROC minus
the lexical baseline's (issue 33's floor: no family more than 0.01 below).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from groundwire.calibration import lodo
from groundwire.calibration.combine import ClaimRow, answers_of, load_rows
from groundwire.calibration.families import family
from groundwire.calibration.recipe import Fitted, Kind, fit_given, fit_recipe
from groundwire.calibration.thresholds import Routing

Key = tuple[str, str]
Recipe = Callable[[Sequence[ClaimRow]], Fitted]
ROUTING: Routing = {"target_far": 0.10, "target_frr": 0.10}


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return float(np.log(p / (1 - p)))


def combiner(kind: Kind, *, gate: bool) -> Recipe:
    def fit(train: Sequence[ClaimRow]) -> Fitted:
        fitted = fit_recipe(train, kind=kind, **ROUTING)
        return Fitted(fitted.combiner, fitted.pooled, fitted.by_key, gate=gate)

    return fit


def blended(how: str, lexical: dict[Key, float], weight: float = 0.5) -> Recipe:
    """The mono combiner's answer score and the lexical answer score, joined `how`; thresholds refitted on the join."""

    def fit(train: Sequence[ClaimRow]) -> Fitted:
        inner = combiner("mono", gate=False)(train)
        stack = _stack(inner, train, lexical) if how == "stack" else None

        def join(model: float, lex: float) -> float:
            if how == "mean":
                return weight * model + (1 - weight) * lex
            if how == "min":
                return min(model, lex)
            if how == "geo":
                return float(np.sqrt(model * lex))
            assert stack is not None
            return float(1 / (1 + np.exp(-(stack[0] * _logit(model) + stack[1] * _logit(lex) + stack[2]))))

        def score(rows: Sequence[ClaimRow]) -> dict[Key, float]:
            return {key: join(value, lexical[key]) for key, value in inner.score_answers(rows).items()}

        fitted_scores = score(train)
        thresholds = fit_given(train, lambda r: fitted_scores[(r.file, r.row_id)], **ROUTING)
        return Fitted(None, thresholds.pooled, thresholds.by_key, answer_score=score)

    return fit


def _stack(inner: Fitted, train: Sequence[ClaimRow], lexical: dict[Key, float]) -> tuple[float, float, float]:
    """A family-balanced logistic regression of faithful on (logit model answer score, logit lexical answer score)."""
    from sklearn.linear_model import LogisticRegression

    first = answers_of(train)
    scores = inner.score_answers(train)
    keys = [key for key, row in first.items() if row.claim_index >= 0]
    x = np.array([[_logit(scores[k]), _logit(lexical[k])] for k in keys])
    y = np.array([not first[k].hallucinated for k in keys])
    families = [family(first[k].file, first[k].task) for k in keys]
    counts = Counter(families)
    model = LogisticRegression(C=1.0).fit(x, y, sample_weight=np.array([1.0 / counts[f] for f in families]))
    return float(model.coef_[0][0]), float(model.coef_[0][1]), float(model.intercept_[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True, help="bench/lodo.py's claim-feature cache")
    parser.add_argument("--lexical-cache", type=Path, required=True, help="bench/lodo.py's lexical answer scores")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = load_rows(args.cache)
    lexical = {(d["file"], d["id"]): d["score"] for d in map(json.loads, args.lexical_cache.read_text().splitlines())}
    recipes: dict[str, Recipe] = {
        "lexical": lambda train: fit_given(train, lambda r: lexical[(r.file, r.row_id)], **ROUTING),
        "mono": combiner("mono", gate=False),
        "mono+gate": combiner("mono", gate=True),
        "meaningF": combiner("meaning", gate=False),
        "meaningF+gate": combiner("meaning", gate=True),
        "mean .7": blended("mean", lexical, 0.7),
        "mean .5": blended("mean", lexical, 0.5),
        "min": blended("min", lexical),
        "geo": blended("geo", lexical),
        "stack": blended("stack", lexical),
    }
    results = {name: lodo.lodo(rows, fit) for name, fit in recipes.items()}
    families = sorted(results["lexical"])
    print(f"{'recipe':14s} {'AUROC':>6s} {'esc':>5s} {'maxFAR':>6s} {'maxFRR':>6s} | AUROC - lexical's: "
          + " ".join(f"{f[:10]:>10s}" for f in families))
    for name, figs in results.items():
        base = results["lexical"]
        print(f"{name:14s} {np.mean([figs[f]['auroc'] for f in families]):6.3f} "
              f"{np.mean([figs[f]['esc'] for f in families]):5.3f} {max(figs[f]['far'] for f in families):6.3f} "
              f"{max(figs[f]['frr'] for f in families):6.3f} | {'':18s} "
              + " ".join(f"{figs[f]['auroc'] - (0 if name == 'lexical' else base[f]['auroc']):+10.3f}"
                         for f in families))
    floor = {name: min(figs[f]["auroc"] - results["lexical"][f]["auroc"] for f in families)
             for name, figs in results.items() if name != "lexical"}
    best = max(floor, key=lambda name: floor[name])
    print(f"floor: the least-bad recipe's worst family is {floor[best]:+.3f} against lexical ({best}); target >= -0.010")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
