"""`groundwire eval-loop`: quality metrics over a frozen set and a rolling sample of the request log."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from groundwire.cli.common import check_settings
from groundwire.data.rows import read_eval_jsonl
from groundwire.foundation.errors import ErrorCode, InputError


def register(app: typer.Typer) -> None:
    app.command("eval-loop")(eval_loop)


def eval_loop(
    frozen: Annotated[
        list[Path] | None, typer.Option("--frozen", "-f", metavar="FILE", help="A frozen set: grounding-eval JSONL. Repeatable.")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Read at most this many rows of each frozen file.")] = None,
    db: Annotated[str | None, typer.Option(help="The request log: SQLAlchemy URL or SQLite file path.")] = None,
    scope: Annotated[
        str | None, typer.Option(help="Only this permission scope's requests (default: every scope).")
    ] = None,
    sample: Annotated[int, typer.Option(min=1, help="Size of the rolling sample of the request log.")] = 500,
    days: Annotated[
        float, typer.Option(min=0.0, help="The rolling window: requests of the last N days (0: all).")
    ] = 28.0,
    seed: Annotated[int, typer.Option(help="Seed of the rolling sample (the same seed resamples the same rows).")] = 0,
    release: Annotated[
        str | None, typer.Option(help="Release tag of this run (frozen-set rows are labelled with it).")
    ] = None,
    scorer: Annotated[
        str | None, typer.Option(help="Scorer for the frozen set and the evidence check (default: bundled).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for eval-loop.json and eval-loop.html.")] = Path(
        "eval-loop"
    ),
    corpus_check: Annotated[
        bool, typer.Option(help="Search the corpus to split failures into retrieval misses and generator drift.")
    ] = True,
    save: Annotated[bool, typer.Option(help="Record this run in the store's history (plotted over time).")] = True,
    target_far: Annotated[float | None, typer.Option(
        min=0.001, max=0.99, help="With --db and --scope: the false-accept target of the refit the labels section "
                                  "reports, as `groundwire adapt --target-far` (nothing is written; default 0.10).")] = None,
    target_frr: Annotated[float | None, typer.Option(
        min=0.001, max=0.99, help="With --db and --scope: the false-reject target of that refit, as adapt's "
                                  "(default 0.10).")] = None,
    confidence: Annotated[float | None, typer.Option(
        min=0.5, max=0.999, help="With --db and --scope: the confidence of that refit, as adapt's (default 0.9).")] = None,
) -> None:
    """Faithfulness, refusal, escalation, retrieval hit rate and claim density, per release and segment."""
    # Lazy: the eval loop, the store (SQLAlchemy), the settings and the progress bar load only when this command runs.
    from rich.console import Console
    from rich.progress import Progress

    from groundwire.calibration.adapt import Targets
    from groundwire.calibration.refit import labels_section
    from groundwire.config import load_config
    from groundwire.evaluation.evalloop import render_html, run_eval_loop
    from groundwire.pipeline import build_verifier

    if not frozen and db is None:
        raise InputError("give a frozen set (--frozen FILE.jsonl) and/or a request log (--db URL|FILE)",
                         code=ErrorCode.INVALID_OPTION)
    refit_options = {name: value for name, value in (("far", target_far), ("frr", target_frr),
                                                     ("confidence", confidence)) if value is not None}
    if refit_options and (db is None or scope is None):
        raise InputError("--target-far / --target-frr / --confidence set the refit of a scope's labels: give --db and "
                         "--scope too", code=ErrorCode.INVALID_OPTION)
    targets = Targets(**refit_options)
    rows = [row for path in frozen or [] for row in read_eval_jsonl(path, limit=limit)]
    if frozen and not rows:
        raise InputError("the frozen set files hold no rows", code=ErrorCode.NO_ROWS)
    store = None
    if db is not None:
        from groundwire.data.store import Store

        store = Store.open(db)
    since = datetime.now(UTC) - timedelta(days=days) if days > 0 else None
    settings = check_settings(load_config(), scorer)
    verifier = build_verifier(settings)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("verifying the frozen set", total=len(rows))
        result = run_eval_loop(verifier=verifier, frozen_rows=rows, store=store,
                               scope=scope, sample_size=sample, since=since, seed=seed, release=release,
                               corpus_check=corpus_check, save=save, on_row=lambda: progress.advance(bar))
    labels = None
    if store is not None:
        if scope is not None:  # a refit is of one scope's labels: what `groundwire adapt --from-log` would fit
            with Progress(console=Console(stderr=True), transient=True) as progress:
                progress.add_task("checking the scope's labelled answers as groundwire adapt would", total=None)
                assert db is not None  # the store is open
                labels = labels_section(store, scope=scope, in_force=verifier, settings=settings, db=db,
                                        targets=targets, scorer=scorer)
            result = replace(result, labels=labels.to_dict())
        store.close()
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval-loop.json").write_text(json.dumps(result.to_dict(), indent=2, default=str), encoding="utf-8")
    (out / "eval-loop.html").write_text(render_html(result), encoding="utf-8")
    for name, section in (("frozen", result.frozen), ("rolling", result.rolling)):
        if section:
            overall = section["overall"]
            shown = ", ".join(
                f"{k}={_short(overall[k])}"
                for k in ("n", "faithfulness", "refusal_rate", "escalation_rate", "retrieval_hit_rate", "claim_density")
            )
            typer.echo(f"{name}: {shown}; failures {overall['failures']}")
    if labels is not None:
        for line in labels.lines():
            typer.echo(line)
    elif store is not None:
        typer.echo("labels: give --scope to count a scope's reviewed answers and see what groundwire adapt would "
                   "fit on them")
    typer.echo(f"wrote {out / 'eval-loop.json'} and {out / 'eval-loop.html'}")


def _short(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
