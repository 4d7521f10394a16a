"""Export + quantize on a tiny random BERT, end to end, and the ONNX scorer that reads the bundle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from groundwire.scoring import get_scorer
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.export import torch_probs

PAIRS = [
    ("The shop opens at 9 am on weekdays.", "The shop opens at 9 am."),
    ("The shop opens at 9 am on weekdays and closes at 6 pm. Parking is free for customers.", "Parking costs $5."),
    ("Marie Curie won two Nobel prizes.", "She won none."),
    ("a", "b"),
    ("The company reported revenue of 4.2 billion dollars in 2023, up 8 percent from the year before. " * 6,
     "Revenue grew in 2023."),
]


def test_bundle_files_and_config(tiny_bundle: Path) -> None:
    assert {"model.onnx", "tokenizer.json", "config.json"} <= {p.name for p in tiny_bundle.iterdir()}
    config = json.loads((tiny_bundle / "config.json").read_text())
    assert config["labels"] == ["entailment", "neutral", "contradiction"]
    assert config["max_length"] == 64
    # int8 weights are smaller than the fp32 graph.
    assert (tiny_bundle / "model.onnx").stat().st_size < (tiny_bundle / "model.fp32.onnx").stat().st_size


def test_fp32_onnx_matches_torch(tiny_model_dir: Path, tiny_bundle: Path) -> None:
    scorer = OnnxScorer(tiny_bundle, model_file="model.fp32.onnx")
    reference = np.array(torch_probs(tiny_model_dir, PAIRS, max_length=64))
    np.testing.assert_allclose(scorer.probabilities(PAIRS), reference, atol=1e-4)


def test_int8_close_to_torch(tiny_model_dir: Path, tiny_bundle: Path) -> None:
    reference = np.array(torch_probs(tiny_model_dir, PAIRS, max_length=64))
    got = OnnxScorer(tiny_bundle).probabilities(PAIRS)
    assert np.abs(got - reference).max() < 0.1


def test_padding_and_batching_do_not_change_scores(tiny_bundle: Path) -> None:
    """Exact in fp32; int8 shares one activation scale per batch, so allow a small drift there."""
    for model_file, tolerance in (("model.fp32.onnx", 1e-5), ("model.onnx", 0.01)):
        alone = [OnnxScorer(tiny_bundle, batch_size=1, model_file=model_file).score([pair]).support[0]
                 for pair in PAIRS]
        batched = OnnxScorer(tiny_bundle, batch_size=4, model_file=model_file).score(PAIRS)
        np.testing.assert_allclose(batched.support, alone, atol=tolerance)
        assert batched.contradiction is not None and batched.contradiction.shape == (len(PAIRS),)


def test_scorer_protocol_fields(tiny_bundle: Path) -> None:
    scorer = get_scorer(f"onnx:{tiny_bundle}")
    assert scorer.model_id == "tiny-test"
    assert scorer.max_tokens == 64
    assert scorer.thresholds == (0.7, 0.3)
    assert scorer.count_tokens(["hello world", ""]) == [2, 0]
    scores = scorer.score(PAIRS)
    assert scores.truncated is not None and scores.truncated.tolist() == [False, False, False, False, True]
    assert np.all((scores.support >= 0) & (scores.support <= 1))
    assert len(scorer.score([]).support) == 0


def test_missing_bundle_is_a_clear_error(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(FileNotFoundError, match="groundwire train export"):
        OnnxScorer(tmp_path)


def test_the_export_command_names_the_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    """`train export --model-id` is the name reports give the model (a cascade lists its stages by it)."""
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    out = tmp_path / "bundle"
    done = CliRunner().invoke(app, ["train", "export", "--model", str(tiny_model_dir), "--out", str(out),
                                    "--max-length", "64", "--no-keep-fp32", "--model-id", "tiny-larger"])
    assert done.exit_code == 0, done.output
    assert json.loads((out / "config.json").read_text())["model_id"] == "tiny-larger"
    assert OnnxScorer(out).model_id == "tiny-larger"
