"""Calibrating a bundle: features in parallel equal features in one process; per-task combiner and thresholds
land in the bundle and are what the scorer then loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from groundwire.scoring.combiner import LogisticCombiner
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
    result = calibrate.calibrate_bundle(bundle, dev, cache=tmp_path / "features.jsonl")
    config = json.loads((bundle / "config.json").read_text())
    # 45 hallucinated qa answers are under the 80 per class (from 2+ families) a key needs: pooled only.
    assert config["task_thresholds"] == {}
    assert config["routing"] == {"recipe": "mono", "target_far": 0.1, "target_frr": 0.1}
    assert 0 <= config["reject_at"] < config["accept_at"] <= 1
    scorer = OnnxScorer(bundle)
    assert isinstance(scorer.combiner, LogisticCombiner)
    coefficients = dict(zip(scorer.combiner.names, scorer.combiner.coef, strict=True))
    assert coefficients["figures_not_in_context"] <= 0 and coefficients["logit:support"] >= 0  # signs held
    assert Verifier(scorer).thresholds_for("qa") == (config["accept_at"], config["reject_at"])
    # Every family is scored by a recipe fitted without it; the figure check makes these easy even so.
    assert set(result["lodo"]) == set(result["in_sample"]) == {"alpha", "beta", "gamma"}
    assert result["lodo"]["alpha"]["auroc"] > 0.9
    assert result["lodo"]["alpha"]["far"] <= 0.15
    assert len(combine.load_rows(tmp_path / "features.jsonl")) == len(serial)
