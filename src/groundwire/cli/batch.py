"""`groundwire batch`: verify a log of answers, locally or on a Ray cluster, resumably."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundwire.cli.common import (
    AcceptAtOption,
    CanonicalFiguresOption,
    CascadeOption,
    DecideAtOption,
    DecomposerOption,
    EntitiesOption,
    MeaningOption,
    ProfileOption,
    RejectAtOption,
    RequireCitationsOption,
    RouteOption,
    check_settings,
    refuse_judge,
)
from groundwire.cli.exit_status import CommandOutcome
from groundwire.data.rows import parse_columns
from groundwire.foundation.errors import ErrorCode, InputError


def register(app: typer.Typer) -> None:
    app.command("batch")(batch)


def batch(
    input_path: Annotated[Path, typer.Option("--input", "-i", help="logs.jsonl / logs.parquet, or a directory of them.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Results: a directory of Parquet parts (results.parquet).")],
    engine: Annotated[str, typer.Option(help="local (one process) or ray (Ray Data actor pool).")] = "local",
    address: Annotated[str | None, typer.Option(help="Ray cluster address, e.g. auto or ray://head:10001 (ray engine).")] = None,
    errors_file: Annotated[Path | None, typer.Option("--errors", help="Errors file (default: OUTPUT.errors.jsonl).")] = None,
    scorer: Annotated[str | None, typer.Option(help="lexical, bundled, hf:<id or path>... (default: [verify] scorer, else the library's).")] = None,
    pruner: Annotated[str | None, typer.Option("--pruner", "--prune", help="Pair pruner: none (exact matrix), lexical or embedding (default: [verify] pruner, else none).")] = None,
    accept_at: AcceptAtOption = None,
    reject_at: RejectAtOption = None,
    route: RouteOption = None,
    decide_at: DecideAtOption = None,
    profile: ProfileOption = None,
    decomposer: DecomposerOption = None,
    canonical_figures: CanonicalFiguresOption = None,
    meaning: MeaningOption = None,
    entities: EntitiesOption = None,
    cascade: CascadeOption = None,
    require_citations: RequireCitationsOption = False,
    batch_size: Annotated[int, typer.Option(min=1, help="Rows per verifier call / map_batches batch.")] = 32,
    actors: Annotated[int | None, typer.Option(min=1, help="Ray actor pool size (default: one per CPU).")] = None,
    cpus_per_actor: Annotated[float, typer.Option(min=0.01, help="CPUs Ray reserves for each actor.")] = 1.0,
    columns: Annotated[str | None, typer.Option(help="Your column names, e.g. answer=response,context=retrieved_contexts "
                                                     "(RAGAS and DeepEval names are recognised without it).")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")] = True,
    strict: Annotated[bool, typer.Option("--strict", help="Stop before any work at the first malformed row (exit 2 naming it).")] = False,
    config_file: Annotated[Path | None, typer.Option("--config", help="groundwire.toml to read (default: $GROUNDWIRE_CONFIG or ./groundwire.toml).")] = None,
) -> None:
    """Verify every row of INPUT and write one result row per answer to OUTPUT.

    Re-running with the same OUTPUT resumes: ids already written (or reported as errors) are skipped.
    Malformed rows are written, with their id, to the errors file and never stop the run (unless --strict).
    Exit status 5 when the output holds rows in error (this run's or an earlier one's), 6 when it holds only those.
    """
    # Lazy: the batch package (and its engines), the settings and the pruners (numpy) load only when this command
    # runs, so `groundwire --help` stays fast.
    from groundwire.batch import CheckOptions, run_batch
    from groundwire.batch.engines import ENGINES, EngineOptions
    from groundwire.config import load_config
    from groundwire.core.pruning import PRUNERS

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; choose one of {', '.join(sorted(ENGINES))}",
                         code=ErrorCode.INVALID_OPTION)
    if pruner is not None and pruner not in PRUNERS:
        raise InputError(f"unknown pruner {pruner!r}; choose one of {', '.join(sorted(PRUNERS))}",
                         code=ErrorCode.INVALID_OPTION)
    if address is not None and engine != "ray":
        raise InputError("--address is for the ray engine: add --engine ray", code=ErrorCode.INVALID_OPTION)
    config = load_config(config_file)
    settings = check_settings(config, scorer, accept_at=accept_at, reject_at=reject_at, route=route,
                              decide_at=decide_at, require_citations=require_citations or None, pruner=pruner,
                              profile=profile, decomposer=decomposer, canonical_figures=canonical_figures,
                              meaning=meaning, entities=entities, cascade=cascade)
    refuse_judge(settings, "batch")
    summary = run_batch(
        input_path,
        output,
        engine=engine,
        errors_path=errors_file,
        check=CheckOptions(settings=settings, config=config, columns=tuple(parse_columns(columns).items())),
        engine_options=EngineOptions(batch_size=batch_size, num_actors=actors, cpus_per_actor=cpus_per_actor,
                                     address=address),
        progress=progress,
        strict=strict,
    )
    rate = summary.done / summary.seconds if summary.seconds > 0 else 0.0
    typer.echo(
        f"rows in {summary.rows_in} = done {summary.done} + errors {summary.errors} + skipped (earlier runs) "
        f"{summary.skipped}; {rate:.1f} rows/s; results in {summary.output}"
        + (f"; errors in {summary.errors_path}" if summary.all_errors else ""),
        err=True,
    )
    if summary.written_before or summary.errors_before:
        typer.echo(f"found done by earlier runs: {summary.written_before} written, {summary.errors_before} in error",
                   err=True)
    # Over the whole output, earlier runs' rows included: a rerun of a batch that stopped must not pass on them.
    if summary.all_errors:
        raise typer.Exit((CommandOutcome.ALL_ROWS_IN_ERROR if summary.all_written == 0
                          else CommandOutcome.ROWS_IN_ERROR).exit_status)
