"""The CLI prints user and model text literally and keeps its exit-status contract (issue 14)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from groundwire.cli.main import run_cli

HOSTILE = ["[/b]", "[red]", "[citation needed]", "[bold red]x[/]", "\x1b[31m", "\x1b]0;title\x07", "\x00", "\u202e",
           "\u05e9\u05dc\u05d5\u05dd", ":smile:", "\\", "[link=http://x]", "%s", "{0}", "\ufeff", "\u200b"]
# Sentence punctuation and line breaks are left out of the random part, so the fragment stays inside one claim;
# control characters come from HOSTILE.
FRAGMENT = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(exclude_characters=".!?;:", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
                                                min_size=1, max_size=8)),
    min_size=1, max_size=6,
).map("".join)


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_cli(list(args))
    return status, out.getvalue(), err.getvalue()


def test_markup_in_the_answer_is_printed_not_applied(tmp_path: Path) -> None:
    context = tmp_path / "ctx.txt"
    context.write_text("The server listens on port 8080 [citation needed].", encoding="utf-8")
    status, out, err = cli("check", "-c", str(context), "-a", "The server listens on port 8080 [/b].",
                           "--scorer", "lexical")
    assert status == 0, err
    assert "[/b]" in out and "[citation needed]" in out


def test_help_keeps_bracketed_words() -> None:
    status, out, _ = cli("generate", "--help")
    assert status == 0
    assert "Override [llm] model." in " ".join(out.split())
    status, out, _ = cli("repair", "--help")
    assert "configures [llm]" in " ".join(out.split())


def test_config_error_keeps_pydantic_detail_and_names_the_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    context = tmp_path / "ctx.txt"
    context.write_text("x y z", encoding="utf-8")
    (tmp_path / "groundwire.toml").write_text("[verify]\naccept_at = 0.8\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GROUNDWIRE_LLM_TIMEOUT_S", "[soon]")
    status, _, err = cli("check", "-c", str(context), "-a", "x", "--scorer", "lexical")
    assert status == 2
    assert "GROUNDWIRE_LLM_TIMEOUT_S" in err and "'[soon]'" in err and "[llm] timeout_s" in err
    assert "groundwire.toml" not in err  # the bad value is the environment's, not the file's


def test_secret_config_value_is_never_echoed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from groundwire.config import load_config
    from groundwire.foundation.errors import InputError

    toml = tmp_path / "g.toml"
    toml.write_text('[llm]\napi_key = 12345678901\napi_kye = "sk-secretsecret"\n', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_config(toml, env={})
    assert "12345678901" not in str(raised.value) and "secretsecret" not in str(raised.value)
    assert "api_key" in str(raised.value) and "api_kye" in str(raised.value)


def test_misspelt_env_var_warns_with_the_closest_name(caplog: pytest.LogCaptureFixture) -> None:
    from groundwire.config import load_config

    with caplog.at_level("WARNING", logger="groundwire.config"):
        load_config(env={"GROUNDWIRE_LLM_MODLE": "x", "GROUNDWIRE_TEST_POSTGRES_URL": "y"})
    assert "GROUNDWIRE_LLM_MODLE" in caplog.text and "did you mean GROUNDWIRE_LLM_MODEL" in caplog.text
    assert "POSTGRES" not in caplog.text


def test_example_toml_keeps_the_refusal_token() -> None:
    from groundwire.config import load_config
    from groundwire.foundation.types import REFUSAL_TOKEN

    config = load_config(Path(__file__).parents[2] / "examples" / "groundwire.example.toml", env={})
    assert config.repair.abstain_message == REFUSAL_TOKEN


def test_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    context = tmp_path / "ctx.txt"
    context.write_text("The Pro plan costs $19 per month.", encoding="utf-8")
    base = ("check", "-c", str(context), "--scorer", "lexical")
    assert cli(*base, "-a", "The Pro plan costs $19 per month.")[0] == 0
    assert cli(*base, "-a", "The Pro plan costs $49 per month.")[0] == 1  # rejected
    assert cli(*base, "-a", "   ")[0] == 2
    assert cli(*base, "-a", "x", "--no-such-option")[0] == 2

    import groundwire.core.verifier as verifier_module

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom [red]inside[/]\nsecond line")

    monkeypatch.setattr(verifier_module.Verifier, "run", broken)
    status, out, err = cli(*base, "-a", "The Pro plan costs $19 per month.")
    assert status == 4
    assert "internal error: RuntimeError: boom [red]inside[/]" in err and "second line" not in err
    assert "Traceback" not in err
    status, _, err = cli("--debug", *base, "-a", "The Pro plan costs $19 per month.")
    assert status == 4 and "Traceback" in err
    status, _, err = cli(*base, "-a", "The Pro plan costs $19 per month.")  # --debug held for its own run only
    assert status == 4 and "Traceback" not in err


POLICY = ("Refunds are accepted within 30 days of purchase. Shipping to EU countries takes 3 to 5 business days "
          "and costs 15 euros. Support answers email on weekdays between 9 am and 5 pm.")
# The lexical scorer decides these three (the bundled model may move a score, never this contract).
ACCEPTED = "Refunds are accepted within 30 days of purchase."
ESCALATED = "Support is open on weekdays from 9am to 5pm CET."
REJECTED = "Shipping to EU countries costs 25 euros."


@pytest.mark.parametrize("answer, decision, fail_on, status", [
    (ACCEPTED, "accept", "reject", 0), (ESCALATED, "escalate", "reject", 0), (REJECTED, "reject", "reject", 1),
    (ACCEPTED, "accept", "escalate", 0), (ESCALATED, "escalate", "escalate", 7), (REJECTED, "reject", "escalate", 1),
    (ESCALATED, "escalate", "never", 0), (REJECTED, "reject", "never", 0),
])
def test_the_exit_status_follows_the_decision_and_fail_on(tmp_path: Path, answer: str, decision: str, fail_on: str,
                                                         status: int) -> None:
    context = tmp_path / "policy.txt"
    context.write_text(POLICY, encoding="utf-8")
    got, out, err = cli("check", "-c", str(context), "-a", answer, "--scorer", "lexical", "--json", "--fail-on", fail_on)
    assert json.loads(out)["route"] == decision
    assert got == status, err
    if fail_on == "escalate":  # the default: escalated is never a pass
        assert cli("check", "-c", str(context), "-a", answer, "--scorer", "lexical", "--json")[0] == status


def test_a_batch_exits_with_its_worst_row_and_row_errors_come_first(tmp_path: Path) -> None:
    def rows(*answers: str) -> Path:
        path = tmp_path / f"rows{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("".join(json.dumps({"id": str(i), "context": [POLICY], "answer": answer}) + "\n"
                                for i, answer in enumerate(answers)), encoding="utf-8")
        return path

    def check(path: Path, *flags: str) -> tuple[int, str]:
        status, _, err = cli("check", "--input", str(path), "--scorer", "lexical", *flags)
        return status, err

    status, err = check(rows(ACCEPTED, ESCALATED, REJECTED))
    assert status == 1 and "checked 3 of 3 rows this run: 1 accepted, 1 escalated, 1 rejected" in err
    mixed = rows(ACCEPTED, ESCALATED)
    assert check(mixed)[0] == 7 and check(mixed, "--fail-on", "reject")[0] == 0
    assert check(rows(REJECTED, ESCALATED))[0] == 1  # the worst decision's status
    assert check(rows(REJECTED, "   "))[0] == 5  # a row in error outranks a rejection
    assert check(rows(REJECTED), "--fail-on", "never")[0] == 0


def test_a_rerun_exits_with_the_rows_earlier_runs_wrote(tmp_path: Path) -> None:
    """Issue 57: a rerun of a batch that had stopped exited 0 though its output held rejected and failed rows."""
    data = tmp_path / "rows.jsonl"
    out = tmp_path / "out.jsonl"
    lines = [{"id": "ok", "context": [POLICY], "answer": ACCEPTED}, {"id": "bad", "context": [POLICY], "answer": REJECTED}]
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    first, _, _ = cli("check", "--input", str(data), "--output", str(out), "--scorer", "lexical")
    assert first == 1
    again, _, err = cli("check", "--input", str(data), "--output", str(out), "--scorer", "lexical")
    assert again == 1, err  # nothing left to check, and the rejected row is still in the output
    assert "checked 0 of 2 rows this run" in err and "found 2 rows done" in err and "1 rejected" in err
    assert len(out.read_text().splitlines()) == 2  # the rerun wrote nothing twice
    # A row in error in an earlier run ranks first, as in one run: a fixed input does not wash it out.
    failed = tmp_path / "failed.jsonl"
    failed.write_text(json.dumps({"id": "gone", "error_code": "empty_answer", "error": "the answer is empty"}) + "\n",
                      encoding="utf-8")
    assert cli("check", "--input", str(data), "--output", str(failed), "--scorer", "lexical")[0] == 5


def test_fail_under_is_refused_with_the_decision_rule_that_replaces_it(tmp_path: Path) -> None:
    context = tmp_path / "policy.txt"
    context.write_text(POLICY, encoding="utf-8")
    status, out, err = cli("check", "-c", str(context), "-a", ESCALATED, "--scorer", "lexical", "--fail-under", "0.5")
    assert status == 2 and not out
    assert "--fail-under was removed" in err and "give --accept-at 0.5" in " ".join(err.split())


def test_main_exits_with_the_status_of_run_cli(tmp_path: Path) -> None:
    # The console script: a real process, so sys.exit carries the status.
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "groundwire", "check", "-a", "x", "-c", str(tmp_path / "missing")],
                          capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 2 and "missing" in done.stderr


@settings(max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate], suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fragment=FRAGMENT, anything=st.text(max_size=40))
def test_hostile_text_survives_check_repair_and_eval(tmp_path: Path, fragment: str, anything: str) -> None:
    answer = f"The release code is {fragment} today [S1]."
    context = tmp_path / "ctx.txt"
    context.write_text(f"{answer} Arbitrary: {anything}", encoding="utf-8")

    status, out, err = cli("check", "-c", str(context), "-a", answer, "-q", anything or "q", "--scorer", "lexical",
                           "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["answer"] == answer
    status, out, err = cli("check", "-c", str(context), "-a", answer, "--scorer", "lexical")
    assert status == 0, err

    status, out, err = cli("repair", "-c", str(context), "-a", answer, "--no-llm", "--scorer", "lexical", "--json")
    assert status == 0, err
    repaired = json.loads(out)
    assert [a["action"] for a in repaired["actions"]] == ["keep"] and repaired["answer"] == answer
    assert cli("repair", "-c", str(context), "-a", answer, "--no-llm", "--scorer", "lexical")[0] == 0

    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": anything, "task": fragment, "context": [answer], "answer": answer, "hallucinated": False}) + "\n"
        + json.dumps({"id": fragment, "task": fragment, "context": [answer], "answer": " ", "hallucinated": True}) + "\n",
        encoding="utf-8",
    )
    status, out, err = cli("eval", str(rows), "--scorer", "lexical", "--json")
    assert status == 0, err
    summary = json.loads(out.splitlines()[0])
    assert list(summary["per_task"]) == [fragment] and summary["errors"][0]["id"] == fragment
    assert cli("eval", str(rows), "--scorer", "lexical")[0] == 0


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "a binary file, not text"),  # a NUL byte
    (bytes(range(1, 32)) * 20 + bytes(range(0x80, 0xA0)), "a binary file, not text"),  # control bytes, no NUL
    ("Support hours are 9am to 5pm.".encode("utf-16"), "UTF-16 text, not UTF-8; convert it, e.g. iconv -f utf-16"),
    ("Café prices rose.".encode("latin-1"), "not UTF-8 (bad byte at offset 3); convert it, e.g. iconv -f latin1"),
])
def test_a_context_file_that_is_not_utf8_text_is_named_for_what_it_is(tmp_path: Path, content: bytes,
                                                                      message: str) -> None:
    context = tmp_path / "context.bin"
    context.write_bytes(content)
    status, out, err = cli("check", "-c", str(context), "-a", "Prices rose.", "--scorer", "lexical")
    assert status == 2 and not out
    assert f"error [invalid_file]: {context}: {message}" in " ".join(err.split())
    if "binary" in message:
        assert "iconv" not in err  # converting the encoding cannot help a binary file


def test_text_with_tabs_escapes_and_crlf_is_read_as_text(tmp_path: Path) -> None:
    context = tmp_path / "context.txt"
    context.write_bytes(b"Refunds:\twithin 30 days.\r\n\x1b[1mShipping\x1b[0m costs 15 euros.\r\n")
    status, _, err = cli("check", "-c", str(context), "-a", "Refunds are accepted within 30 days.", "--scorer",
                         "lexical")
    assert status in (0, 1), err  # checked, whatever its decision


@pytest.mark.parametrize("command", ["check", "repair"])
def test_an_answer_that_names_a_file_without_the_at_is_refused_with_the_fix(tmp_path: Path, command: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("policy.txt").write_text(POLICY, encoding="utf-8")
    Path("answer.txt").write_text(ESCALATED, encoding="utf-8")
    status, out, err = cli(command, "-c", "policy.txt", "-a", "answer.txt", "--scorer", "lexical",
                           *(["--no-llm"] if command == "repair" else []))
    assert status == 2 and not out
    assert ("error [invalid_option]: --answer answer.txt names a file: give --answer @answer.txt to check the text "
            "it holds") in " ".join(err.split())
    # an answer that is not a file's name, and @FILE, are checked as before
    assert cli(command, "-c", "policy.txt", "-a", "answer.md", "--scorer", "lexical", "--json",
               *(["--no-llm"] if command == "repair" else []))[0] in (0, 1, 7)
    status, out, err = cli(command, "-c", "policy.txt", "-a", "@answer.txt", "--scorer", "lexical", "--json",
                           *(["--no-llm"] if command == "repair" else []))
    assert status in (0, 1, 7) and ESCALATED in out, err
