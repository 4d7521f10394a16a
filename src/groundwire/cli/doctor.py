"""`groundwire doctor`: what this machine runs, and how fast: the CPU's class, the bundled model's form and why,
and pairs per second measured on the spot."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from groundwire.cli.output import console, literal
from groundwire.foundation.errors import ErrorCode, InputError


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(
    form: Annotated[str, typer.Option(help="auto (chosen for this CPU), int8, fp32 or blockwise.")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Print the CPU's class, the bundled model's form (and why it was chosen) and the pairs per second it scores."""
    import onnxruntime

    from groundwire.scoring.forms import TRIAL_PAIRS, cpu_features
    from groundwire.scoring.onnx import OnnxScorer
    from groundwire.version import __version__

    cpu = cpu_features()
    try:
        scorer = OnnxScorer.bundled(form)
    except ValueError as error:
        raise InputError(f"--form {form}: {error}", code=ErrorCode.INVALID_OPTION) from error
    # Pairs of about 160 tokens, as a 5 x 5 check of 120-word chunks scores: each trial premise, two and a half
    # times, against every trial claim, as a check meets every window with every claim. Each pair is distinct: a
    # pair met twice in one call runs once, so a repeated pair would count as run when it was not.
    windows = [f"{premise} {premise} {premise[: len(premise) // 2]}" for premise, _ in TRIAL_PAIRS]
    pairs = [(window, claim) for window in windows for _, claim in TRIAL_PAIRS]
    pairs_run, tokens_run = scorer.run_size(pairs)
    best = scorer.seconds_for(pairs)
    findings = {
        "groundwire": __version__, "onnxruntime": onnxruntime.__version__,
        "cpu": cpu.model, "cpu_class": cpu.cpu_class, "cores": cpu.cores,
        "model": scorer.model_id, "form": scorer.form, "why": scorer.form_reason,
        "parallel_runs": scorer.parallel_runs, "pairs_run": pairs_run, "tokens_run": tokens_run,
        "pairs_per_s": round(pairs_run / best, 1), "s_per_1k_tokens": round(1000 * best / tokens_run, 4),
        "forms_in_bundle": sorted(scorer.config.get("forms", {"int8": None})),
    }
    if as_json:
        typer.echo(json.dumps(findings))
        return
    for key, value in findings.items():
        console.print(f"{key:16s} ", literal(str(value)), sep="")
    console.print(literal(f"(pairs of about {tokens_run // pairs_run} tokens, each distinct: a 5 x 5 check of 120-word "
                          f"chunks scores 25 of them, about {25 / pairs_run * best:.2f} s of model time here)"))
