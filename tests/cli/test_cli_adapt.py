"""`groundwire adapt` and --profile from the command line: exit statuses and error codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groundwire", *args], capture_output=True, text=True, timeout=300)


def test_adapt_writes_a_profile_that_check_names_and_another_model_refuses(tmp_path: Path) -> None:
    out = tmp_path / "synthetic-domain"
    made = run("adapt", str(FIXTURE), "--out", str(out), "--scorer", "lexical", "--json")
    assert made.returncode == 0, made.stderr
    document = json.loads((out / "profile.json").read_text())
    assert document == json.loads(made.stdout)
    assert document["labels"]["all"] == {"hallucinated": 32, "faithful": 48, "no_claims": 0}
    assert document["validation"]["profile"]["false_accept"]["high"] is not None

    context = tmp_path / "context.txt"
    context.write_text("The museum of Lyon was opened in 1800 by the city council.")
    checked = run("check", "-c", str(context), "-a", "The museum of Lyon was opened in 1800.", "--scorer", "lexical",
                  "--profile", str(out), "--json", "--fail-on", "never")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["meta"]["profile"] == "synthetic-domain"
    assert report["meta"]["thresholds"]["accept_at"] == document["calibration"]["thresholds"][0]

    other = run("check", "-c", str(context), "-a", "The museum opened in 1800.", "--scorer", "bundled",
                "--profile", str(out))
    assert other.returncode == 2
    assert "profile_model_mismatch" in other.stderr

    again = run("adapt", str(FIXTURE), "--out", str(out), "--scorer", "lexical")
    assert again.returncode == 2 and "output_exists" in again.stderr


def test_adapt_refuses_too_few_labels_saying_how_many_more(tmp_path: Path) -> None:
    few = tmp_path / "few.jsonl"
    few.write_text("".join(FIXTURE.read_text().splitlines(keepends=True)[:30]))
    result = run("adapt", str(few), "--out", str(tmp_path / "p"), "--scorer", "lexical")
    assert result.returncode == 2
    assert "too_few_labels" in result.stderr and "more hallucinated" in result.stderr
    assert not (tmp_path / "p").exists()


def test_adapt_on_too_few_faithful_labels_fits_the_accept_threshold_and_says_the_reject_one_is_kept(
        tmp_path: Path) -> None:
    rows = FIXTURE.read_text().splitlines(keepends=True)
    hallucinated = [row for row in rows if json.loads(row)["hallucinated"]]
    faithful = [row for row in rows if not json.loads(row)["hallucinated"]][:11]  # 22 needed
    labelled = tmp_path / "skewed.jsonl"
    labelled.write_text("".join(hallucinated + faithful))
    out = tmp_path / "p"
    made = run("adapt", str(labelled), "--out", str(out), "--scorer", "lexical")
    assert made.returncode == 0, made.stderr
    document = json.loads((out / "profile.json").read_text())
    assert document["sides"]["fitted"] == ["accept"]
    printed = " ".join(made.stdout.split())  # rich wraps long lines
    assert (f"accept threshold fitted on {len(hallucinated)} hallucinated labels; reject threshold kept at the base "
            "model's until 22 faithful labels (11 now)") in printed


def test_eval_takes_a_profile_and_refuses_a_missing_one(tmp_path: Path) -> None:
    result = run("eval", str(FIXTURE), "--scorer", "lexical", "--profile", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert "invalid_profile" in result.stderr


def _log_fixture(db: Path, *, judged: bool, judge_wrong_every: int = 0) -> None:
    """examples/labelled.jsonl checked (lexical) and logged in scope "ops", each answer reviewed; with `judged`, each
    logged a second time with the same verdict as a judge's label. With `judge_wrong_every` k, the judge labels the
    reviewed request itself instead, wrong on every k-th (the overlap `--judge-error auto` measures on)."""
    import pytest

    pytest.importorskip("sqlalchemy")
    from groundwire.data.rows import read_eval_jsonl
    from groundwire.data.store import RequestRecord, Store
    from groundwire.pipeline import CheckSettings, build_verifier

    verifier = build_verifier(CheckSettings(scorer="lexical"))
    store = Store(f"sqlite:///{db}")
    try:
        for i, row in enumerate(read_eval_jsonl(FIXTURE)):
            report = verifier.verify(row.answer, list(row.chunks), question=row.question, task=row.task)
            reviewed = store.log_request(RequestRecord.from_report(report, scope="ops", context=row.context[0]))
            store.add_review(reviewed, scope="ops", faithful=not row.hallucinated)
            if judge_wrong_every:
                wrong = i % judge_wrong_every == 0
                store.add_judge_label(reviewed, scope="ops", faithful=row.hallucinated == wrong, judge="j")
            elif judged:
                again = store.log_request(RequestRecord.from_report(report, scope="ops", context=row.context[0]))
                store.add_judge_label(again, scope="ops", faithful=not row.hallucinated, judge="scripted")
    finally:
        store.close()


def test_adapt_reads_a_scope_s_reviewed_requests_from_the_log(tmp_path: Path) -> None:
    _log_fixture(tmp_path / "log.db", judged=False)
    out = tmp_path / "ops-profile"
    made = run("adapt", "--from-log", str(tmp_path / "log.db"), "--scope", "ops", "--out", str(out),
               "--scorer", "lexical")
    assert made.returncode == 0, made.stderr
    document = json.loads((out / "profile.json").read_text())
    assert document["labels"]["all"]["hallucinated"] == 32 and document["labels"]["all"]["faithful"] == 48
    assert document["labels_from"] == {"kind": "request_log", "scope": "ops", "answers": 80, "unlabelled_skipped": 0,
                                       "labels": "human", "label_kinds": {"human": 80, "judge": 0},
                                       "judge_weight": None, "judge_error": None, "judge_error_from": None}
    assert str(tmp_path) not in (out / "profile.json").read_text()  # no path, no database URL
    other = run("adapt", "--from-log", str(tmp_path / "log.db"), "--scope", "nobody", "--out", str(tmp_path / "x"),
                "--scorer", "lexical")
    assert other.returncode == 2 and "no_rows" in other.stderr
    unscoped = run("adapt", "--from-log", str(tmp_path / "log.db"), "--out", str(tmp_path / "y"))
    assert unscoped.returncode == 2 and "invalid_option" in unscoped.stderr


def test_adapt_rollback_puts_the_previous_version_back_and_records_it(tmp_path: Path) -> None:
    out = tmp_path / "desk"
    assert run("adapt", str(FIXTURE), "--out", str(out), "--scorer", "lexical").returncode == 0
    second = run("adapt", str(FIXTURE), "--out", str(out), "--scorer", "lexical", "--target-far", "0.2", "--force")
    assert second.returncode == 0, second.stderr
    assert (out / "current").resolve().name == "v0002"
    rolled = run("adapt", "rollback", "--profile", str(out), "--reason", "too lax")
    assert rolled.returncode == 0, rolled.stderr
    assert (out / "current").resolve().name == "v0001"
    assert json.loads((out / "profile.json").read_text())["targets"]["false_accept"] == 0.1
    shown = run("adapt", "history", "--profile", str(out))
    assert "rolled_back v0001 (was v0002) by cli: too lax" in shown.stdout and "in force: v0001" in shown.stdout
    few = tmp_path / "few.jsonl"
    few.write_text("".join(FIXTURE.read_text().splitlines(keepends=True)[:30]))
    refused = run("adapt", str(few), "--out", str(out), "--scorer", "lexical", "--force")
    assert refused.returncode == 2 and (out / "current").resolve().name == "v0001"
    last = json.loads((out / "history.jsonl").read_text().splitlines()[-1])
    assert (last["event"], last["version"], last["by"]) == ("refused", "v0001", "adapt")
    assert "too_few_labels" in last["reason"]
    missing = run("adapt", "rollback", "--profile", str(out), "--to", "v0007")
    assert missing.returncode == 2 and "no version 'v0007'" in missing.stderr


def test_adapt_fits_on_human_judge_or_both_labels_and_says_which(tmp_path: Path) -> None:
    """Each labelled answer is logged twice: once labelled by a reviewer, once by the judge (`serve --judge-labels`).
    `--labels` picks which a profile is fitted on, and profile.json counts the kinds apart; a judge's label counts as
    its weight, so 80 judge labels at weight 0.3 are too few (32 x 0.3 hallucinated, 22 needed) where at weight 1
    they are enough."""
    _log_fixture(tmp_path / "log.db", judged=True)
    log = str(tmp_path / "log.db")

    def adapt(name: str, *options: str) -> subprocess.CompletedProcess[str]:
        return run("adapt", "--from-log", log, "--scope", "ops", "--out", str(tmp_path / name), "--scorer", "lexical",
                   "--recipe", "thresholds", *options)

    def labels_from(name: str) -> dict:
        return json.loads((tmp_path / name / "profile.json").read_text())["labels_from"]

    assert adapt("human").returncode == 0
    assert labels_from("human")["label_kinds"] == {"human": 80, "judge": 0}
    made = adapt("both", "--labels", "both", "--judge-weight", "0.5")
    assert made.returncode == 0, made.stderr
    assert {key: labels_from("both")[key] for key in ("labels", "label_kinds", "judge_weight", "answers")} == {
        "labels": "both", "label_kinds": {"human": 80, "judge": 80}, "judge_weight": 0.5, "answers": 160}
    assert "80 human, 80 judge" in made.stdout
    light = adapt("judge-light", "--labels", "judge", "--judge-weight", "0.3")
    assert light.returncode == 2 and "too_few_labels" in light.stderr
    assert "judge labels counted at weight 0.3" in light.stderr
    full = adapt("judge", "--labels", "judge", "--judge-weight", "1")
    assert full.returncode == 0, full.stderr
    assert labels_from("judge")["label_kinds"] == {"human": 0, "judge": 80}
    wrong = run("adapt", str(FIXTURE), "--out", str(tmp_path / "file"), "--labels", "judge")
    assert wrong.returncode == 2 and "invalid_option" in wrong.stderr


def test_adapt_measures_the_judge_s_error_rate_with_auto_and_records_how(tmp_path: Path) -> None:
    """`--judge-error auto` measures the rate on the scope's answers both a reviewer and the judge labelled (here the
    judge is wrong on 8 of 80) and profile.json records it with its overlap; with no overlap (each answer's judge
    label on a request of its own) the judge is taken as right and the record says why. A labelled file, or a value
    that is neither a rate nor auto, is refused (exit 2)."""
    _log_fixture(tmp_path / "overlap.db", judged=False, judge_wrong_every=10)
    _log_fixture(tmp_path / "apart.db", judged=True)

    def adapt(db: str, name: str, *options: str) -> subprocess.CompletedProcess[str]:
        return run("adapt", "--from-log", str(tmp_path / db), "--scope", "ops", "--out", str(tmp_path / name),
                   "--scorer", "lexical", "--recipe", "thresholds", "--judge-error", "auto", *options)

    def labels_from(name: str) -> dict:
        return json.loads((tmp_path / name / "profile.json").read_text())["labels_from"]

    measured = adapt("overlap.db", "measured", "--labels", "judge", "--target-far", "0.2", "--target-frr", "0.2")
    assert measured.returncode == 0, measured.stderr
    source = labels_from("measured")
    assert source["judge_error"] == 0.1
    assert {key: source["judge_error_from"][key] for key in ("auto", "overlap", "disagreements")} == {
        "auto": True, "overlap": 80, "disagreements": 8}
    assert "corrected for: 0.1; --judge-error auto: measured" in " ".join(measured.stdout.split())
    history = json.loads((tmp_path / "measured" / "history.jsonl").read_text().splitlines()[-1])
    assert history["labels"]["judge_error_from"] == source["judge_error_from"]

    apart = adapt("apart.db", "apart", "--labels", "both")
    assert apart.returncode == 0, apart.stderr
    source = labels_from("apart")
    assert source["judge_error"] == 0.0 and source["judge_error_from"]["overlap"] == 0
    assert "fewer than the 30 needed" in source["judge_error_from"]["reason"]

    on_file = run("adapt", str(FIXTURE), "--out", str(tmp_path / "file"), "--judge-error", "auto")
    assert on_file.returncode == 2 and "invalid_option" in on_file.stderr and "--from-log" in on_file.stderr
    bogus = adapt("overlap.db", "bogus", "--labels", "judge", "--judge-error", "bogus")
    assert bogus.returncode == 2 and "invalid_option" in bogus.stderr and "'bogus'" in bogus.stderr
