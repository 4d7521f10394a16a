"""Judge labels in the store (data/store/judge_labels.py) and read as labelled rows (data.labelled): kept apart from
reviewers' verdicts, read only where a fit asks for them; with both kinds, a reviewer's verdict wins."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

CHUNK = "The castle faces the harbor."


def _logged(store, answer: str) -> str:
    from groundwire.data.store import RequestRecord
    from groundwire.pipeline import CheckSettings, build_verifier

    report = build_verifier(CheckSettings(scorer="lexical")).verify(answer, [CHUNK])
    return store.log_request(RequestRecord.from_report(report, scope="ops", context=CHUNK))


def test_judge_labels_are_read_only_where_asked_and_a_reviewer_s_verdict_wins(tmp_path: Path) -> None:
    from groundwire.calibration.learn import logged_claim_rows
    from groundwire.data.labelled import check_label_use, labels_in_force, read_labelled
    from groundwire.data.store import JudgeLabel, ReviewVerdict, Store
    from groundwire.foundation.errors import InputError

    store = Store(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        reviewed = _logged(store, "The castle faces the harbor.")
        judged = _logged(store, "The castle faces the north harbor.")
        both = _logged(store, "The castle faces the south harbor.")
        store.add_review(reviewed, scope="ops", faithful=True)
        store.add_judge_label(judged, scope="ops", faithful=False, judge="j", unfaithful_claims=[0])
        store.add_judge_label(both, scope="ops", faithful=True, judge="j")
        store.add_review(both, scope="ops", faithful=False)

        human = labels_in_force(store, scope="ops", use="human")
        assert [(r.id, type(label)) for r, label in human] == [(reviewed, ReviewVerdict), (both, ReviewVerdict)]
        assert [(r.id, type(label)) for r, label in labels_in_force(store, scope="ops", use="judge")] == [
            (judged, JudgeLabel), (both, JudgeLabel)]
        mixed = labels_in_force(store, scope="ops", use="both")
        assert [(r.id, type(label)) for r, label in mixed] == [
            (reviewed, ReviewVerdict), (judged, JudgeLabel), (both, ReviewVerdict)]  # the reviewer's wins

        rows, judge_ids, _ = read_labelled(store, scope="ops", use="both")
        assert judge_ids == {judged} and [row.hallucinated for row in rows] == [False, True, True]
        assert rows[1].spans  # the claim the judge ruled against, as a reviewer's marked claim would be
        assert read_labelled(store, scope="ops")[1] == frozenset()

        from groundwire.pipeline import CheckSettings, build_verifier

        model = build_verifier(CheckSettings(scorer="lexical")).scorer.model_id
        only_human, unchecked, ids, _, _ = logged_claim_rows(store, scope="ops", model_id=model)
        assert not ids and not unchecked and {r.label_kind for r in only_human} == {"human"}
        assert {r.row_id for r in only_human} == {reviewed, both}
        with_judge, _, ids, _, _ = logged_claim_rows(store, scope="ops", model_id=model, use="both",
                                                  judge_weight=0.4)
        assert ids == {judged}
        assert {(r.row_id, r.label_kind, r.weight) for r in with_judge} == {
            (reviewed, "human", 1.0), (judged, "judge", 0.4), (both, "human", 1.0)}
        assert store.judge_labels_version(scope="ops")[0] == 2 and store.verdicts_version(scope="ops")[0] == 2
        with pytest.raises(InputError, match="human, judge or both"):
            check_label_use("robots")
        with pytest.raises(InputError, match="no logged request"):
            store.add_judge_label("nope", scope="ops", faithful=True, judge="j")
    finally:
        store.close()


def test_the_service_s_refit_and_the_bench_weigh_judge_labels_by_one_code_path(tmp_path: Path) -> None:
    """learn.refit_scope (serve --learn --judge-labels) on judge labels in the log writes the profile that
    guard.guarded_refit gives on the same answers marked as bench/learning_loop.py marks a judge's labels
    (combine.weighted_by_kind at the judge weight, `use` judge)."""
    import json

    from groundwire.calibration import combine, guard
    from groundwire.calibration.adapt import Targets, shipped
    from groundwire.calibration.learn import refit_scope
    from groundwire.data.labelled import read_labelled
    from groundwire.data.rows import EvalRow, read_eval_jsonl
    from groundwire.data.store import RequestRecord, Store
    from groundwire.pipeline import CheckSettings, build_verifier
    from groundwire.scoring.base import calibration_of

    labelled = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"
    settings = CheckSettings(scorer="lexical")
    verifier = build_verifier(settings)
    targets = Targets(far=0.2, frr=0.2)
    store = Store(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        for row in read_eval_jsonl(labelled):
            report = verifier.verify(row.answer, list(row.chunks), question=row.question, task=row.task)
            request_id = store.log_request(RequestRecord.from_report(report, scope="ops", context=row.context[0]))
            store.add_judge_label(request_id, scope="ops", faithful=not row.hallucinated, judge="j")
        learned = refit_scope(store, scope="ops", folder=tmp_path / "ops", in_force=verifier, settings=settings,
                              targets=targets, use="judge", judge_weight=0.8)
        rows, judged, _ = read_labelled(store, scope="ops", use="judge")
    finally:
        store.close()
    assert learned.version == "v0001", learned.reason
    claim_rows = combine.weighted_by_kind(
        combine.collect_rows([r for r in rows if isinstance(r, EvalRow)], verifier, file="request_log"), judged,
        judge_weight=0.8)
    routing = shipped(calibration_of(verifier.scorer))
    by_hand = guard.guarded_refit(claim_rows, routing, routing, targets=targets, base_model=verifier.scorer.model_id,
                                  calibration=calibration_of(verifier.scorer), scope="ops", use="judge")
    assert by_hand.adapted is not None
    written = json.loads((tmp_path / "ops" / "profile.json").read_text())
    assert written == by_hand.adapted.document
    kinds = written["labels_from"]["label_kinds"]  # the answers it was fitted on: all but the held-back share
    assert kinds["human"] == 0 and kinds["judge"] == by_hand.labels["fitted_on"]
    from groundwire.calibration import versions

    entry = versions.history(tmp_path / "ops")[-1]
    assert (entry["labels"]["human"], entry["labels"]["judge"], entry["labels"]["judge_weight"]) == (0, 80, 0.8)
    assert written["labels_from"]["judge_weight"] == 0.8 and written["guard"]["labels"] == "human and judge"
