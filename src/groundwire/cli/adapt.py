"""`groundwire adapt LABELLED --out PROFILE`: a domain profile fitted on a deployment's own labelled answers;
`groundwire adapt rollback --profile DIR [--to VERSION]` puts an earlier version of a profile back in force, and
`groundwire adapt history --profile DIR` prints its record (calibration.versions).

The fitting is groundwire.calibration.adapt's (with --fine-tune, groundwire.train.adapt_tuned's); the profile is
applied with --profile (check, eval, batch, serve) or `[verify] profile` (scoring.profile). docs/adapt.md says how
many labels a profile needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from typer.core import TyperGroup

from groundwire.cli.output import console, literal, print_json
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import require_extra

if TYPE_CHECKING:
    from typer._click.core import Context  # the click typer vendors: TyperGroup.parse_args's own type

    from groundwire.calibration.adapt import Adapted
    from groundwire.calibration.judge_error import JudgeError, ResolvedJudgeError
    from groundwire.data.labelled import LabelUse
    from groundwire.data.rows import EvalRow, RowError


SUBCOMMANDS = ("rollback", "history")


class _FitByDefault(TyperGroup):
    """`adapt` fits unless its first word names a subcommand: `adapt FILE --out P` stays as it was."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not args or args[0] not in SUBCOMMANDS:
            args = ["fit", *args]
        return super().parse_args(ctx, args)


def register(app: typer.Typer) -> None:
    group = typer.Typer(cls=_FitByDefault, help="Fit a domain profile on labelled answers (`adapt FILE --out DIR`), "
                                                "roll one back (`adapt rollback`), or print its history.")
    group.command("fit", hidden=True)(adapt)
    group.command("rollback")(rollback)
    group.command("history")(show_history)
    app.add_typer(group, name="adapt")


def rollback(
    profile: Annotated[Path, typer.Option("--profile", metavar="DIR", help="The profile folder (`adapt --out`).")],
    to: Annotated[str | None, typer.Option(
        "--to", metavar="VERSION", help="The version to put back in force (v0001, ...); default: the one in force "
                                        "before the version in force (an undo).")] = None,
    reason: Annotated[str | None, typer.Option(help="Why, for the profile's history.")] = None,
) -> None:
    """Put an earlier version of a profile back in force (atomically), recorded in its history.jsonl; a service
    routing by it (`serve --profile/--profiles`) reads it on its next check."""
    from groundwire.calibration.versions import rollback as roll_back

    version = roll_back(profile, to=to, by="cli", reason=reason)
    console.print(literal(f"{profile}: {version} is in force"))


def show_history(
    profile: Annotated[Path, typer.Option("--profile", metavar="DIR", help="The profile folder (`adapt --out`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the records as JSON lines.")] = False,
) -> None:
    """Every replacement, refusal and rollback of a profile, oldest first, with the version in force."""
    from groundwire.calibration.versions import current_version, history

    entries = history(profile)
    if as_json:
        for entry in entries:
            print_json(entry)
        return
    for entry in entries:
        console.print(literal(f"{entry.get('time')} {entry.get('event')} {entry.get('version')} (was "
                              f"{entry.get('previous')}) by {entry.get('by')}: {entry.get('reason') or ''}"))
    console.print(literal(f"in force: {current_version(profile) or 'no version'}"))


def adapt(
    labelled: Annotated[Path | None, typer.Argument(help="A grounding-eval JSONL of labelled answers (hallucinated: "
                                                         "true/false), the file `eval` reads.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help="The profile directory to write.")] = None,
    target_far: Annotated[float, typer.Option(
        min=0.001, max=0.99, help="At most this share of hallucinated answers accepted.")] = 0.10,
    target_frr: Annotated[float, typer.Option(
        min=0.001, max=0.99, help="At most this share of faithful answers rejected.")] = 0.10,
    confidence: Annotated[float, typer.Option(
        min=0.5, max=0.999, help="Meet the targets with this confidence on answers like the labelled ones "
                                 "(more labels: thresholds closer to the targets, less escalation).")] = 0.9,
    recipe: Annotated[Literal["thresholds", "combiner"], typer.Option(
        help="thresholds: refit the routing thresholds only; combiner: refit the shipped combiner (its "
             "coefficients as the prior, their signs kept) and then the thresholds.")] = "combiner",
    scorer: Annotated[str | None, typer.Option(
        help="The base model: lexical, bundled, hf:<id or path> (default: [verify] scorer, else bundled).")] = None,
    columns: Annotated[str | None, typer.Option(
        "--columns", help="Your column names, e.g. answer=response,context=retrieved_contexts (as eval).")] = None,
    from_log: Annotated[str | None, typer.Option(
        "--from-log", metavar="DB", help="Instead of a file: the reviewed requests of the service's request log (a "
                                         "SQLite file or SQLAlchemy URL), labelled by reviewers' verdicts.")] = None,
    scope: Annotated[str | None, typer.Option(help="With --from-log: the scope whose reviews to read.")] = None,
    labels: Annotated[str, typer.Option(
        "--labels", help="With --from-log: fit on human labels (reviewers' verdicts), judge labels (the LLM judge's, "
                         "kept by serve --judge-labels) or both (a request with both takes the reviewer's).")] = "human",
    judge_weight: Annotated[float, typer.Option(
        "--judge-weight", min=0.001, max=1.0,
        help="With --labels judge or both: how much a judge's label counts against a reviewer's.")] = 1.0,
    judge_error: Annotated[str, typer.Option(
        "--judge-error", metavar="P|auto",
        help="With --labels judge or both: the share of the judge's labels that are wrong, in [0, 0.5); the "
             "thresholds' fit corrects for it. 0: taken as right. auto (with --from-log): measured on the scope's "
             "answers a reviewer also labelled (0 with fewer than 30 of them, recorded).")] = "0",
    fine_tune: Annotated[bool, typer.Option(
        "--fine-tune", help="Also fine-tune the bundled cross-encoder on (window, claim) pairs from the labels, on the "
                            "CPU (minutes; needs the [train] extra); the profile keeps the int8 model and scores with "
                            "it. Its rates are cross-validated with the fine-tune redone in each fold.")] = False,
    tune_steps: Annotated[int | None, typer.Option(
        "--tune-steps", min=1, hidden=True,
        help="Testing knob: cap each fine-tune at this many optimizer steps (a test's tune of seconds).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace --out if it exists.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print profile.json instead of a summary.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first malformed row.")] = False,
    config_file: Annotated[Path | None, typer.Option("--config", help="groundwire.toml to read.")] = None,
) -> None:
    """Fit a domain profile (routing thresholds, the combiner, and with --fine-tune the model) on labelled answers,
    cross-validated within them; refuse when the labels are too few to meet the targets with confidence (exit 2)."""
    from groundwire.calibration.adapt import Targets, base_settings, check_judge_weight, log_source, write_profile
    from groundwire.calibration.adapt import adapt as fit
    from groundwire.calibration.judge_error import AUTO, parse_judge_error
    from groundwire.config import load_config
    from groundwire.data.labelled import check_label_use
    from groundwire.data.rows import EvalRow
    from groundwire.pipeline import build_verifier

    if out is None:
        raise InputError("give --out DIR: the profile directory to write", code=ErrorCode.INVALID_OPTION)
    if (labelled is None) == (from_log is None):
        raise InputError("give a labelled JSONL file or --from-log DB --scope S (one of them)",
                         code=ErrorCode.INVALID_OPTION)
    if (from_log is None) != (scope is None):
        raise InputError("--from-log and --scope go together: the scope whose reviewed requests to read",
                         code=ErrorCode.INVALID_OPTION)
    use = check_label_use(labels)
    check_judge_weight(judge_weight)
    stated = parse_judge_error(judge_error)
    if stated == AUTO and from_log is None:
        raise InputError("--judge-error auto measures the judge's error rate on the request log's answers that a "
                         "reviewer also labelled: give --from-log DB --scope S, or a rate (a labelled file has no "
                         "judge labels to measure it on)", code=ErrorCode.INVALID_OPTION)
    if use != "human" and from_log is None:
        raise InputError("--labels judge or both reads the judge's labels of the request log: give --from-log DB "
                         "--scope S (a labelled file's labels are human ones)", code=ErrorCode.INVALID_OPTION)
    if use != "human" and fine_tune:
        raise InputError("--fine-tune trains on human labels only: drop --labels, or --fine-tune",
                         code=ErrorCode.INVALID_OPTION)
    targets = Targets(far=target_far, frr=target_frr, confidence=confidence)
    config = load_config(config_file)
    # The base model as the settings name it, without a profile or fixed thresholds: the profile replaces those.
    settings = base_settings(config.verify.overridden(scorer=scorer))
    source = str(labelled) if labelled is not None else log_source(str(from_log), str(scope))
    read, judged, selection, resolved = _labelled_rows(labelled, from_log, scope, strict=strict, columns=columns,
                                                       use=use, judge_error=stated)
    rows = [row for row in read if isinstance(row, EvalRow)]
    if not rows:
        raise InputError(f"{source}: no readable rows", code=ErrorCode.NO_ROWS)
    doing = "checking and fine-tuning on" if fine_tune else "checking"
    with console.status(literal(f"{doing} {len(rows)} labelled answers")), _refusal_recorded(out):
        if fine_tune:  # trains a model: train/, not the calibration layer the service shares
            from groundwire.train.adapt_tuned import adapt_fine_tuned
            from groundwire.train.finetune import TuneSettings

            adapted = adapt_fine_tuned(rows, build_verifier(settings), tune=TuneSettings(max_steps=tune_steps),
                                       recipe=recipe, targets=targets, source=source, scope=scope)
        else:
            adapted = fit(rows, build_verifier(settings), recipe=recipe, targets=targets, source=source, scope=scope,
                          judged=judged, use=use, judge_weight=judge_weight, judge_error=resolved.rate,
                          judge_error_from=resolved.record, selection=selection)
    write_profile(adapted, out, force=force)
    if as_json:
        print_json(adapted.document)
        return
    _print_summary(adapted, out)


@contextmanager
def _refusal_recorded(out: Path) -> Iterator[None]:
    """adapt's refusal of the labels, recorded in the history of a versioned profile it would have replaced (a new
    folder is not made for a refusal)."""
    from groundwire.calibration.versions import current_version, record

    try:
        yield
    except InputError as refused:
        if current_version(out) is not None:
            record(out, "refused", version=current_version(out), by="adapt",
                   reason=f"adapt refused the labels ({refused.code.value}): {refused}")
        raise


def _labelled_rows(labelled: Path | None, from_log: str | None, scope: str | None, *, strict: bool,
                   columns: str | None, use: LabelUse, judge_error: JudgeError,
                   ) -> tuple[list[EvalRow | RowError], frozenset[str], dict[str, float], ResolvedJudgeError]:
    """The labelled file's rows, or the scope's labelled requests in the log (data.labelled: `use` says which
    labels), read the same way; the ids of the rows the judge labelled; from a log, each label's weight by how
    likely the review queue was to show it (calibration.selection; a file's labels count once each); and the judge's
    error rate, stated or with `auto` measured on the log (calibration.judge_error)."""
    from groundwire.calibration.judge_error import STATED, ResolvedJudgeError, resolve_judge_error
    from groundwire.data.rows import parse_columns, read_rows

    if labelled is not None:
        assert not isinstance(judge_error, str)  # auto was refused before: a file has no judge labels
        return (list(read_rows(labelled, strict=strict, columns=parse_columns(columns))), frozenset(), {},
                ResolvedJudgeError(judge_error, STATED))
    require_extra("serve", "sqlalchemy", needed_by="groundwire adapt --from-log")
    from groundwire.calibration.selection import queue_weights
    from groundwire.data.labelled import read_labelled
    from groundwire.data.store import Store

    assert from_log is not None and scope is not None
    store = Store.open(from_log)
    try:
        read = read_labelled(store, scope=scope, use=use, strict=strict)
        return (read.rows, read.judged, queue_weights(store, scope=scope, strata=read.strata),
                resolve_judge_error(judge_error, store, scope=scope))
    finally:
        store.close()


def _print_summary(adapted: Adapted, out: Path) -> None:
    from rich.table import Table

    from groundwire.calibration.sides import describe

    document = adapted.document
    routing = document["calibration"]
    labels = document["labels"]
    assert isinstance(routing, dict) and isinstance(labels, dict)
    table = Table(title=literal(f"profile {out} (base model {document['base_model']}, recipe {document['recipe']})"),
                  caption="cross-validated within the labels, folds grouped by source document; 95% intervals")
    for column in ("", "AUROC", "false accept", "false reject", "escalated"):
        table.add_column(column, justify="left" if not column else "right")
    for name, figures in (("this profile", adapted.validation["profile"]),
                          ("shipped routing", adapted.validation["shipped"])):
        table.add_row(name, *(_figure(figures[key]) for key in ("auroc", "false_accept", "false_reject", "escalated")))
    console.print(table)
    counts = ", ".join(f"{task}: {c['hallucinated']} hallucinated / {c['faithful']} faithful"
                       for task, c in labels.items())
    console.print(literal(f"labels: {counts}"))
    source = document["labels_from"]
    if isinstance(source, dict) and source.get("labels", "human") != "human":
        kinds = source["label_kinds"]
        console.print(literal(f"label kinds ({source['labels']}): {kinds['human']} human, {kinds['judge']} judge "
                              f"(a judge's label weighed {source['judge_weight']}, its error rate corrected for: "
                              f"{source.get('judge_error') or 0:.3g}{_error_from(source.get('judge_error_from'))})"))
    own = ", ".join(f"{key} {pair[0]:g}/{pair[1]:g}" for key, pair in routing["task_thresholds"].items())
    console.print(literal(f"thresholds: accept_at {routing['thresholds'][0]:g}, reject_at {routing['thresholds'][1]:g}"
                          + (f"; per task {own}" if own else "")))
    if isinstance(sides := document.get("sides"), dict) and (one_sided := describe(sides)) is not None:
        console.print(literal(one_sided))
    if isinstance(model := document.get("model"), dict):
        pairs = model["pairs"]
        console.print(literal(f"model: {model['model_id']}, fine-tuned on {pairs['supported']} supported and "
                              f"{pairs['unsupported']} unsupported (window, claim) pairs in {model['minutes']:g} min"))
    console.print(literal(f"wrote {out}; use it with --profile {out} or [verify] profile = \"{out}\""))


def _error_from(record: object) -> str:
    """How the judge's error rate was obtained, for the summary: nothing when stated, else what auto measured."""
    return f"; --judge-error auto: {record['reason']}" if isinstance(record, dict) else ""


def _figure(value: dict[str, float | int | None]) -> str:
    if value["value"] is None:
        return "n/a"
    low, high = value["low"], value["high"]
    interval = f" ({float(low):.2f}-{float(high):.2f})" if low is not None and high is not None else ""
    return f"{float(value['value']):.3f}{interval}"
