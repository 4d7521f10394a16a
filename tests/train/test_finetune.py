"""`groundwire adapt --fine-tune` (train/finetune.py, train/adapt_tuned.py, scoring/profile.py): the claim-label rule, a
profile whose fine-tuned model changes the scores and is the model that scores when the profile is loaded, and the
refusals (no [train] extra, a scorer that cannot be tuned, another base model).

One fine-tune runs here (the module's fixture: the CLI on examples/labelled.jsonl, each tune capped at a few steps
by the hidden --tune-steps knob); the rest reads what it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from groundwire.config import CheckSettings
from groundwire.data.rows import EvalRow, parse_record
from groundwire.foundation.errors import ErrorCode
from groundwire.pipeline import CheckItem, build_verifier, check
from groundwire.scoring.onnx import OnnxScorer
from groundwire.scoring.profile import ProfiledScorer, ProfileError, load_profile
from groundwire.train import finetune

FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"
CONTEXT = ("The library of Lyon was opened in 1800 by the city council. It is known for its glass roof and its long "
           "opening hours.")


def run(*args: str, without: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess; `without`: top-level modules made uninstalled (a None entry in sys.modules makes
    importlib.util.find_spec return None)."""
    code = ("import runpy, sys\n"
            f"for name in {without!r}:\n    sys.modules[name] = None\n"
            "sys.argv = ['groundwire', *sys.argv[1:]]\n"
            "runpy.run_module('groundwire', run_name='__main__', alter_sys=True)\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def _row(answer: str, *, hallucinated: bool, spans: list[list[object]] | None = None, name: str) -> EvalRow:
    row = parse_record({"id": name, "task": "qa", "question": "What about the library?", "context": [CONTEXT],
                        "answer": answer, "hallucinated": hallucinated, "spans": spans or [], "source": "test"})
    assert isinstance(row, EvalRow)
    return row


def test_claim_labels_come_from_spans_where_there_are_any_else_from_the_answer_label() -> None:
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    invented = "It was designed by a famous Italian architect in marble."
    copied = "The library of Lyon was opened in 1800 by the city council."
    with_span = f"{copied} {invented}"
    rows = [
        _row(f"{copied} It is known for its glass roof.", hallucinated=False, name="faithful"),
        _row(with_span, hallucinated=True, spans=[[with_span.index(invented), len(with_span), "baseless"]],
             name="spans"),
        _row(f"{copied} {invented}", hallucinated=True, name="answer-label"),
    ]
    pairs = finetune.claim_pairs(finetune.check_labelled(rows, verifier, file="t"), verifier)
    by_answer: dict[str, list[tuple[str, bool, bool]]] = {}
    for p in pairs:
        by_answer.setdefault(p.answer[1], []).append((p.hypothesis, p.supported, p.from_spans))
        assert p.premise in CONTEXT  # the window the base model cited
    assert [(h, s) for h, s, _ in by_answer["faithful"]] == [(copied, True), ("It is known for its glass roof.", True)]
    assert by_answer["spans"] == [(copied, True, True), (invented, False, True)]
    # Without spans only the claim the model and the lexical baseline support least is labelled, unsupported; the
    # answer's other claim is left out (nothing says it is fine).
    assert by_answer["answer-label"] == [(invented, False, False)]


def test_an_untunable_scorer_is_refused_before_anything_runs(tmp_path: Path) -> None:
    result = run("adapt", str(FIXTURE), "--out", str(tmp_path / "p"), "--scorer", "lexical", "--fine-tune")
    assert result.returncode == 2
    assert "invalid_option" in result.stderr and "fine-tune" in result.stderr
    assert not (tmp_path / "p").exists()


def test_without_the_train_extra_fine_tune_names_the_extra(tmp_path: Path) -> None:
    result = run("adapt", str(FIXTURE), "--out", str(tmp_path / "p"), "--fine-tune", without=("torch",))
    assert result.returncode == 2
    assert "missing_extra" in result.stderr and "groundwire[train]" in result.stderr
    assert not (tmp_path / "p").exists()


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("profiles") / "tuned-domain"
    made = run("adapt", str(FIXTURE), "--out", str(out), "--fine-tune", "--tune-steps", "3", "--json")
    assert made.returncode == 0, made.stderr
    return out, json.loads(made.stdout)


def test_the_profile_records_the_tune(tuned: tuple[Path, dict[str, object]]) -> None:
    out, document = tuned
    assert document == json.loads((out / "profile.json").read_text())
    assert document["format"] == 2 and document["recipe"] == "combiner+fine-tune"
    model = document["model"]
    assert isinstance(model, dict)
    assert model["tuned_from"] == document["base_model"] == "groundwire-verifier-v2"
    assert model["pairs"]["supported"] > 0 and model["pairs"]["unsupported"] > 0
    assert model["steps"] == 3 and model["settings"]["max_steps"] == 3 and model["minutes"] > 0
    assert model["model_id"] == json.loads((out / "model" / "config.json").read_text())["model_id"]
    assert document["validation"]["folds"] == 3  # type: ignore[index]


def test_the_loaded_profile_scores_with_its_fine_tuned_model(tuned: tuple[Path, dict[str, object]]) -> None:
    out, document = tuned
    base = OnnxScorer.bundled()
    profiled = ProfiledScorer(base, load_profile(out))
    exported = OnnxScorer(out / "model")
    assert profiled.model_id == exported.model_id == document["model"]["model_id"]  # type: ignore[index]
    assert profiled.model_id != base.model_id  # its pair scores never mix with the base model's in a cache
    pairs = [(CONTEXT, "The library of Lyon was opened in 1800."), (CONTEXT, "The library has a marble roof."),
             (CONTEXT, "The city council opened the library.")]
    mine, theirs, before = profiled.score(pairs), exported.score(pairs), base.score(pairs)
    assert np.array_equal(mine.support, theirs.support)
    assert not np.allclose(mine.support, before.support, atol=1e-6)  # the fine-tune moved the scores

    verifier = build_verifier(CheckSettings(profile=str(out)))
    report = check(verifier, CheckItem("The library of Lyon was opened in 1800.", [CONTEXT]))
    assert report.meta.profile == "tuned-domain"
    assert report.claims[0].support == pytest.approx(float(exported.score(pairs[:1]).support[0]), abs=1e-6)


def test_a_tuned_profile_is_refused_by_another_base_model_and_without_its_model(
        tuned: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    out, _ = tuned
    with pytest.raises(ProfileError) as refused:
        build_verifier(CheckSettings(scorer="lexical", profile=str(out)))
    assert refused.value.code == ErrorCode.PROFILE_MODEL_MISMATCH
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "profile.json").write_text((out / "profile.json").read_text())
    with pytest.raises(ProfileError) as missing:
        load_profile(broken)
    assert missing.value.code == ErrorCode.INVALID_PROFILE and "model.onnx" in str(missing.value)
