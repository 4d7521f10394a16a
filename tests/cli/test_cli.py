import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "groundwire", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def demo_args():
    return ["check", "--context", str(EXAMPLES / "refund_policy.md"), "--context", str(EXAMPLES / "shipping.md"),
            "--answer", f"@{EXAMPLES / 'answer.txt'}"]


def test_demo_flags_the_fabricated_number_and_cites_the_rest():
    result = run(*demo_args(), "--json")
    assert result.returncode == 1, result.stderr  # rejected (CommandOutcome.NOT_GROUNDED)
    report = json.loads(result.stdout)
    flagged = [c for c in report["claims"] if c["verdict"] != "SUPPORTED"]
    assert len(flagged) == 1
    assert "25 euros" in flagged[0]["claim"]["text"]
    assert {f["check"] for f in flagged[0]["checks"]} & {"figure_conflict", "figure_not_in_context"}
    supported = [c for c in report["claims"] if c["verdict"] == "SUPPORTED"]
    assert len(supported) >= 4
    for claim in supported:  # every other claim cites the chunk whose file it came from
        expected = "S2" if "shipping" in claim["claim"]["text"].lower() else "S1"
        assert claim["chunk_id"] == expected
    assert report["route"] == "reject"


def test_human_readable_table():
    result = run(*demo_args(), "--fail-on", "never")
    assert result.returncode == 0, result.stderr
    assert "CONTRADICTED" in result.stdout and "REJECT" in result.stdout


def test_a_verbatim_answer_passes_the_default_gate(tmp_path):
    context = tmp_path / "c.txt"
    context.write_text("The castle faces the harbor.")
    ok = run("check", "--context", str(context), "--answer", "The castle faces the harbor.")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("args, message", [
    (["check", "--answer", "x"], "--context FILE"),
    (["check", "--context", "/nonexistent/file.txt", "--answer", "x"], "no such file"),
    (["check", "--scorer", "nonsense", "--context", "README.md", "--answer", "x"], "unknown scorer"),
    (["eval", "/nonexistent.jsonl"], "no such file"),
    (["check", "--bogus-flag"], "No such option"),
])
def test_bad_input_exits_2_with_a_message(args, message):
    result = run(*args, cwd=ROOT)
    assert result.returncode == 2
    assert message in result.stderr


def test_empty_answer_and_empty_context_exit_2(tmp_path):
    context = tmp_path / "c.txt"
    context.write_text("The castle faces the harbor.")
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n")
    assert "answer is empty" in run("check", "--context", str(context), "--answer", "  ").stderr
    result = run("check", "--context", str(empty), "--answer", "The castle faces the harbor.")
    assert result.returncode == 2 and "context is empty" in result.stderr


def test_non_utf8_file_exits_2_naming_the_file(tmp_path):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("Caf\xe9 prices rose by 5%.".encode("latin-1"))
    result = run("check", "--context", str(latin), "--answer", "Prices rose.")
    assert result.returncode == 2
    assert "latin1.txt" in result.stderr and "not UTF-8" in result.stderr


def eval_rows():
    return [
        {"id": "a", "task": "qa", "question": "Where?", "context": ["The castle faces the harbor."],
         "answer": "The castle faces the harbor.", "hallucinated": False, "spans": [], "source": "t"},
        {"id": "b", "task": "qa", "question": "Where?", "context": ["The castle faces the harbor."],
         "answer": "The castle faces the harbor and was built in 1412.", "hallucinated": True, "spans": [], "source": "t"},
        {"id": "c", "task": "summary", "question": None, "context": ["The museum opens at nine every day."],
         "answer": "The museum opens at nine.", "hallucinated": False, "spans": [], "source": "t"},
        {"id": "d", "task": "summary", "question": None, "context": ["The museum opens at nine every day."],
         "answer": "The museum opens at ten on Sundays and charges $20.", "hallucinated": True, "spans": [], "source": "t"},
    ]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_reports_metrics_per_task_and_a_final_line(tmp_path):
    data = write_jsonl(tmp_path / "mini.jsonl", eval_rows())
    out = tmp_path / "summary.json"
    result = run("eval", str(data), "--scorer", "lexical", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == ("balanced_accuracy=1.000 f1=1.000 auroc=1.000 false_accept=0.000 "
                                                      "false_reject=0.000 escalated=0.000 n=4")
    summary = json.loads(out.read_text())
    assert set(summary["per_task"]) == {"qa", "summary"} and summary["overall"]["n"] == 4
    assert set(summary["routing"]) == {"qa", "summary", "all"}
    assert summary["routing"]["all"] == {"n": 4, "false_accept": 0.0, "false_reject": 0.0, "escalated": 0.0}
    assert summary["seconds"] >= 0
    limited = run("eval", str(data), "--scorer", "lexical", "--limit", "2")
    assert limited.stdout.strip().endswith("n=2")


def _with_bad_line(tmp_path):
    rows = [json.dumps(r) for r in eval_rows()]
    rows.insert(2, '{"id": "broken", "context": ["x"], "answer": ')
    data = tmp_path / "bad.jsonl"
    data.write_text("\n".join(rows) + "\n")
    return data


def test_strict_stops_at_a_malformed_line_and_names_it(tmp_path):
    data = _with_bad_line(tmp_path)
    out = tmp_path / "reports.jsonl"
    for command in (["eval", str(data)], ["check", "--input", str(data), "--output", str(out)]):
        result = run(*command, "--scorer", "lexical", "--strict")
        assert result.returncode == 2
        assert "bad.jsonl:3" in result.stderr and "invalid JSON" in result.stderr
    assert not out.exists()  # --strict reads every row before any work


def test_a_malformed_line_is_reported_with_its_line_and_the_rest_is_checked(tmp_path):
    data = _with_bad_line(tmp_path)
    summary_file = tmp_path / "summary.json"
    evaluated = run("eval", str(data), "--scorer", "lexical", "--out", str(summary_file))
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout.strip().endswith("n=4")
    errors = json.loads(summary_file.read_text())["errors"]
    assert [(e["line"], e["id"]) for e in errors] == [(3, "broken")] and "invalid JSON" in errors[0]["error"]
    out = tmp_path / "reports.jsonl"
    checked = run("check", "--input", str(data), "--output", str(out), "--scorer", "lexical")
    assert checked.returncode == 5  # some row could not be checked (CommandOutcome.ROWS_IN_ERROR)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in records] == [1, 2, 3, 4, 5]
    assert "invalid JSON" in records[2]["error"] and all("report" in r for i, r in enumerate(records) if i != 2)
    assert "checked 5 of 5 rows this run: 2 accepted, 0 escalated, 2 rejected; 1 could not be checked" in checked.stderr


def test_check_input_reads_the_batch_row_shape(tmp_path):
    """One row schema: `chunks` is another name for `context`, and chunks may be {id, text} objects."""
    row = {"id": "obj", "chunks": [{"id": "policy-7", "text": "The castle faces the harbor."}],
           "answer": "The castle faces the harbor."}
    data = write_jsonl(tmp_path / "objects.jsonl", [row])
    out = tmp_path / "reports.jsonl"
    result = run("check", "--input", str(data), "--output", str(out), "--scorer", "lexical")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())["report"]
    assert report["claims"][0]["chunk_id"] == "policy-7"


def test_batch_check_writes_one_report_per_row(tmp_path):
    data = write_jsonl(tmp_path / "mini.jsonl", eval_rows())
    out = tmp_path / "reports.jsonl"
    result = run("check", "--input", str(data), "--output", str(out), "--scorer", "lexical")
    assert result.returncode == 1, result.stderr  # two rows are rejected
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["a", "b", "c", "d"]
    assert [r["decision"] for r in records] == ["accept", "reject", "accept", "reject"]
    assert "checked 4 of 4 rows" in result.stderr


def test_check_reads_scorer_and_thresholds_from_groundwire_toml(tmp_path):
    context = tmp_path / "c.txt"
    context.write_text("The castle faces the harbor.")
    args = ["check", "--context", str(context), "--answer", "The castle faces the north harbor.", "--json"]
    default = json.loads(run(*args, "--scorer", "lexical", cwd=tmp_path).stdout)
    assert default["route"] == "escalate"
    (tmp_path / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\naccept_at = 0.6\nreject_at = 0.1\n')
    configured = json.loads(run(*args, cwd=tmp_path).stdout)
    assert configured["model_id"] == "lexical-baseline" and configured["route"] == "accept"
    assert json.loads(run(*args, "--accept-at", "0.95", cwd=tmp_path).stdout)["route"] == "escalate"
    (tmp_path / "groundwire.toml").write_text('[verify]\naccept_at = "high"\n')
    bad = run(*args, cwd=tmp_path)
    assert bad.returncode == 2 and "accept_at" in bad.stderr


def test_task_option_selects_the_calibration_and_is_reported(tmp_path):
    record = tmp_path / "record.json"
    record.write_text('{"name": "Pizza Mizza", "city": "Santa Barbara", "attributes": {"Music": null}}')
    inferred = json.loads(run("check", "--context", str(record), "--answer", "Pizza Mizza is in Santa Barbara.",
                              "--json").stdout)
    assert inferred["meta"]["task"] == "data2text"
    given = run("check", "--context", str(record), "--answer", "Pizza Mizza is in Santa Barbara.", "--task", "qa",
                "--json")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["meta"]["task"] == "qa"
    # The table's footer says which accept and reject levels routed the answer.
    thresholds = json.loads(given.stdout)["meta"]["thresholds"]
    accept_at, reject_at = thresholds["accept_at"], thresholds["reject_at"]
    table = run("check", "--context", str(record), "--answer", "Pizza Mizza is in Santa Barbara.", "--task", "qa")
    assert f"accept >= {accept_at!r}, reject <= {reject_at!r}" in " ".join(table.stdout.split())


def test_eval_target_rates_write_thresholds_that_meet_them(tmp_path):
    # Supported answers copy their context; hallucinated ones add unsupported words to a varying degree, so the
    # lexical scores spread out and the thresholds have something to choose between.
    rows = []
    for i in range(40):
        context = f"The depot number {i} ships parcels to the northern harbour every weekday morning."
        extra = " ".join(["golden", "dragons", "seven", "purple", "mountains", "lanterns"][: 1 + i % 6])
        rows.append({"id": f"s{i}", "task": "qa", "question": None, "context": [context],
                     "answer": context if i % 3 else context.replace("weekday", "weekday early"),
                     "hallucinated": False, "spans": [], "source": "t"})
        rows.append({"id": f"h{i}", "task": "qa", "question": None, "context": [context],
                     "answer": context[:-1] + f" {extra}.", "hallucinated": True, "spans": [], "source": "t"})
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    config = tmp_path / "groundwire.toml"
    config.write_text('# my settings\n[verify]\nscorer = "lexical"\n')
    out = tmp_path / "summary.json"
    result = run("eval", str(data), "--config", str(config), "--target-far", "0.05", "--target-frr", "0.1",
                 "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = config.read_text()
    assert text.startswith("# my settings") and 'scorer = "lexical"' in text  # the rest of the file is kept
    import tomllib

    verify = tomllib.loads(text)["verify"]
    assert 0 <= verify["reject_at"] < verify["accept_at"] <= 1
    routing = json.loads(out.read_text())["routing"]["all"]  # measured again at the new thresholds
    assert routing["false_accept"] <= 0.05 and routing["false_reject"] <= 0.1
    assert f"accept_at={verify['accept_at']}" in result.stdout
    half = run("eval", str(data), "--config", str(config), "--target-far", "0.05")
    assert half.returncode == 2 and "--target-frr" in half.stderr


def test_check_input_takes_the_rows_own_task_or_none(tmp_path):
    # A row that names no task is checked as an answer with none: a JSON record's context then selects data2text,
    # as `groundwire check`, verify_many and batch do (check --input passed the placeholder task "unknown").
    record = json.dumps({"name": "Cafe Uno", "accepts_reservations": True})
    rows = [{"id": "none", "context": [record], "answer": "Cafe Uno accepts reservations."},
            {"id": "qa", "task": "qa", "context": [record], "answer": "Cafe Uno accepts reservations."}]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = run("check", "--input", str(data), "--scorer", "lexical")
    assert done.returncode == 0, done.stderr
    tasks = {r["id"]: r["report"]["meta"]["task"] for r in map(json.loads, done.stdout.splitlines())}
    assert tasks == {"none": "data2text", "qa": "qa"}
