"""Calibrating a bundle: features in parallel equal features in one process; per-task combiner and thresholds
land in the bundle and are what the scorer then loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from groundwire.core.combiner import TaskCombiner
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train import calibrate, combine
from groundwire.core.verifier import Verifier


def _dev_file(path: Path, n: int, task: str, offset: int) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            price, hallucinated = 10 + i + offset, i % 2 == 0
            said = price + 7 if hallucinated else price
            fh.write(json.dumps({
                "id": f"{path.stem}-{i}", "task": task, "question": None,
                "context": [f"Store {i + offset} sells the red kettle for {price} dollars. It opens at nine."],
                "answer": f"The red kettle costs {said} dollars. The store opens at nine.",
                "hallucinated": hallucinated, "spans": [], "source": path.stem}) + "\n")
    return path


def test_parallel_features_equal_serial_and_calibration_ships_per_task(tiny_bundle: Path, tmp_path: Path) -> None:
    dev = [_dev_file(tmp_path / "alpha.jsonl", 50, "qa", 0), _dev_file(tmp_path / "beta.jsonl", 40, "qa", 100),
           _dev_file(tmp_path / "gamma.jsonl", 20, "summary", 200)]
    serial = calibrate.features_for(tiny_bundle, dev, limit=None, cache=None)
    parallel = calibrate.features_for(tiny_bundle, dev, limit=None, cache=None, workers=2)
    assert [(r.file, r.row_id, r.claim_index) for r in serial] == [(r.file, r.row_id, r.claim_index) for r in parallel]
    for a, b in zip(serial, parallel, strict=True):
        assert a.features.keys() == b.features.keys() and "lexical_support" in a.features
        np.testing.assert_allclose([a.features[k] for k in a.features], [b.features[k] for k in a.features],
                                   atol=1e-5)

    bundle = tmp_path / "bundle"
    import shutil

    shutil.copytree(tiny_bundle, bundle)
    result = calibrate.calibrate_bundle(bundle, dev, cache=tmp_path / "features.jsonl", folds=3)
    config = json.loads((bundle / "config.json").read_text())
    assert set(config["task_thresholds"]) == {"qa"}  # 90 qa answers; 20 summary answers are too few
    accept_at, reject_at = config["task_thresholds"]["qa"]
    assert 0 <= reject_at < accept_at <= 1
    scorer = OnnxScorer(bundle)
    # Both tasks behave alike here, so the inner cross-validation may keep qa on the pooled combiner.
    assert isinstance(scorer.combiner, TaskCombiner) and set(scorer.combiner.by_task) <= {"qa"}
    assert scorer.task_thresholds == {"qa": (accept_at, reject_at)}
    assert Verifier(scorer).thresholds_for("qa") == (accept_at, reject_at)
    # The deterministic figure check makes this easy: the hybrid separates the answers out of fold.
    assert result["hybrid_cv"]["alpha"]["auroc"] > 0.9
    assert len(combine.load_rows(tmp_path / "features.jsonl")) == len(serial)
