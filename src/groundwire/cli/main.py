"""The `groundwire` command line: a thin layer over the library.

Exit status: 0 OK; 1 `check` rejected the answer (a row, with --input); 2 bad input; 3 the LLM endpoint failed;
4 an unexpected internal error (one line; the traceback with --debug); a batch that ran to the end with rows in
error: 5 some of them, 6 every one; 7 `check` escalated the answer (a row) and rejected none.
Each status is its code's or outcome's, in cli/exit_status.py (EXIT_STATUS, CommandOutcome; docs/errors.md).
Other areas add their commands from their own modules (see COMMAND_MODULES), each exposing register(app).
Start-up: this module, and every command module, imports only typer, rich and groundwire's light modules, so that
`groundwire --help` starts fast; a command imports what it needs (the settings, the verifier, the LLM client)
when it runs. tests/cli/test_cli_core_install.py pins that `import groundwire.cli.main` loads none of them.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
import typing
from contextvars import ContextVar
from pathlib import Path
from types import FunctionType
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console

from groundwire.cli.common import (
    AcceptAtOption,
    CanonicalFiguresOption,
    CascadeOption,
    DecideAtOption,
    DecomposerOption,
    EntitiesOption,
    MeaningOption,
    ProfileOption,
    PrunerOption,
    RejectAtOption,
    RequireCitationsOption,
    RouteOption,
    check_settings,
    read_answer,
    read_chunks,
    refuse_judge,
    require_llm,
)
from groundwire.cli.exit_status import EXIT_STATUS, CommandOutcome
from groundwire.cli.output import console, literal, print_json, render_report, styled
from groundwire.core.explain import format_threshold
from groundwire.data.rows import EvalRow, RowError, parse_columns, read_rows
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import require_extra
from groundwire.foundation.types import Route
from groundwire.llm.errors import LLMError
from groundwire.redact import redact

if TYPE_CHECKING:
    from groundwire.config import CheckSettings, Config
    from groundwire.core.verifier import Verifier
    from groundwire.evaluation.evaluate import EvalSummary, RowOutcome
    from groundwire.llm.client import LLMClient
    from groundwire.pipeline import Judge

COMMAND_MODULES: tuple[str, ...] = ("groundwire.cli.serve", "groundwire.cli.llm", "groundwire.cli.prod", "groundwire.cli.batch", "groundwire.cli.train", "groundwire.cli.doctor", "groundwire.cli.adapt")

app = typer.Typer(
    name="groundwire", add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Catch and repair fabricated claims in RAG answers.",
    rich_markup_mode=None,  # help text is printed as written: "[llm]" is a config section, not a style tag
)
# --debug, as the app's callback read it for this run: run_cli's error handler reads it after the command has
# returned or raised, outside click's context; a ContextVar scopes it to the run (run_cli resets it).
_show_traceback: ContextVar[bool] = ContextVar("groundwire_show_traceback", default=False)
errors = Console(stderr=True, soft_wrap=True)  # never wrap a message: a wrapped path is hard to copy

ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="groundwire.toml to read (default: $GROUNDWIRE_CONFIG or ./groundwire.toml).")
]
ColumnsOption = Annotated[
    str | None,
    typer.Option("--columns", help="Your column names, e.g. answer=response,context=retrieved_contexts,question=user_input "
                                   "(RAGAS and DeepEval names are recognised without it)."),
]
ScorerOption = Annotated[
    str | None, typer.Option("--scorer", help="lexical, bundled, hf:<id or path>, hhem:<id or path> (default: bundled)")
]
FailOnOption = Annotated[
    Literal["reject", "escalate", "never"],
    typer.Option("--fail-on", help="The decisions that fail the command: escalate (the default: 7 for an escalated "
                                   "answer, 1 for a rejected one), reject (1 for a rejected answer only: an "
                                   "escalated one passes) or never (exit 0 whatever the decision)."),
]
# The decisions each --fail-on value fails, worst first: the exit status is the worst one met's.
FAILING_DECISIONS: dict[str, tuple[Route, ...]] = {
    "reject": (Route.REJECT,), "escalate": (Route.REJECT, Route.ESCALATE), "never": (),
}
_STATUS_OF_DECISION = {Route.REJECT: CommandOutcome.NOT_GROUNDED, Route.ESCALATE: CommandOutcome.ESCALATED}
_PAST_TENSE = {Route.ACCEPT: "accepted", Route.ESCALATE: "escalated", Route.REJECT: "rejected"}
StrictOption = Annotated[
    bool, typer.Option("--strict", help="Stop at the first malformed row (exit 2 naming its line) instead of reporting it.")
]


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an unexpected error.")] = False,
) -> None:
    """Catch and repair fabricated claims in RAG answers."""
    _show_traceback.set(debug)


@app.command()
def check(
    context: Annotated[list[Path] | None, typer.Option("--context", "-c", metavar="FILE", help="A context file, one retrieved chunk; repeat it for each chunk.")] = None,
    answer: Annotated[str | None, typer.Option("--answer", "-a", help="Answer text, or @FILE to read it.")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="The question the answer replies to: "
                                                                          "a bare answer (\"1959\") is checked as "
                                                                          "its claim.")] = None,
    task: Annotated[str | None, typer.Option(help="qa, summary, data2text, dialogue or claim: the calibration to use "
                                                  "(default: data2text for a JSON context, else pooled).")] = None,
    input_file: Annotated[Path | None, typer.Option("--input", "-i", help="Batch: a grounding-eval JSONL file.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Batch: write one JSON report per line here.")] = None,
    scorer: ScorerOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    fail_on: FailOnOption = "escalate",
    fail_under: Annotated[float | None, typer.Option(hidden=True, help="Removed: see --fail-on.")] = None,
    accept_at: AcceptAtOption = None,
    reject_at: RejectAtOption = None,
    route: RouteOption = None,
    decide_at: DecideAtOption = None,
    profile: ProfileOption = None,
    decomposer: DecomposerOption = None,
    pruner: PrunerOption = None,
    canonical_figures: CanonicalFiguresOption = None,
    meaning: MeaningOption = None,
    entities: EntitiesOption = None,
    cascade: CascadeOption = None,
    require_citations: RequireCitationsOption = False,
    judge: Annotated[bool, typer.Option("--judge", help="Send escalated claims to the LLM judge (groundwire.toml); "
                                                        "exit 3 when the endpoint fails.")] = False,
    judge_optional: Annotated[bool, typer.Option(
        "--judge-optional", help="Like --judge, best effort: a claim the judge could not decide stays escalated "
                                 "and the report lists it under extra.judge.not_judged.")] = False,
    strict: StrictOption = False,
    config_file: ConfigOption = None,
    columns: ColumnsOption = None,
) -> None:
    """Check one answer against context files, or a batch with --input.

    Exit status 1 when the answer is rejected, 7 when it is escalated (a human should look; --fail-on reject lets
    it pass), 0 when it is accepted. With --input: rows in error first (5, 6), then the worst row's, over every
    record of --output, an earlier run's included. --fail-on never exits 0 once every answer was checked."""
    if fail_under is not None:  # removed: its score cut let an escalated answer pass; the decision is the gate
        raise InputError(f"--fail-under was removed: check's exit status follows its decision (1 on REJECT; with "
                         f"7 on ESCALATE). For the same cut as --fail-under {fail_under:g}, "
                         f"give --accept-at {fail_under:g}", code=ErrorCode.INVALID_OPTION)
    from groundwire.config import load_config
    from groundwire.pipeline import CheckItem, Judge, build_verifier
    from groundwire.pipeline import check as check_item

    config = load_config(config_file)
    # Every flag over [verify] in one step: --judge --route decide is refused before any LLM is sought.
    settings = check_settings(config, scorer, accept_at=accept_at, reject_at=reject_at, route=route,
                              decide_at=decide_at, require_citations=require_citations or None,
                              judge=(judge or judge_optional) or None, profile=profile, decomposer=decomposer,
                              pruner=pruner, canonical_figures=canonical_figures, meaning=meaning, entities=entities,
                              cascade=cascade)
    client = _llm_client(config, settings) if settings.judge or settings.decomposer == "llm" else None
    verifier = build_verifier(settings, client=client)
    judge_with = Judge(client, required=not judge_optional) if settings.judge and client is not None else None
    if input_file is not None:
        if context or answer:
            raise InputError("use either --input FILE.jsonl or --context/--answer, not both",
                             code=ErrorCode.INVALID_OPTION)
        _check_batch(verifier, input_file, output, fail_on, judge_with, strict=strict, columns=columns)
        return
    if answer is None:
        raise InputError("give --context FILE (one or more) and --answer TEXT|@FILE, or --input FILE.jsonl",
                         code=ErrorCode.INVALID_OPTION)
    chunks = read_chunks(context)
    answer_text = read_answer(answer)
    report = check_item(verifier, CheckItem(answer_text, chunks, question=question, task=task), judge=judge_with)
    if as_json:
        print_json(report.to_dict())
    else:
        render_report(report, chunks)
    _exit_on([report.route], fail_on)


def _tally(decisions: list[Route], bad: int) -> str:
    """"2 accepted, 1 escalated, 0 rejected; 1 could not be checked"."""
    counts = ", ".join(f"{decisions.count(route)} {word}" for route, word in _PAST_TENSE.items())
    return f"{counts}; {bad} could not be checked"


def _exit_on(decisions: list[Route], fail_on: str) -> None:
    """Exit with the status of the worst decision that --fail-on fails (REJECT: 1, ESCALATE: 7), if any."""
    for decision in FAILING_DECISIONS[fail_on]:
        if decision in decisions:
            raise typer.Exit(_STATUS_OF_DECISION[decision].exit_status)


def _check_batch(verifier: Verifier, input_file: Path, output: Path | None, fail_on: str,
                 judge: Judge | None, *, strict: bool, columns: str | None = None) -> None:
    """One JSON record per row, in input order: a report, or an error record (id, line, error_code, error) for a
    row that could not be read or checked; one row never ends the batch. With --output each record is written
    as it is made, and a rerun with the same output skips the ids it holds already (records and errors alike)."""
    from rich.progress import Progress

    from groundwire.data.results import WRITTEN_ERROR, written_outcomes
    from groundwire.pipeline import check_rows

    # Read everything first: with --strict a malformed line fails before any work; without, it is reported.
    rows = list(read_rows(input_file, strict=strict, columns=parse_columns(columns)))
    earlier = written_outcomes(output) if output else {}
    todo = [row for row in rows if row.id not in earlier]
    checked = check_rows(verifier, todo, judge=judge)  # one outcome per row, in order
    decisions: list[Route] = []
    bad = 0
    # Line-buffered: a record is on disk once it is written, whatever ends the run after it.
    sink = output.open("a", encoding="utf-8", buffering=1) if output else sys.stdout
    try:
        with Progress(console=errors, transient=True) as progress:
            task = progress.add_task(f"checking {input_file.name}", total=len(todo))
            for row, outcome in zip(todo, checked, strict=True):
                record: dict[str, Any] = {"id": row.id, "line": row.line}
                report = outcome.report
                if report is None:
                    bad += 1
                    record |= {"error_code": (outcome.code or ErrorCode.INTERNAL_ERROR).value,
                               "error": outcome.error or ""}
                else:
                    decisions.append(report.route)
                    record |= {"score": report.score, "route": report.route.value, "report": report.to_dict()}
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                progress.advance(task)
    finally:
        if output:
            sink.close()
    errors.print(literal(f"checked {len(todo)} of {len(rows)} rows this run: {_tally(decisions, bad)}"))
    # The exit status covers every record of the output, an earlier run's too: a rerun of a batch that stopped
    # must not pass on the rows the first run rejected or could not check.
    earlier_decisions = [Route(value) for value in earlier.values() if value != WRITTEN_ERROR]
    earlier_bad = len(earlier) - len(earlier_decisions)
    if earlier:
        errors.print(literal(f"found {len(earlier)} rows done in {output} by earlier runs: "
                             f"{_tally(earlier_decisions, earlier_bad)}"))
    decisions += earlier_decisions
    bad += earlier_bad
    if bad:  # rows in error come first: a gate on the others' decisions would hide them
        outcome_of_run = CommandOutcome.ALL_ROWS_IN_ERROR if not decisions else CommandOutcome.ROWS_IN_ERROR
        raise typer.Exit(outcome_of_run.exit_status)
    _exit_on(decisions, fail_on)


@app.command("eval")
def eval_command(
    file: Annotated[Path, typer.Argument(help="A grounding-eval JSONL file, e.g. ../shared/data/dev/ragtruth_dev.jsonl")],
    scorer: ScorerOption = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N rows.")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the summary as JSON here.")] = None,
    accept_at: AcceptAtOption = None,
    reject_at: RejectAtOption = None,
    route: RouteOption = None,
    decide_at: DecideAtOption = None,
    profile: ProfileOption = None,
    decomposer: DecomposerOption = None,
    pruner: PrunerOption = None,
    canonical_figures: CanonicalFiguresOption = None,
    meaning: MeaningOption = None,
    entities: EntitiesOption = None,
    cascade: CascadeOption = None,
    require_citations: RequireCitationsOption = False,
    target_far: Annotated[float | None, typer.Option(
        min=0.0, max=0.99, help="Re-derive thresholds on this file: at most this share of hallucinated answers "
                                "accepted. Written to groundwire.toml ([verify] accept_at / reject_at).")] = None,
    target_frr: Annotated[float | None, typer.Option(
        min=0.0, max=0.99, help="With --target-far: at most this share of faithful answers rejected.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON instead of tables.")] = False,
    strict: StrictOption = False,
    config_file: ConfigOption = None,
    columns: ColumnsOption = None,
    html_report: Annotated[Path | None, typer.Option("--html", help="Write ROC, precision-recall and score "
                                                     "histograms, per task, to this HTML file.")] = None,
    predictions: Annotated[Path | None, typer.Option(help="Write one JSON row per answer here (JSONL).")] = None,
) -> None:
    """Balanced accuracy, F1 and AUROC, and the routing rates (false accept, false reject, escalated), per task."""
    if (target_far is None) != (target_frr is None):
        raise InputError("give both --target-far and --target-frr to re-derive thresholds",
                         code=ErrorCode.INVALID_OPTION)
    if target_far is not None and route == "decide":
        raise InputError("--target-far / --target-frr set the three-way thresholds (accept_at, reject_at): "
                         "run them without --route decide", code=ErrorCode.INVALID_OPTION)
    if html_report is not None:  # its charts are drawn with matplotlib; fail before any work without it
        require_extra("eval", "matplotlib", needed_by="groundwire eval --html")
    from rich.progress import Progress

    from groundwire.config import load_config
    from groundwire.evaluation.evaluate import evaluate
    from groundwire.pipeline import build_verifier

    config = load_config(config_file)
    settings = check_settings(config, scorer, accept_at=accept_at, reject_at=reject_at, route=route,
                              decide_at=decide_at, profile=profile, decomposer=decomposer, pruner=pruner,
                              canonical_figures=canonical_figures, meaning=meaning, entities=entities,
                              cascade=cascade, require_citations=require_citations or None)
    refuse_judge(settings, "eval")
    client = _llm_client(config, settings) if settings.decomposer == "llm" else None
    verifier = build_verifier(settings, client=client)
    read = list(read_rows(file, limit=limit, strict=strict, columns=parse_columns(columns)))
    rows = [row for row in read if isinstance(row, EvalRow)]
    unreadable = [{"id": r.id, "line": r.line, "error": r.error} for r in read if isinstance(r, RowError)]
    outcomes: list[RowOutcome] = []
    with Progress(console=errors, transient=True) as progress:
        task = progress.add_task(f"evaluating {file.name}", total=len(rows))

        def on_row(outcome: RowOutcome) -> None:
            outcomes.append(outcome)
            progress.advance(task)

        summary = evaluate(rows, verifier, file=str(file), on_row=on_row)
    if unreadable:  # reported with the rows the verifier refused, never dropped
        summary = dataclasses.replace(summary, errors=[*unreadable, *summary.errors])
    if not as_json:
        _print_eval(file.name, summary)
        if summary.errors:
            errors.print(literal(f"{len(summary.errors)} rows could not be checked: {summary.errors[:3]}", "yellow"))
    if target_far is not None and target_frr is not None:
        summary = _retarget(file, rows, summary, config_file, settings, client, target_far, target_frr)
    if out:
        out.write_text(json.dumps(summary.to_dict(), indent=2), encoding="utf-8")
    _write_eval_extras(summary, outcomes, verifier, html_report, predictions)
    if as_json:
        print_json(summary.to_dict())
        return
    print(summary.final_line())


def _write_eval_extras(summary: EvalSummary, outcomes: list[RowOutcome], verifier: Verifier, html_report: Path | None,
                       predictions: Path | None) -> None:
    from groundwire.evaluation import report

    if predictions is not None:
        report.write_predictions(outcomes, predictions)
        errors.print(f"wrote {len(outcomes)} predictions to {predictions}", markup=False)
    if html_report is not None:
        html_report.write_text(report.render_html(summary, outcomes, verifier.thresholds_for), encoding="utf-8")
        errors.print(f"wrote {html_report}", markup=False)


def _print_eval(name: str, summary: EvalSummary) -> None:
    from rich.table import Table

    table = Table(title=literal(f"{name} — {summary.model_id} — {summary.seconds:.1f}s"),
                  caption="FAR: hallucinated answers accepted; FRR: faithful answers rejected; esc: escalated")
    for column in ("task", "n", "halluc", "bacc", "F1", "AUROC", "FAR", "FRR", "esc"):
        table.add_column(column, justify="right" if column != "task" else "left")
    for task_name, m in [*summary.per_task.items(), ("all", summary.overall)]:
        r = summary.routing[task_name]
        table.add_row(literal(task_name), str(m.n), str(m.positives), _num(m.balanced_accuracy), _num(m.f1_hallucinated),
                      _num(m.auroc), _num(r.false_accept), _num(r.false_reject), _num(r.escalated))
    console.print(table)


def _retarget(file: Path, rows: list[EvalRow], summary: EvalSummary, config_file: Path | None,
              settings: CheckSettings, client: LLMClient | None, target_far: float, target_frr: float) -> EvalSummary:
    """Thresholds meeting the targets on this file's answers, written to groundwire.toml, then the file
    re-evaluated at them with the same settings and flags (the checks' caps move with reject_at, so the rates are
    measured, not predicted)."""
    from groundwire.config import config_path_for_writing, write_thresholds
    from groundwire.evaluation.evaluate import evaluate
    from groundwire.evaluation.operating import thresholds_for_targets
    from groundwire.pipeline import build_verifier

    labels, scores = zip(*summary.scored, strict=True)
    try:
        new_accept, new_reject = thresholds_for_targets(labels, scores, target_far=target_far, target_frr=target_frr)
    except ValueError as exc:
        raise InputError(f"{file}: cannot set thresholds: {exc}", code=ErrorCode.INVALID_OPTION) from exc
    path = config_path_for_writing(config_file)
    write_thresholds(path, new_accept, new_reject,
                     comment=f"groundwire eval {file.name}: targets false accept {target_far:g}, "
                             f"false reject {target_frr:g}, {len(labels)} answers")
    console.print(literal(f"wrote accept_at={format_threshold(new_accept)} reject_at={format_threshold(new_reject)} "
                          f"to {path}"))
    verifier = build_verifier(settings.overridden(accept_at=new_accept, reject_at=new_reject), client=client)
    summary = evaluate(rows, verifier, file=str(file))
    _print_eval(f"{file.name} at the new thresholds", summary)
    rates = summary.routing["all"]
    for name, value, target in (("false-accept", rates.false_accept, target_far),
                                ("false-reject", rates.false_reject, target_frr)):
        if value is not None and value > target:
            errors.print(literal(f"warning: the {name} target {target:g} is not met on this file ({value:.3f}): "
                                 "answers that score 1.0 are always accepted, and an answer a check caps is always "
                                 "rejected"))
    return summary


def _llm_client(config: Config, settings: CheckSettings) -> LLMClient:
    """The [llm] endpoint of the judge or an LLM decomposer; refused, naming which, when none is configured."""
    from groundwire.llm.client import client_from_config

    require_llm(config, "--judge" if settings.judge else "--decomposer llm")
    return client_from_config(config)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _register_command_modules() -> None:
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(app)


def _evaluate_annotations(commands: typer.Typer) -> None:
    """Evaluate each command's annotations once, here. The command modules postpone their annotations (strings),
    and typer evaluates a callback's strings four times each time the command line starts, for every command, not
    only the one that runs: a tenth of a lexical `check`'s instructions (bench/startup.py --instructions). Evaluated,
    typer reads them as they are."""
    for info in [*commands.registered_commands, commands.registered_callback]:
        if info is not None and isinstance(info.callback, FunctionType):
            info.callback.__annotations__ = typing.get_type_hints(info.callback, include_extras=True)
    for group in commands.registered_groups:
        if group.typer_instance is not None:
            _evaluate_annotations(group.typer_instance)


_register_command_modules()
_evaluate_annotations(app)


def main() -> None:
    """Entry point: every failure is one line and an exit status (see the module docstring), never a traceback
    unless --debug asks for it."""
    sys.exit(run_cli())


def run_cli(args: list[str] | None = None) -> int:
    """Run the command line and return its exit status (main() passes it to sys.exit)."""
    reset = _show_traceback.set(False)
    try:
        return _run(args)
    finally:
        _show_traceback.reset(reset)


def _run(args: list[str] | None) -> int:
    try:
        status = app(args=args, standalone_mode=False)  # returns the code of a typer.Exit raised by a command
    except InputError as error:
        errors.print(styled((f"error [{error.code}]:", "red"), f" {redact(str(error))}"))
        return EXIT_STATUS[error.code]
    except (typer.Abort, KeyboardInterrupt):
        return CommandOutcome.INTERRUPTED.exit_status
    except LLMError as error:
        errors.print(styled(("LLM endpoint failed:", "red"), f" {redact(str(error))}"))
        errors.print(literal("Check [llm] base_url / model / api_key in groundwire.toml or GROUNDWIRE_LLM_* in the "
                             "environment."))
        return EXIT_STATUS[ErrorCode.LLM_UNAVAILABLE]
    except typer.exceptions.TyperException as error:  # usage errors: unknown option, bad value...
        error.show()  # type: ignore[attr-defined]
        return EXIT_STATUS[ErrorCode.INVALID_OPTION]
    except Exception as error:
        if _show_traceback.get():
            errors.print_exception()
        first_line = (str(error).splitlines() or [""])[0]
        errors.print(styled(("internal error:", "red"), f" {type(error).__name__}: {redact(first_line)} "
                            "(run with --debug for the traceback)"))
        return EXIT_STATUS[ErrorCode.INTERNAL_ERROR]
    return status if isinstance(status, int) else CommandOutcome.OK.exit_status
