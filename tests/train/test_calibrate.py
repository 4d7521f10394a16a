"""Calibrating a bundle: features in parallel equal features in one process; per-task combiner and thresholds
land in the bundle and are what the scorer then loads."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from groundwire.calibration import combine
from groundwire.core.verifier import Verifier
from groundwire.foundation.errors import InputError
from groundwire.scoring.combiner import LogisticCombiner
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train import calibrate


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


def test_a_stopped_feature_run_resumes_from_the_files_it_finished(tiny_bundle: Path, tmp_path: Path) -> None:
    dev = [_dev_file(tmp_path / "alpha.jsonl", 6, "qa", 0), _dev_file(tmp_path / "beta.jsonl", 5, "qa", 100)]
    cache = tmp_path / "features.jsonl"
    # As if a run had finished alpha and been stopped: its part is read back, not scored again.
    alpha = calibrate.features_for(tiny_bundle, dev[:1], limit=None, cache=None)
    marked = [replace(row, answer_score=0.123) for row in alpha]
    combine.save_rows(marked, calibrate.part_path(cache, dev[0]))
    rows = calibrate.features_for(tiny_bundle, dev, limit=None, cache=cache, workers=2)
    assert [r.answer_score for r in rows if r.file == alpha[0].file] == [0.123] * len(alpha)
    assert len({r.file for r in rows}) == 2 and any(r.answer_score != 0.123 for r in rows)
    assert not calibrate.part_path(cache, dev[0]).exists() and not calibrate.part_path(cache, dev[1]).exists()
    assert combine.load_rows(cache) == rows


def test_a_second_stage_is_calibrated_on_what_the_first_escalates(tiny_bundle: Path, tmp_path: Path) -> None:
    import shutil

    dev = [_dev_file(tmp_path / "alpha.jsonl", 30, "qa", 0), _dev_file(tmp_path / "beta.jsonl", 30, "qa", 100)]
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(tiny_bundle, first)
    shutil.copytree(tiny_bundle, second)
    first_id = json.loads((first / "config.json").read_text())["model_id"]
    calibrate.calibrate_bundle(first, dev, cache=tmp_path / "first.jsonl")
    calibrate.calibrate_bundle(second, dev, cache=tmp_path / "second.jsonl")
    result = calibrate.calibrate_bundle(second, dev, cache=tmp_path / "second.jsonl", after=first,
                                        after_cache=tmp_path / "first.jsonl")
    config = json.loads((second / "config.json").read_text())
    # The stand-alone calibration stays; the second stage's sits beside it, under the first stage's model id.
    assert config["routing"] == {"recipe": "mono", "target_far": 0.1, "target_frr": 0.1}
    assert set(config["stage_two"]) == {first_id}
    routing = config["stage_two"][first_id]["routing"]
    assert routing["stage"] == 2
    assert OnnxScorer(second).calibration_after(first_id) is not None
    assert OnnxScorer(second).calibration_after("another-model") is None
    # The second stage's budget is what the first left unspent: never more than the cascade's own target.
    assert 0.0 <= routing["stage_targets"]["target_far"] <= 1.0 and 0.0 <= routing["stage_targets"]["target_frr"] <= 1.0
    assert set(result["lodo"]) == {"alpha", "beta"} and result["lodo"]["alpha"]["n"] == 30
    # Features of different answers (another --limit) cannot make a cascade.
    with pytest.raises(ValueError, match="different answers"):
        calibrate.calibrate_bundle(second, dev, limit=10, cache=None, after=first, after_cache=tmp_path / "first.jsonl")


def test_the_combiner_command_refuses_a_first_stage_that_is_not_a_bundle(tiny_bundle: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundwire.cli.exit_status import EXIT_STATUS
    from groundwire.cli.main import app

    dev = _dev_file(tmp_path / "alpha.jsonl", 4, "qa", 0)
    done = CliRunner().invoke(app, ["train", "combiner", "--bundle", str(tiny_bundle), "--dev", str(dev),
                                    "--after", str(tmp_path)])
    # `groundwire` turns an InputError into its message and exit status 2 (cli.main.main).
    assert isinstance(done.exception, InputError) and "not a bundle" in str(done.exception)
    assert EXIT_STATUS[done.exception.code] == 2
