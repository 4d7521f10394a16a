"""The eval loop's labels section: a scope's reviewed answers counted per task and class, and what `groundwire adapt
--from-log DB --scope S` would fit on them, from adapt's own fit: eval-loop reports the profile adapt writes, and the
refusal adapt gives, on the same reviewed log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from groundwire.cli import adapt as adapt_command
from groundwire.cli import prod
from groundwire.config import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.data.rows import read_eval_jsonl
from groundwire.data.store import RequestRecord, Store
from groundwire.evaluation.evalloop import EvalLoopResult, render_html
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.pipeline import build_verifier

pytest.importorskip("sqlalchemy")

FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"
SCOPE = "<team & co>"


@pytest.fixture(scope="module")
def lexical() -> Verifier:
    return build_verifier(CheckSettings(scorer="lexical"))


def _reviewed_log(path: Path, verifier: Verifier, *, rows: int | None = None, faithful: int | None = None) -> str:
    """The fixture's labelled answers logged as the service logs them, each with a reviewer's verdict (`faithful`:
    only the first that many faithful ones)."""
    store = Store(f"sqlite:///{path}")
    try:
        read = list(read_eval_jsonl(FIXTURE, limit=rows))
        kept_faithful = [row.id for row in read if not row.hallucinated][:faithful]
        for row in (row for row in read if row.hallucinated or row.id in kept_faithful):
            report = verifier.verify(row.answer, list(row.chunks), question=row.question, task=row.task)
            request_id = store.log_request(RequestRecord.from_report(report, scope=SCOPE, context=row.context[0],
                                                                     extra={"task": row.task}))
            store.add_review(request_id, scope=SCOPE, faithful=not row.hallucinated)
        store.add_review(store.log_request(RequestRecord(scope=SCOPE, response="r", context="c")), scope=SCOPE,
                         thumbs=-1)  # thumbs alone is no label
    finally:
        store.close()
    return str(path)


def _app() -> typer.Typer:
    app = typer.Typer()
    prod.register(app)
    adapt_command.register(app)
    return app


def _eval_loop(db: str, out: Path, *extra: str) -> tuple[str, dict[str, object]]:
    result = CliRunner().invoke(_app(), ["eval-loop", "--db", db, "--scope", SCOPE, "--scorer", "lexical",
                                         "--days", "0", "--no-save", "--no-corpus-check", "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result.output, json.loads((out / "eval-loop.json").read_text())["labels"]


def test_eval_loop_reports_the_profile_adapt_writes_on_the_same_reviewed_log(tmp_path: Path,
                                                                            lexical: Verifier) -> None:
    db = _reviewed_log(tmp_path / "log.db", lexical)
    profile = tmp_path / "profile"
    made = CliRunner().invoke(_app(), ["adapt", "--from-log", db, "--scope", SCOPE, "--out", str(profile),
                                       "--scorer", "lexical"])
    assert made.exit_code == 0, made.output
    written = json.loads((profile / "profile.json").read_text())

    output, labels = _eval_loop(db, tmp_path / "report")
    refit = labels["refit"]
    assert refit["profile"] == written  # one fit: the same thresholds, labels and cross-validated rates
    assert refit["thresholds"]["all"] == written["calibration"]["thresholds"]
    assert refit["in_force"]["all"] == [lexical.accept_at, lexical.reject_at]
    assert refit["status"] == "would_change"
    assert labels["counts"]["labelled"] == 80 and labels["counts"]["unreadable"] == 0
    assert sum(t["not_faithful"] for t in labels["counts"]["by_task"].values()) == 32
    assert f"labels ({SCOPE}): 80 reviewed answers, 32 not faithful" in output
    assert "would change the thresholds in force" in output
    assert f"to write it: groundwire adapt --from-log {db} --scope '{SCOPE}' --out PROFILE --scorer lexical" in output

    # With that profile in force, the same labels refit to what is in force already.
    from groundwire.calibration.refit import labels_section

    in_force = build_verifier(CheckSettings(scorer="lexical", profile=str(profile)))
    store = Store.open(db)
    try:
        section = labels_section(store, scope=SCOPE, in_force=in_force, settings=CheckSettings(scorer="lexical"), db=db)
    finally:
        store.close()
    assert section.refit.status == "unchanged"
    assert section.refit.in_force["all"] == tuple(written["calibration"]["thresholds"])


def test_eval_loop_reports_adapts_refusal_with_how_many_more_labels(tmp_path: Path, lexical: Verifier) -> None:
    db = _reviewed_log(tmp_path / "log.db", lexical, rows=20)  # 8 hallucinated (11 needed), 12 faithful (22)
    refused = CliRunner().invoke(_app(), ["adapt", "--from-log", db, "--scope", SCOPE, "--out",
                                          str(tmp_path / "p"), "--scorer", "lexical", "--target-far", "0.2"])
    assert isinstance(refused.exception, InputError) and refused.exception.code == ErrorCode.TOO_FEW_LABELS

    output, labels = _eval_loop(db, tmp_path / "report", "--target-far", "0.2")
    refit = labels["refit"]
    assert refit["status"] == "refused" and refit["profile"] is None and refit["thresholds"] is None
    assert refit["refusal"] == {"code": "too_few_labels", "message": str(refused.exception)}
    assert refit["needed"] and all(n > 0 for n in refit["needed"].values())
    for name, n in refit["needed"].items():
        assert f"{n} more {name}" in str(refused.exception)
    assert refit["targets"] == {"false_accept": 0.2, "false_reject": 0.1, "confidence": 0.9}
    assert "refused (too_few_labels)" in output and "needs " in output


def test_a_one_sided_refit_is_a_change_naming_the_class_still_short(tmp_path: Path, lexical: Verifier) -> None:
    from groundwire.calibration.refit import labels_section

    db = _reviewed_log(tmp_path / "log.db", lexical, faithful=11)  # 32 hallucinated, 11 faithful: 22 needed
    store = Store.open(db)
    try:
        section = labels_section(store, scope=SCOPE, in_force=lexical, settings=CheckSettings(scorer="lexical"), db=db)
    finally:
        store.close()
    refit = section.refit
    assert refit.status == "would_change" and refit.profile is not None
    assert refit.profile["sides"]["fitted"] == ["accept"]
    assert refit.needed == {"faithful": 11}
    assert refit.thresholds is not None and refit.thresholds["all"][1] == lexical.reject_at  # kept: the base's
    assert ("  one-sided: the other threshold stays the base model's until 11 more faithful labelled answers with a "
            "checkable claim") in section.lines()


def test_the_section_is_escaped_in_the_report_and_targets_need_a_scope(tmp_path: Path, lexical: Verifier) -> None:
    db = _reviewed_log(tmp_path / "log.db", lexical, rows=10)
    _, labels = _eval_loop(db, tmp_path / "report")
    page = render_html(EvalLoopResult(None, None, labels=labels))
    assert "scope &lt;team &amp; co&gt;" in page and SCOPE not in page
    common = ["eval-loop", "--db", db, "--scorer", "lexical", "--days", "0", "--no-save", "--no-corpus-check",
              "--out", str(tmp_path / "r2")]
    refused = CliRunner().invoke(_app(), [*common, "--target-far", "0.2"])
    assert refused.exit_code != 0 and "--scope" in str(refused.exception)
    unscoped = CliRunner().invoke(_app(), common)
    assert unscoped.exit_code == 0 and "labels: give --scope" in unscoped.output


def test_no_labels_is_adapts_no_rows_refusal_naming_every_label_needed(tmp_path: Path, lexical: Verifier) -> None:
    from groundwire.calibration.adapt import Targets
    from groundwire.calibration.refit import labels_section

    store = Store(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        section = labels_section(store, scope="empty", in_force=lexical, settings=CheckSettings(scorer="lexical"),
                                 db="DB")
    finally:
        store.close()
    assert section.counts.labelled == 0 and section.refit.status == "refused"
    assert section.refit.refusal is not None and section.refit.refusal["code"] == "no_rows"
    assert section.refit.needed == dict(zip(("hallucinated", "faithful"), Targets().needed(), strict=True))


def test_a_refit_adapt_cannot_make_is_not_computed_and_the_count_stands(tmp_path: Path, lexical: Verifier) -> None:
    from groundwire.calibration.refit import labels_section
    from groundwire.core.cancel import CancelToken, cancellable

    db = _reviewed_log(tmp_path / "log.db", lexical, rows=40)
    store = Store.open(db)
    try:
        # The service's time budget spent before adapt's checks are done.
        with cancellable(CancelToken.after(-1)):
            timed_out = labels_section(store, scope=SCOPE, in_force=lexical, settings=CheckSettings(scorer="lexical"),
                                       db="DB")
        # Settings adapt cannot check with (an LLM decomposer and no endpoint): the error adapt would stop with.
        unusable = labels_section(store, scope=SCOPE, in_force=lexical, db="DB",
                                  settings=CheckSettings(scorer="lexical", decomposer="llm"))
    finally:
        store.close()
    for section, code in ((timed_out, "time_budget_exceeded"), (unusable, "llm_not_configured")):
        assert section.counts.labelled == 40
        assert section.refit.status == "not_computed" and section.refit.refusal is not None
        assert section.refit.refusal["code"] == code and section.refit.thresholds is None
        assert f"not computed ({code})" in section.lines()[1]
