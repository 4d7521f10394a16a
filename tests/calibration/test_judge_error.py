"""`--judge-error auto` (calibration/judge_error.py): the judge's error rate measured on the scope's answers that a
reviewer also labelled, used by a refit when the overlap is large enough, else 0 with the reason recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundwire.foundation.errors import ErrorCode, InputError

pytest.importorskip("sqlalchemy")

LABELLED = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"
CHUNK = "The castle faces the harbor."


def _store(tmp_path: Path):
    from groundwire.data.store import Store

    return Store(f"sqlite:///{tmp_path / 'log.db'}")


def _logged(store, answer: str) -> str:
    from groundwire.data.store import RequestRecord
    from groundwire.pipeline import CheckSettings, build_verifier

    report = build_verifier(CheckSettings(scorer="lexical")).verify(answer, [CHUNK])
    return store.log_request(RequestRecord.from_report(report, scope="ops", context=CHUNK))


def test_the_judge_s_error_rate_is_measured_on_the_answers_both_labelled(tmp_path: Path) -> None:
    """Only requests with both a reviewer's verdict in force and a judge's label count; the newest of each is the one
    compared (a reviewer who changed their mind, a judge asked again)."""
    from groundwire.calibration.judge_error import JudgeAgreement, judge_agreement

    store = _store(tmp_path)
    try:
        agree = [_logged(store, f"The castle faces the harbor {i}.") for i in range(3)]
        for request in agree:
            store.add_review(request, scope="ops", faithful=True)
            store.add_judge_label(request, scope="ops", faithful=True, judge="j")
        differ = _logged(store, "The castle faces the north harbor.")
        store.add_review(differ, scope="ops", faithful=False)
        store.add_judge_label(differ, scope="ops", faithful=True, judge="j")
        changed = _logged(store, "The castle faces the south harbor.")  # both wrong at first, then agreeing
        store.add_review(changed, scope="ops", faithful=True)
        store.add_review(changed, scope="ops", faithful=False)
        store.add_judge_label(changed, scope="ops", faithful=True, judge="j")
        store.add_judge_label(changed, scope="ops", faithful=False, judge="j")
        store.add_judge_label(_logged(store, "Judge only."), scope="ops", faithful=False, judge="j")
        store.add_review(_logged(store, "Reviewer only."), scope="ops", faithful=False)
        found = judge_agreement(store, scope="ops")
        assert judge_agreement(store, scope="elsewhere") == JudgeAgreement(0, 0)
    finally:
        store.close()
    assert found == JudgeAgreement(overlap=5, disagreements=1)
    assert found.rate == pytest.approx(0.2)
    low, high = found.interval() or (None, None)
    assert low is not None and high is not None and low < 0.2 < high
    assert JudgeAgreement(0, 0).rate is None and JudgeAgreement(0, 0).interval() is None


def test_auto_uses_the_measured_rate_clipped_and_falls_back_to_0_with_the_reason(tmp_path: Path) -> None:
    from groundwire.calibration.judge_error import MAX_RATE, MIN_OVERLAP, resolve_judge_error

    store = _store(tmp_path)
    try:
        requests = [_logged(store, f"The castle faces the harbor {i}.") for i in range(5)]
        for i, request in enumerate(requests):
            store.add_review(request, scope="ops", faithful=True)
            store.add_judge_label(request, scope="ops", faithful=i != 0, judge="j")
        few = resolve_judge_error("auto", store, scope="ops")
        enough = resolve_judge_error("auto", store, scope="ops", min_overlap=5)
        stated = resolve_judge_error(0.1, store, scope="ops")
        for request in requests:  # now the judge is wrong on every one: a rate of 1 is clipped below a half
            store.add_judge_label(request, scope="ops", faithful=False, judge="j")
        wrong = resolve_judge_error("auto", store, scope="ops", min_overlap=5)
    finally:
        store.close()
    assert MIN_OVERLAP == 30
    assert few.rate == 0.0 and isinstance(few.record, dict)
    assert (few.record["overlap"], few.record["disagreements"]) == (5, 1)
    assert "fewer than the 30 needed" in str(few.record["reason"]) and "taken as right" in str(few.record["reason"])
    assert enough.rate == pytest.approx(0.2) and isinstance(enough.record, dict)
    assert (enough.record["overlap"], enough.record["disagreements"]) == (5, 1)
    assert stated.rate == 0.1 and stated.record == "stated"
    assert wrong.rate == MAX_RATE


def test_the_judge_error_option_takes_a_rate_or_auto_and_refuses_anything_else() -> None:
    from groundwire.calibration.judge_error import parse_judge_error

    assert parse_judge_error("auto") == "auto" and parse_judge_error("AUTO") == "auto"
    assert parse_judge_error("0.1") == 0.1 and parse_judge_error("0") == 0.0
    for bad in ("bogus", "0.5", "-0.1", ""):
        with pytest.raises(InputError, match="--judge-error") as refused:
            parse_judge_error(bad)
        assert refused.value.code is ErrorCode.INVALID_OPTION


def test_service_settings_take_auto_and_refuse_anything_else(tmp_path: Path) -> None:
    from groundwire.service.settings import ServiceSettings

    assert ServiceSettings(judge_error="auto").judge_error == "auto"
    assert ServiceSettings(judge_error=0.2).judge_error == 0.2
    for bad in ("bogus", 0.5, -0.1, True):
        with pytest.raises(InputError, match=r"judge_error must be in \[0, 0.5\).*or \"auto\"") as refused:
            ServiceSettings(judge_error=bad)  # type: ignore[arg-type]
        assert refused.value.code is ErrorCode.INVALID_SETTINGS


def test_a_refit_with_auto_corrects_for_the_measured_rate_and_records_it(tmp_path: Path) -> None:
    """learn.refit_scope (what `serve --learn --judge-error auto` runs in its child process) measures the rate on the
    scope's answers both a reviewer and the judge labelled: here the judge is wrong on 8 of 80."""
    from groundwire.calibration import versions
    from groundwire.calibration.adapt import Targets
    from groundwire.calibration.learn import refit_scope
    from groundwire.data.rows import read_eval_jsonl
    from groundwire.data.store import RequestRecord
    from groundwire.pipeline import CheckSettings, build_verifier

    settings = CheckSettings(scorer="lexical")
    verifier = build_verifier(settings)
    store = _store(tmp_path)
    try:
        for i, row in enumerate(read_eval_jsonl(LABELLED)):
            report = verifier.verify(row.answer, list(row.chunks), question=row.question, task=row.task)
            request_id = store.log_request(RequestRecord.from_report(report, scope="ops", context=row.context[0]))
            store.add_review(request_id, scope="ops", faithful=not row.hallucinated)
            store.add_judge_label(request_id, scope="ops", faithful=(not row.hallucinated) != (i % 10 == 0), judge="j")
        learned = refit_scope(store, scope="ops", folder=tmp_path / "ops", in_force=verifier, settings=settings,
                              targets=Targets(far=0.2, frr=0.2), use="judge", judge_error="auto")
    finally:
        store.close()
    entry = versions.history(tmp_path / "ops")[-1]
    assert entry["labels"]["judge_error"] == pytest.approx(0.1)
    measured = entry["labels"]["judge_error_from"]
    assert (measured["auto"], measured["overlap"], measured["disagreements"]) == (True, 80, 8)
    assert learned.version == "v0001", learned.reason
    source = json.loads((tmp_path / "ops" / "profile.json").read_text())["labels_from"]
    assert source["judge_error"] == pytest.approx(0.1) and source["judge_error_from"] == measured


def test_the_cli_help_of_judge_error_auto_states_the_overlap_it_needs() -> None:
    """The serve and adapt help texts give MIN_OVERLAP as a number (importing it would load the fitting code into
    every CLI start); this keeps the two in step."""
    from typer.main import get_command

    from groundwire.calibration.judge_error import MIN_OVERLAP
    from groundwire.cli.main import app

    commands = get_command(app).commands  # type: ignore[attr-defined]
    for command in (commands["serve"], commands["adapt"].commands["fit"]):
        helps = [p.help for p in command.params if p.name == "judge_error"]
        assert len(helps) == 1 and f"fewer than {MIN_OVERLAP} of them" in helps[0], (command.name, helps)
