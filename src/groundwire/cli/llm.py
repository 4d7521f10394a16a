"""`groundwire generate` and `groundwire repair`: thin commands over generate.py and repair.py.

Both read groundwire.toml (or --config) and its environment overrides. Exit status: 0 OK, 1 the answer
fell back or abstained (only with --fail-on-fallback), 2 bad input, 3 the LLM endpoint failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from groundwire.cli.common import build_verifier, read_chunks
from groundwire.core.types import Chunk

if TYPE_CHECKING:
    from groundwire.config import Config

EXIT_FALLBACK, EXIT_LLM = 1, 3

ContextOption = Annotated[list[Path] | None, typer.Option("--context", "-c", help="A context file (one chunk each).")]
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
    from groundwire.llm.generate import Generator
    from groundwire.llm.client import LLMError, client_from_config

    config = _config(config_file, samples=samples)
    chunks = read_chunks(context)
    with client_from_config(config, **({"model": model} if model else {})) as client:
        verifier = build_verifier(config, scorer, client=client)
        try:
            result = Generator.from_config(config, client=client, verifier=verifier).generate(question, chunks)
        except LLMError as error:
            _llm_failed(error)
        calls = [call.to_dict() for call in client.calls]
    if as_json:
        _print_json({**result.to_dict(), "llm_calls": calls})
    else:
        _render_generation(result, chunks)
    if fail_on_fallback and result.fallback:
        raise typer.Exit(EXIT_FALLBACK)


def repair_command(
    answer: Annotated[str, typer.Option("--answer", "-a", help="Answer text, or @FILE to read it.")],
    context: ContextOption = None,
    question: Annotated[str | None, typer.Option("--question", "-q")] = None,
    config_file: ConfigOption = None,
    scorer: ScorerOption = None,
    llm: Annotated[
        bool | None,
        typer.Option(
            "--llm/--no-llm",
            help="Edit middle-band claims and judge with the LLM (default: when groundwire.toml configures [llm]).",
        ),
    ] = None,
    as_json: JsonOption = False,
    fail_on_fallback: Annotated[bool, typer.Option(help="Exit 1 when the repaired answer abstains.")] = False,
) -> None:
    """Repair an answer: keep supported claims, edit the middle band (with an LLM), drop the rest."""
    from groundwire.data.rows import read_text
    from groundwire.llm.judge import adjudicate
    from groundwire.llm.client import LLMError, client_from_config
    from groundwire.llm.repair import repair

    config = _config(config_file)
    chunks = read_chunks(context)
    text = read_text(answer[1:]) if answer.startswith("@") else answer
    use_llm = config.llm_configured if llm is None else llm
    options = {
        "min_surviving_share": config.repair.min_surviving_share,
        "abstain_message": config.repair.abstain_message,
    }
    if use_llm:
        with client_from_config(config) as client:
            verifier = build_verifier(config, scorer, client=client)
            try:
                report = verifier.verify(
                    text, chunks, question=question, require_citations=config.verify.require_citations
                )
                # The judge first: a middle-band claim it can decide needs no edit.
                report = adjudicate(report, chunks, client=client)
                repaired = repair(report, chunks, verifier=verifier, client=client, **options)
            except LLMError as error:
                _llm_failed(error)
    else:
        verifier = build_verifier(config, scorer)
        report = verifier.verify(text, chunks, question=question, require_citations=config.verify.require_citations)
        repaired = repair(report, chunks, verifier=verifier, **options)
    if as_json:
        _print_json(repaired.to_dict())
    else:
        _render_repair(repaired)
    if fail_on_fallback and repaired.abstained:
        raise typer.Exit(EXIT_FALLBACK)


# --- helpers -------------------------------------------------------------------------------------------


def _config(path: Path | None, **generate_overrides: Any) -> Config:
    from groundwire.config import load_config

    config = load_config(path)
    changes = {key: value for key, value in generate_overrides.items() if value is not None}
    if changes:
        config = config.model_copy(update={"generate": config.generate.model_copy(update=changes)})
    return config


def _llm_failed(error: Exception) -> None:
    from groundwire.cli.main import errors

    errors.print(
        f"[red]LLM endpoint failed:[/] {error}\nCheck [llm] base_url / model / api_key in groundwire.toml "
        "or GROUNDWIRE_LLM_* in the environment."
    )
    raise typer.Exit(EXIT_LLM)


def _print_json(payload: dict[str, Any]) -> None:
    from groundwire.cli.main import console

    console.print(json.dumps(payload, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)


def _render_generation(result: Any, chunks: list[Chunk]) -> None:
    from groundwire.cli.main import console, render_report

    table = Table(title="attempts")
    for column in ("#", "strength", "model", "score", "action", "reason"):
        table.add_column(column, overflow="fold")
    for attempt in result.attempts:
        table.add_row(
            str(attempt.number), attempt.strength, attempt.model, f"{attempt.score:.2f}", attempt.action, attempt.reason
        )
    console.print(table)
    for escalation in result.escalations:
        console.print(f"[yellow]escalated[/] {escalation.from_model} -> {escalation.to_model}: {escalation.reason}")
    if result.report.claims:
        render_report(result.report, list(result.chunks) or chunks)
    label = "fallback" if result.fallback else result.outcome.action
    console.print(f"[bold]{label}[/]: {result.outcome.reason}")
    console.print(result.answer, markup=False, highlight=False)


def _render_repair(repaired: Any) -> None:
    from groundwire.cli.main import console

    table = Table(title=f"repair (score {repaired.original.score:.2f} -> {repaired.report.score:.2f})")
    for column in ("claim", "action", "reason", "edit"):
        table.add_column(column, overflow="fold")
    for action in repaired.actions:
        table.add_row(action.claim, action.action, action.reason, action.edited or "")
    console.print(table)
    state = "abstained" if repaired.abstained else f"{repaired.surviving_share:.0%} of claims survive"
    console.print(f"[bold]{state}[/]")
    console.print(repaired.answer, markup=False, highlight=False)
