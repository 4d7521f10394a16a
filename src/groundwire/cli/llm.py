"""`groundwire generate` and `groundwire repair`: thin commands over generate.py and repair.py.

Both read groundwire.toml (or --config) and its environment overrides. Exit status: 0 OK, 1 the answer
fell back or abstained (only with --fail-on-fallback), 2 bad input (an LLM is needed and none is configured:
the same message as `check --judge`), 3 the LLM endpoint failed (groundwire.cli.main maps LLMError to it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from groundwire.cli.common import check_settings, read_answer, read_chunks, require_llm
from groundwire.cli.exit_status import CommandOutcome
from groundwire.cli.output import console, literal, print_json, render_report, styled
from groundwire.foundation.types import Chunk

if TYPE_CHECKING:
    from groundwire.config import Config

ContextOption = Annotated[list[Path] | None, typer.Option("--context", "-c", metavar="FILE", help="A context file, one retrieved chunk; repeat it for each chunk.")]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="groundwire.toml to read (default: ./groundwire.toml).")
]
ScorerOption = Annotated[
    str | None, typer.Option("--scorer", help="Scorer name (default: [verify] scorer in the config).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def register(app: typer.Typer) -> None:
    app.command("generate")(generate_command)
    app.command("repair")(repair_command)


def generate_command(
    question: Annotated[str, typer.Option("--question", "-q", help="The user's question.")],
    context: ContextOption = None,
    config_file: ConfigOption = None,
    scorer: ScorerOption = None,
    model: Annotated[str | None, typer.Option(help="Override [llm] model.")] = None,
    samples: Annotated[int | None, typer.Option(min=1, help="Consistency sampling: N samples (override).")] = None,
    as_json: JsonOption = False,
    fail_on_fallback: Annotated[bool, typer.Option(help="Exit 1 when the answer is the fallback.")] = False,
) -> None:
    """Generate a grounded answer: generate -> validators -> verify, retrying with stricter grounding."""
    from groundwire.llm.client import LLMClient
    from groundwire.llm.generate import Generator
    from groundwire.pipeline import Checker, build_verifier

    config = _config(config_file, samples=samples)
    chunks = read_chunks(context)
    require_llm(config, "generate")
    with LLMClient(config.llm.model_copy(update={"model": model}) if model else config.llm) as client:
        checker = Checker(build_verifier(check_settings(config, scorer), client=client))  # checks via pipeline.check
        result = Generator.from_config(config, client=client, checker=checker).generate(question, chunks)
        calls = [call.to_dict() for call in client.calls]
    if as_json:
        print_json({**result.to_dict(), "llm_calls": calls})
    else:
        _render_generation(result, chunks)
    if fail_on_fallback and result.fallback:
        raise typer.Exit(CommandOutcome.LLM_FALLBACK.exit_status)


def repair_command(
    answer: Annotated[str, typer.Option("--answer", "-a", help="Answer text, or @FILE to read it.")],
    context: ContextOption = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="The question the answer replies to.")] = None,
    config_file: ConfigOption = None,
    scorer: ScorerOption = None,
    llm: Annotated[
        bool | None,
        typer.Option(
            "--llm/--no-llm",
            help="Judge and minimally edit doubtful, contradicted or partly supported claims with the LLM; "
            "--llm without a configured endpoint exits 2 (default: when groundwire.toml configures [llm]).",
        ),
    ] = None,
    as_json: JsonOption = False,
    fail_on_fallback: Annotated[bool, typer.Option(help="Exit 1 when the repaired answer abstains.")] = False,
) -> None:
    """Repair an answer: keep supported claims, edit the middle band (with an LLM), drop the rest."""
    from groundwire.llm.client import client_from_config
    from groundwire.llm.repair import repair
    from groundwire.pipeline import Checker, CheckItem, Judge, build_verifier, check

    config = _config(config_file)
    chunks = read_chunks(context)
    text = read_answer(answer)
    item = CheckItem(text, chunks, question=question)  # require_citations: the verifier's own, from [verify]
    settings = check_settings(config, scorer)
    use_llm = config.llm_configured if llm is None else llm
    if use_llm:
        require_llm(config, "repair --llm")
        with client_from_config(config) as client:
            verifier = build_verifier(settings, client=client)
            # The judge first: a middle-band claim it finds supported needs no edit; one it rejects goes to the
            # editor when it is contradicted or partly supported. An endpoint failure ends the command (exit 3).
            report = check(verifier, item, judge=Judge(client, required=True))
            repaired = repair(report, chunks, check=Checker(verifier), client=client,
                              min_surviving_share=config.repair.min_surviving_share,
                              abstain_message=config.repair.abstain_message)
    else:
        verifier = build_verifier(settings)
        report = check(verifier, item)
        repaired = repair(report, chunks, check=Checker(verifier), min_surviving_share=config.repair.min_surviving_share,
                          abstain_message=config.repair.abstain_message)
    if as_json:
        print_json(repaired.to_dict())
    else:
        _render_repair(repaired)
    if fail_on_fallback and repaired.abstained:
        raise typer.Exit(CommandOutcome.LLM_FALLBACK.exit_status)


# --- helpers -------------------------------------------------------------------------------------------


def _config(path: Path | None, **generate_overrides: Any) -> Config:
    from groundwire.config import load_config

    config = load_config(path)
    changes = {key: value for key, value in generate_overrides.items() if value is not None}
    if changes:
        config = config.model_copy(update={"generate": config.generate.model_copy(update=changes)})
    return config


def _render_generation(result: Any, chunks: list[Chunk]) -> None:
    from rich.table import Table

    table = Table(title="attempts")
    for column in ("#", "strength", "model", "score", "action", "reason", "findings"):
        table.add_column(column, overflow="fold")
    for attempt in result.attempts:
        table.add_row(
            str(attempt.number), attempt.strength, literal(attempt.model), f"{attempt.score:.2f}", attempt.action,
            literal(attempt.reason), literal(", ".join(attempt.findings) or "-"),
        )
    console.print(table)
    for escalation in result.escalations:
        console.print(styled(("escalated", "yellow"),
                             f" {escalation.from_model} -> {escalation.to_model}: {escalation.reason}"))
    if result.report.claims:
        render_report(result.report, list(result.chunks) or chunks)
    label = "fallback" if result.fallback else result.outcome.action
    console.print(styled((label, "bold"), f": {result.outcome.reason}"))
    console.print(literal(result.answer))


def _render_repair(repaired: Any) -> None:
    from rich.table import Table

    table = Table(title=f"repair (score {repaired.original.score:.2f} -> {repaired.report.score:.2f})")
    for column in ("claim", "action", "reason", "edit"):
        table.add_column(column, overflow="fold")
    for action in repaired.actions:
        table.add_row(literal(action.claim), action.action, literal(action.reason), literal(action.edited or ""))
    console.print(table)
    state = "abstained" if repaired.abstained else f"{repaired.surviving_share:.0%} of claims survive"
    console.print(literal(state, "bold"))
    console.print(literal(repaired.answer))
