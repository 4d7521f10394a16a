"""The bundled model's forms: which one a CPU runs, and that each scores what the shipped model scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from groundwire.scoring import get_scorer
from groundwire.scoring.form_trials import FormTrials
from groundwire.scoring.forms import CpuFeatures, ModelForm, bundle_forms, choose_form, cpu_features
from groundwire.scoring.onnx import OnnxScorer, bundled_path

AGREEMENT = Path(__file__).parents[1] / "train" / "fixtures" / "agreement.json"
FORMS = {"int8": ModelForm("int8", "model.onnx", 1), "fp32": ModelForm("fp32", "model.fp32w8.onnx", 1)}
THREE = {**FORMS, "blockwise": ModelForm("blockwise", "model.blockwise.onnx", 1, min_onnxruntime="1.22")}
FILES = {form.name: form.model_file for form in THREE.values()}
NO_VNNI = CpuFeatures("test cpu", vnni=False, avx512=False, avx2=True, cores=2)
VNNI = CpuFeatures("test cpu", vnni=True, avx512=True, avx2=True, cores=2)

CPUINFO = """processor\t: 0
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma f16c

processor\t: 1
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma f16c avx512_vnni
"""


def test_cpu_flags_are_read_from_the_first_processor() -> None:
    cpu = cpu_features(CPUINFO)
    assert cpu.model == "AMD EPYC 7B12"
    assert cpu.vnni is False and cpu.avx2 and not cpu.avx512
    assert cpu.cpu_class == "avx2, no vnni"
    assert cpu_features(CPUINFO.replace("f16c\n", "f16c avx_vnni\n", 1)).vnni is True
    assert cpu_features("").vnni is None  # no flags to read: not "no VNNI"


def test_a_vnni_cpu_runs_int8_without_timing_anything() -> None:
    def never(form: ModelForm) -> float:
        raise AssertionError(f"timed {form.name}")

    assert choose_form(FORMS, "auto", VNNI, never)[0].name == "int8"
    unknown = CpuFeatures("?", vnni=None, avx512=False, avx2=False, cores=1)
    assert choose_form(FORMS, "auto", unknown, never)[0].name == "int8"


@pytest.mark.parametrize(
    ("int8_s", "fp32_s", "blockwise_s", "chosen"),
    [(1.0, 0.5, 0.7, "fp32"), (1.0, 0.7, 0.5, "blockwise"), (1.0, 0.9, 0.85, "int8"), (0.5, 1.0, 0.6, "int8")],
)
def test_without_vnni_the_fastest_form_is_chosen_only_when_clearly_faster_than_int8(
    int8_s: float, fp32_s: float, blockwise_s: float, chosen: str
) -> None:
    seconds = {"int8": int8_s, "fp32": fp32_s, "blockwise": blockwise_s}
    form, reason = choose_form(THREE, "auto", NO_VNNI, lambda form: seconds[form.name])
    assert form.name == chosen
    assert "no VNNI" in reason
    if chosen == "int8":
        assert f"fp32 {int8_s / fp32_s:.2f}x, blockwise {int8_s / blockwise_s:.2f}x" in reason


def test_a_form_that_needs_a_newer_onnxruntime_is_left_out_or_refused() -> None:
    timed: list[str] = []

    def timing(form: ModelForm) -> float:
        timed.append(form.name)
        return {"int8": 1.0, "fp32": 0.9, "blockwise": 0.1}[form.name]

    form, _ = choose_form(THREE, "auto", NO_VNNI, timing, onnxruntime_version="1.21.1")
    assert form.name == "int8" and timed == ["int8", "fp32"]  # the blockwise form was neither timed nor chosen
    assert choose_form(THREE, "auto", NO_VNNI, timing, onnxruntime_version="1.22.0")[0].name == "blockwise"
    assert choose_form(THREE, "auto", NO_VNNI, timing, onnxruntime_version="1.23.0.dev20250101")[0].name == "blockwise"
    with pytest.raises(ValueError, match=r"needs onnxruntime >= 1.22 \(this is 1.17.3\)"):
        choose_form(THREE, "blockwise", VNNI, timing, onnxruntime_version="1.17.3")
    only_int8 = {"int8": THREE["int8"], "blockwise": THREE["blockwise"]}
    assert choose_form(only_int8, "auto", NO_VNNI, never, onnxruntime_version="1.20") == (
        THREE["int8"], "the bundle's only form"
    )


def test_an_asked_for_form_wins_and_an_unknown_one_is_refused() -> None:
    assert choose_form(FORMS, "fp32", VNNI, lambda form: 1.0)[0].name == "fp32"
    with pytest.raises(ValueError, match="not one of auto, int8, fp32, blockwise"):
        choose_form(FORMS, "fp16", VNNI, lambda form: 1.0)
    with pytest.raises(ValueError, match="has no 'fp32' form"):
        choose_form({"int8": FORMS["int8"]}, "fp32", VNNI, lambda form: 1.0)


def test_a_bundle_without_forms_has_its_one_model_file() -> None:
    forms = bundle_forms({"model_file": "other.onnx", "batch_size": 4})
    assert list(forms) == ["int8"] and forms["int8"].model_file == "other.onnx" and forms["int8"].batch_size == 4


def test_the_shipped_bundle_lists_its_three_forms() -> None:
    forms = bundle_forms(json.loads((bundled_path() / "config.json").read_text()))
    assert list(forms) == ["int8", "fp32", "blockwise"]  # int8 first: the form kept unless another is clearly faster
    for form in forms.values():
        assert (bundled_path() / form.model_file).is_file()
    assert forms["blockwise"].min_onnxruntime == "1.22" and forms["int8"].min_onnxruntime is None


def test_the_blockwise_form_agrees_with_fp32_at_least_as_well_as_int8_with_no_quantize_node() -> None:
    """The bar a form is shipped on (issue 48): on the agreement pairs, no larger an error than int8's, and the
    same label on every pair fp32 is confident about; and no DynamicQuantizeLinear in the graph onnxruntime runs."""
    import onnx

    data = json.loads(AGREEMENT.read_text())
    pairs = [tuple(pair) for pair in data["pairs"]]
    reference = np.array(data["fp32_probs"])
    blockwise, int8 = get_scorer("bundled:blockwise"), get_scorer("bundled:int8")
    assert isinstance(blockwise, OnnxScorer) and blockwise.form == "blockwise"
    assert isinstance(int8, OnnxScorer)
    blockwise_error = np.abs(blockwise.probabilities(pairs) - reference)
    int8_error = np.abs(int8.probabilities(pairs) - reference)
    assert blockwise_error.max() <= int8_error.max() and blockwise_error.mean() <= int8_error.mean()
    clear = reference.max(axis=1) > 0.7
    assert (blockwise.probabilities(pairs)[clear].argmax(1) == reference[clear].argmax(1)).all()
    ops = {}
    for name in ("int8", "blockwise"):
        graph = onnx.load(str(bundled_path() / FILES[name]), load_external_data=False).graph
        ops[name] = [node.op_type for node in graph.node]
    assert ops["int8"].count("DynamicQuantizeLinear") == 26
    assert "DynamicQuantizeLinear" not in ops["blockwise"] and ops["blockwise"].count("MatMulNBits") == 36


def test_the_fp32_form_scores_the_int8_weights_in_fp32() -> None:
    """It is closer to the fp32 model the bundle was quantized from than int8 is, and decides the clear pairs alike."""
    data = json.loads(AGREEMENT.read_text())
    pairs = [tuple(pair) for pair in data["pairs"]]
    reference = np.array(data["fp32_probs"])
    fp32 = get_scorer("bundled:fp32")
    int8 = get_scorer("bundled:int8")
    assert isinstance(fp32, OnnxScorer) and fp32.form == "fp32" and isinstance(int8, OnnxScorer) and int8.form == "int8"
    fp32_probs, int8_probs = fp32.probabilities(pairs), int8.probabilities(pairs)
    assert np.abs(fp32_probs - reference).mean() < np.abs(int8_probs - reference).mean()
    assert np.abs(fp32_probs - reference).max() < 0.25
    clear = reference.max(axis=1) > 0.7
    assert (fp32_probs[clear].argmax(1) == reference[clear].argmax(1)).all()
    alone = np.array([fp32.score([pair]).support[0] for pair in pairs[:4]])
    np.testing.assert_allclose(fp32.score(pairs).support[:4], alone, atol=1e-5)


def test_an_unknown_bundled_form_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="fp16"):
        get_scorer("bundled:fp16")


def test_each_text_is_tokenised_once_and_framed_as_the_whole_pair() -> None:
    scorer = OnnxScorer(bundled_path(), form="int8")
    long = " ".join(f"Clause {i} of the Harbour Street lease sets a fee of ${i}.50 a month." for i in range(40))
    pairs = [(long, "The fee is $3.50."), ("The shop opens at 9 am.", long), ("", "A claim."),
             ("Ünïcödé — “quoted” 3,600 km²", "It is 3600 km²."), (long[:700], long[:500])]
    framed, truncated = scorer._encode(pairs)
    whole = scorer._pair_tokenizer.encode_batch(pairs)
    assert [e.ids for e in framed] == [e.ids for e in whole]
    assert [e.type_ids for e in framed] == [e.type_ids for e in whole]
    assert truncated.tolist() == [len(e.overflowing) > 0 for e in whole]
    assert truncated.sum() == 3


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two cores")
def test_parallel_runs_follow_the_cores_this_process_may_use() -> None:
    """Pinned to one core (taskset, a container's cpuset), the scorer runs one pair at a time, not one per core
    of the machine."""
    code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            "from groundwire.scoring.onnx import OnnxScorer, bundled_path; "
            "print(OnnxScorer(bundled_path(), form='int8').parallel_runs)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
    expected = int(os.environ.get("OMP_NUM_THREADS") or 0) or len(os.sched_getaffinity(0))
    assert OnnxScorer(bundled_path(), form="int8").parallel_runs == expected


def test_a_pair_met_twice_in_a_call_is_run_once_and_scored_alike() -> None:
    scorer = OnnxScorer(bundled_path(), form="int8")
    pairs = [("The shop opens at 9 am.", "It opens at 9."), ("The fee is $5.", "The fee is $6."),
             ("The shop opens at 9 am.", "It opens at 9.")]
    runs = []
    session = scorer.session

    class Counting:
        def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            runs.append(1)
            return session.run(*args, **kwargs)

    alone = scorer.score(pairs[:2])
    scorer.session = Counting()  # type: ignore[assignment]
    twice = scorer.score(pairs)
    assert len(runs) == 2
    np.testing.assert_array_equal(twice.support, [alone.support[0], alone.support[1], alone.support[0]])
    assert twice.truncated.tolist() == [False, False, False]


def test_on_a_cpu_without_vnni_the_trial_loads_each_form_once_per_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import onnxruntime

    import groundwire.scoring.onnx as onnx_scorer

    created: list[str] = []
    session_class = onnxruntime.InferenceSession

    def counting(path: str, *args: object, **kwargs: object) -> onnxruntime.InferenceSession:
        created.append(Path(path).name)
        return session_class(path, *args, **kwargs)

    monkeypatch.setattr(onnx_scorer, "cpu_features", lambda: NO_VNNI)
    monkeypatch.setattr(onnxruntime, "InferenceSession", counting)
    monkeypatch.delenv("GROUNDWIRE_MODEL_FORM", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    scorer = OnnxScorer(bundled_path())
    assert sorted(created) == sorted(FILES.values())  # each timed, and the winner kept: no load after the trial
    assert scorer.form_reason.startswith("no VNNI") and "timed now, kept in" in scorer.form_reason
    assert scorer.score([("The shop opens at 9 am.", "It opens at 9 am.")]).support[0] > 0.5
    # The next process on this machine reads the timings instead of timing: one load, of the form chosen.
    created.clear()
    again = OnnxScorer(bundled_path())
    assert created == [FILES[scorer.form]]
    assert again.form == scorer.form and "kept in" in again.form_reason and "timed now" not in again.form_reason
    kept = json.loads((tmp_path / "groundwire" / "form-trials.json").read_text())
    assert [entry["cpu"] for entry in kept.values()] == ["test cpu"]
    # GROUNDWIRE_MODEL_FORM still pins the form, whatever the kept timings say.
    other = "fp32" if scorer.form == "int8" else "int8"
    monkeypatch.setenv("GROUNDWIRE_MODEL_FORM", other)
    assert OnnxScorer(bundled_path()).form == other


def never(form: ModelForm) -> float:
    raise AssertionError(f"timed {form.name}")


def test_kept_timings_skip_the_trial_and_decide_as_before(tmp_path: Path) -> None:
    timed: list[str] = []

    def timing(form: ModelForm) -> float:
        timed.append(form.name)
        return {"int8": 1.0, "fp32": 0.5}[form.name]

    path = tmp_path / "cache" / "form-trials.json"
    form, reason = choose_form(FORMS, "auto", NO_VNNI, timing, FormTrials(path, {"cpu": "a"}))
    assert (form.name, timed) == ("fp32", ["int8", "fp32"]) and reason.endswith(f"timed now, kept in {path})")
    form, reason = choose_form(FORMS, "auto", NO_VNNI, never, FormTrials(path, {"cpu": "a"}))
    assert form.name == "fp32" and "2.00x faster" in reason and f"kept in {path}" in reason
    # Another CPU model (or bundle, or onnxruntime) is timed on its own; the first stays kept.
    choose_form(FORMS, "auto", NO_VNNI, timing, FormTrials(path, {"cpu": "b"}))
    assert timed == ["int8", "fp32", "int8", "fp32"]
    assert choose_form(FORMS, "auto", NO_VNNI, never, FormTrials(path, {"cpu": "a"}))[0].name == "fp32"
    # A form asked for never reads the kept timings.
    assert choose_form(FORMS, "int8", NO_VNNI, never, FormTrials(path, {"cpu": "a"}))[0].name == "int8"
    # Timings kept for other forms (an older groundwire's two) are not trusted for these three: all are timed.
    timed.clear()
    choose_form(THREE, "auto", NO_VNNI, lambda form: timing(form) if form.name != "blockwise" else 2.0,
                FormTrials(path, {"cpu": "a"}))
    kept = FormTrials(path, {"cpu": "a"}).recall()
    assert timed == ["int8", "fp32"] and kept is not None and set(kept.seconds) == set(THREE)


def test_timings_that_cannot_be_kept_or_read_leave_the_trial_to_every_process(tmp_path: Path) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    trials = FormTrials(blocked / "groundwire" / "form-trials.json", {"cpu": "a"})  # as a read-only home
    seconds = {"int8": 1.0, "fp32": 0.9}
    form, reason = choose_form(FORMS, "auto", NO_VNNI, lambda f: seconds[f.name], trials)
    assert form.name == "int8" and "timed now, not kept" in reason and "timed again by every process" in reason
    assert trials.recall() is None
    garbled = tmp_path / "form-trials.json"
    garbled.write_text("{not json")
    form, reason = choose_form(FORMS, "auto", NO_VNNI, lambda f: seconds[f.name], FormTrials(garbled, {"cpu": "a"}))
    assert form.name == "int8" and "timed now, kept in" in reason  # timed again, and the file written anew
    assert FormTrials(garbled, {"cpu": "a"}).recall() is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a file", "form-trials.json"]  # no scratch file left


def test_the_key_follows_the_cpu_the_threads_and_onnxruntime() -> None:
    def key(cpu_model: str = "AMD EPYC 7B12", threads: int = 2, onnxruntime_version: str = "1.20.0") -> str:
        return FormTrials.for_bundle(
            bundled_path(),
            ["model.onnx", "model.fp32w8.onnx"],
            cpu_model=cpu_model,
            threads=threads,
            batch_size=None,
            onnxruntime_version=onnxruntime_version,
        ).key

    assert key() == key()
    assert len({key(), key(cpu_model="Intel Xeon"), key(threads=1), key(onnxruntime_version="1.21.0")}) == 4


def test_the_key_follows_the_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "config.json").write_text('{"labels": ["entailment"]}')
    (bundle / "model.onnx").write_bytes(b"one")

    def key() -> str:
        return FormTrials.for_bundle(
            bundle, ["model.onnx"], cpu_model="x", threads=2, batch_size=None, onnxruntime_version="1"
        ).key

    first = key()
    (bundle / "model.onnx").write_bytes(b"other")  # retrained
    second = key()
    (bundle / "config.json").write_text('{"labels": ["entailment", "neutral"]}')
    assert len({first, second, key()}) == 3


def test_the_environment_pins_a_form_only_where_the_bundle_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDWIRE_MODEL_FORM", "fp32")
    assert OnnxScorer(bundled_path()).form == "fp32"
    # A bundle of one model file (a user's export, a cascade's other stage) still loads.
    single = OnnxScorer(bundled_path(), model_file="model.onnx")
    assert (single.form, single.form_reason) == ("given", "the bundle's only form")
    monkeypatch.setenv("GROUNDWIRE_MODEL_FORM", "fp16")
    with pytest.raises(ValueError, match="fp16"):
        OnnxScorer(bundled_path(), model_file="model.onnx")
