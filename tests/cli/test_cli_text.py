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
    from groundwire.core.errors import InputError

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
    from groundwire.core.types import REFUSAL_TOKEN

    config = load_config(Path(__file__).parents[2] / "examples" / "groundwire.example.toml", env={})
    assert config.repair.abstain_message == REFUSAL_TOKEN


def test_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    context = tmp_path / "ctx.txt"
    context.write_text("The Pro plan costs $19 per month.", encoding="utf-8")
    base = ("check", "-c", str(context), "--scorer", "lexical")
    assert cli(*base, "-a", "The Pro plan costs $19 per month.")[0] == 0
    assert cli(*base, "-a", "The Pro plan costs $49 per month.", "--fail-under", "0.5")[0] == 1
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
