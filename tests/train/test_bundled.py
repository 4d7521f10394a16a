"""The shipped model: int8 agrees with the fp32 model it was exported from, and loads without torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from groundwire.scoring.onnx import OnnxScorer, bundled_path

FIXTURE = Path(__file__).parent / "fixtures" / "agreement.json"
pytestmark = pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")


def test_int8_agrees_with_fp32_reference() -> None:
    data = json.loads(FIXTURE.read_text())
    reference = np.array(data["fp32_probs"])
    got = OnnxScorer.bundled().probabilities([tuple(p) for p in data["pairs"]])
    assert got.shape == reference.shape
    # Measured at export (v2, per-channel int8, reduce_range): max 0.155, mean 0.028 (per-tensor int8 was max 0.44).
    # onnxruntime picks its int8 kernels by CPU: on an AVX512-VNNI machine the max is 0.2006, the mean still 0.028.
    assert np.abs(got - reference).max() < 0.25
    assert np.abs(got - reference).mean() < 0.04
    clear = reference.max(axis=1) > 0.7
    assert clear.sum() >= 5
    assert (got[clear].argmax(1) == reference[clear].argmax(1)).all()


def test_bundle_is_small_and_complete() -> None:
    files = {p.name: p.stat().st_size for p in bundled_path().iterdir()}
    assert {"model.onnx", "tokenizer.json", "config.json"} <= set(files)
    assert "model.fp32.onnx" not in files
    # Three forms of one model (int8, and fp32 and blockwise for CPUs without VNNI: scoring/forms.py), each stored
    # as 8-bit weights.
    assert all(size < 25 * 2**20 for name, size in files.items() if name.endswith(".onnx"))
    assert sum(files.values()) < 70 * 2**20
    config = json.loads((bundled_path() / "config.json").read_text())
    assert 0 <= config["reject_at"] < config["accept_at"] <= 1
    if config.get("combiner"):
        assert config["combiner"] in files


def test_bundled_scorer_runs_without_torch() -> None:
    code = ("import sys; from groundwire.scoring import get_scorer; s = get_scorer('bundled'); "
            "r = s.score([('The shop opens at 9 am.', 'The shop opens at 9 am.')]); "
            "assert 0 <= r.support[0] <= 1; "
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_bundled_scores_do_not_depend_on_the_other_pairs_in_the_call() -> None:
    data = json.loads(FIXTURE.read_text())
    pairs = [tuple(p) for p in data["pairs"]]
    scorer = OnnxScorer.bundled()
    alone = np.array([scorer.score([pair]).support[0] for pair in pairs[:6]])
    together = scorer.score(pairs[:6] + pairs[6:] + [(" ".join(["filler words here"] * 60), "A claim.")]).support[:6]
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_one_pair_runs_in_parallel_give_the_same_scores_as_in_sequence() -> None:
    data = json.loads(FIXTURE.read_text())
    pairs = [tuple(p) for p in data["pairs"]]
    sequential = OnnxScorer(bundled_path(), threads=1)
    parallel = OnnxScorer(bundled_path(), threads=3)
    assert sequential.parallel_runs == 1 and parallel.parallel_runs == 3
    np.testing.assert_allclose(parallel.probabilities(pairs), sequential.probabilities(pairs), atol=1e-6)
