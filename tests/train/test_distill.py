"""Distillation: the pool holds the pairs a check scores, the teacher's labels resume and sum to one, and a run on
soft labels moves the student toward the teacher's distribution."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from groundwire.config import CheckSettings
from groundwire.pipeline import build_verifier
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.data import LABELS, Pair, iter_jsonl
from groundwire.train.distill import build_pool, label_pool, pool_pairs, read_pool
from groundwire.train.loop import TrainConfig, _targets, train

DOC = " ".join(
    f"Section {i}. The depot in town {i} opens at {i % 12 + 1} am and keeps {i * 7} vans for deliveries." for i in range(1, 80)
)
ANSWER = "The depot in town 3 opens at 4 am. It keeps 21 vans. Deliveries are free on Sundays."


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_hard_pair_line_is_unchanged_and_a_soft_pair_round_trips(tmp_path: Path) -> None:
    hard = Pair("p", "h", "neutral", "s", "k")
    soft = Pair("p", "h", "contradiction", "s", "distill", probs=(0.1, 0.2, 0.7))
    assert "probs" not in hard.row() and soft.row()["probs"] == (0.1, 0.2, 0.7)
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(hard.row()) + "\n" + json.dumps(soft.row()) + "\n")
    assert list(iter_jsonl(path)) == [hard, soft]


def test_targets_are_indices_without_soft_pairs_and_distributions_with_them() -> None:
    hard = [Pair("p", "h", label, "s", "k") for label in LABELS]
    assert _targets(hard) == [0, 1, 2]
    mixed = [*hard, Pair("p", "h", "entailment", "s", "distill", probs=(0.6, 0.3, 0.1))]
    assert _targets(mixed) == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.3, 0.1]]


def test_the_pool_holds_the_pairs_the_verifier_scores() -> None:
    rows = [{"premise": DOC, "hypothesis": ANSWER, "label": "entailment"}]
    pairs = list(pool_pairs(rows, "t", "bundled", max_pairs_per_row=1000, rng=random.Random(0)))
    plan = build_verifier(CheckSettings(scorer="bundled")).plan(ANSWER, [DOC])
    assert len(plan.claims) == 3 and len(plan.windows) > 1  # the document is longer than one window
    expected = {(plan.windows[j].text, plan.claims[i].text) for i, j in zip(*plan.allowed.nonzero(), strict=True)}
    assert {(p.premise, p.hypothesis) for p in pairs} == expected
    capped = list(pool_pairs(rows, "t", "bundled", max_pairs_per_row=4, rng=random.Random(0)))
    assert len(capped) == 4 and {(p.premise, p.hypothesis) for p in capped} <= expected


def test_build_pool_dedupes_and_names_missing_files(tmp_path: Path) -> None:
    from groundwire.foundation.errors import InputError

    rows = [{"premise": "The museum opens at 9 am.", "hypothesis": "It opens at 9 am.", "label": "entailment"}] * 3
    _write(tmp_path / "a.jsonl", rows)
    counts = build_pool(tmp_path, tmp_path / "pool.jsonl", scorer="lexical", sources={"a": 3})
    assert counts == {"a": 1}  # three copies of one row: one pair
    assert read_pool(tmp_path / "pool.jsonl")[0]["hypothesis"] == "It opens at 9 am."
    with pytest.raises(InputError, match="b.jsonl"):
        build_pool(tmp_path, tmp_path / "pool.jsonl", scorer="lexical", sources={"a": 1, "b": 1})


def test_labels_sum_to_one_follow_the_teacher_and_resume(tiny_bundle: Path, tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    texts = [f"The shop in street {i} opens at {i} am." for i in range(10)]
    pool.write_text("".join(json.dumps({"id": str(i), "premise": t, "hypothesis": f"It opens at {i % 3} am.",
                                        "source": "s"}) + "\n" for i, t in enumerate(texts)))
    teacher = OnnxScorer(tiny_bundle)
    out = tmp_path / "labelled.jsonl"
    assert label_pool(pool, teacher, out, batch_size=4, limit=5) == 5
    first = out.read_text().splitlines()
    assert label_pool(pool, teacher, out, batch_size=4) == 10  # continues after line 5
    lines = out.read_text().splitlines()
    assert lines[:5] == first and len(lines) == 10
    labelled = list(iter_jsonl(out))
    probs = np.array([p.probs for p in labelled])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    expected = teacher.score([(r["premise"], r["hypothesis"]) for r in read_pool(pool)])
    np.testing.assert_allclose(probs[:, 0], expected.support, atol=1e-5)
    assert [p.label for p in labelled] == [LABELS[int(i)] for i in probs.argmax(axis=1)]


def test_training_on_soft_labels_moves_the_student_toward_the_teacher(tiny_model_dir: Path, tmp_path: Path) -> None:
    from groundwire.train.export import torch_probs

    target = (0.1, 0.2, 0.7)
    pairs = [(f"The office in block {i} closes at {i} pm.", f"It closes at {i + 1} pm.") for i in range(48)]
    data = tmp_path / "data"
    data.mkdir()
    rows = [Pair(p, h, "contradiction", "t", "distill", probs=target).row() for p, h in pairs]
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (data / "val.jsonl").write_text("".join(json.dumps(Pair(p, h, LABELS[i % 3], "t", "k").row()) + "\n"
                                            for i, (p, h) in enumerate(pairs)))

    def distance(model: Path) -> float:
        return float(np.abs(np.array(torch_probs(model, pairs, max_length=64)) - np.array(target)).sum(axis=1).mean())

    cfg = TrainConfig(base_model=str(tiny_model_dir), data_dir=str(data), out_dir=str(tmp_path / "run"),
                      max_length=64, batch_size=4, lr=3e-3, warmup=0.0, label_smoothing=0.0, threads=1,
                      freeze_layers=0, budget_minutes=10_000, bucket_batches=1, val_limit=8)
    before = distance(tiny_model_dir)
    train(cfg, command="test")
    after = distance(tmp_path / "run" / "final")
    # Fitted to the one-hot label instead, the student could come no closer than 0.6 (|0.1| + |0.2| + |1 - 0.7|).
    assert after < 0.3 < before, (before, after)
