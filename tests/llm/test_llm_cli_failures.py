"""Issue 14, the LLM tier through the CLI: a failing endpoint is exit 3 (or, asked for, best effort that says what
was not judged), repair reaches its minimal-edit path, secrets never leave in error text, and a command that needs
an LLM fails the same way when none is configured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import Reply, ScriptedLLMServer
from test_llm_cli import files, run  # noqa: F401 - the fixture is used by name

SHIPPING = "Standard shipping to EU countries takes 3 to 5 business days and costs 15 euros."
PARTLY_WRONG = "Standard shipping to EU countries takes 3 to 5 business days and costs 25 euros [S1]."
BAND_CLAIM = "The store is open on Sundays [S2]."


def _closed_url() -> str:
    with ScriptedLLMServer() as server:
        return server.url  # the port is closed once the server stops


def _check(files: dict[str, Path], *extra: str, **env: str) -> Any:  # noqa: F811
    args = ["check", "-c", str(files["policy"]), "-c", str(files["hours"]), "-a", BAND_CLAIM, "--json", *extra]
    return run(args, files["dir"], **env)


@pytest.mark.parametrize("endpoint", ["down", "401"])
def test_check_judge_exits_3_when_the_endpoint_fails(
    scripted_llm: ScriptedLLMServer, files: dict[str, Path], endpoint: str  # noqa: F811
) -> None:
    scripted_llm.script(Reply(status=401, raw_body='{"error": "Incorrect API key provided"}'))
    url = _closed_url() if endpoint == "down" else scripted_llm.url
    done = _check(files, "--judge", GROUNDWIRE_LLM_BASE_URL=url)
    assert done.returncode == 3, done.stderr
    assert "LLM endpoint failed" in done.stderr and done.stdout == ""


def test_judge_optional_says_which_claims_were_not_judged(files: dict[str, Path]) -> None:  # noqa: F811
    done = _check(files, "--judge-optional", GROUNDWIRE_LLM_BASE_URL=_closed_url())
    assert done.returncode == 7, done.stderr  # the claim stays escalated: CommandOutcome.ESCALATED
    report = json.loads(done.stdout)
    assert report["meta"]["judge"]["not_judged"] == [0] and report["route"] == "escalate"
    assert report["claims"][0]["checks"][-1]["check"] == "judge_unavailable"
    assert any("claim 1 was not judged" in warning for warning in report["warnings"])


def test_repair_exits_3_when_the_endpoint_is_down(files: dict[str, Path]) -> None:  # noqa: F811
    done = run(["repair", "-a", BAND_CLAIM, "-c", str(files["policy"]), "-c", str(files["hours"])], files["dir"],
               GROUNDWIRE_LLM_BASE_URL=_closed_url())
    assert done.returncode == 3 and "cannot reach" in done.stderr


def test_repair_edits_a_partly_wrong_claim_through_the_cli(
    scripted_llm: ScriptedLLMServer, files: dict[str, Path]  # noqa: F811
) -> None:
    (files["dir"] / "shipping.md").write_text(SHIPPING)
    edits = {"costs 25 euros": "Standard shipping to EU countries takes 3 to 5 business days and costs 15 euros."}

    def respond(request: dict[str, Any]) -> str:
        system, user = (message["content"] for message in request["messages"])
        if system.startswith("You correct a claim"):
            claim = user.split("Claim: ", 1)[1]
            return json.dumps({"edited": next(edit for key, edit in edits.items() if key in claim)})
        return json.dumps({"quote": "costs 15 euros", "chunk_id": "S1", "verdict": "CONTRADICTED", "reason": "15"})

    scripted_llm.responder = respond
    answer = f"{PARTLY_WRONG} Refunds are issued within 14 days [S2]."
    done = run(["repair", "-a", answer, "-c", str(files["dir"] / "shipping.md"), "-c", str(files["policy"]), "--json"],
               files["dir"], GROUNDWIRE_LLM_BASE_URL=scripted_llm.url)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [a["action"] for a in result["actions"]] == ["edit", "keep"]
    assert result["answer"].startswith("Standard shipping to EU countries takes 3 to 5 business days and costs 15 euros")
    assert "25" not in result["answer"] and result["report"]["route"] == "accept"

    # An edit that adds anything is dropped; the claim is then split, and only its supported part survives (the
    # edit of its other part, asked for next, adds DHL too and is dropped).
    edits["costs 25 euros"] = "Standard shipping to EU countries takes 3 to 5 business days and costs 15 euros by DHL."
    done = run(["repair", "-a", answer, "-c", str(files["dir"] / "shipping.md"), "-c", str(files["policy"]), "--json"],
               files["dir"], GROUNDWIRE_LLM_BASE_URL=scripted_llm.url)
    result = json.loads(done.stdout)
    assert [a["action"] for a in result["actions"]] == ["edit", "keep"]
    split = result["actions"][0]
    assert "adds content" in split["reason"] and "dhl" in split["reason"].lower()
    assert [(part["claim"], part["action"]) for part in split["parts"]] == [
        ("Standard shipping to EU countries takes 3 to 5 business days.", "keep"),
        ("Standard shipping to EU countries costs 25 euros.", "drop")]
    assert result["answer"] == ("Standard shipping to EU countries takes 3 to 5 business days [S1]. "
                                "Refunds are issued within 14 days [S2].")


def test_secrets_are_redacted_from_errors(scripted_llm: ScriptedLLMServer, files: dict[str, Path]) -> None:  # noqa: F811
    key = "team-key-7f3a9c"
    scripted_llm.script(Reply(status=401, raw_body=f'{{"error": "Incorrect API key provided: Bearer {key} '
                                                    'or sk-proj-abcdef0123456789 (key {key})"}}'))
    done = _check(files, "--judge", GROUNDWIRE_LLM_BASE_URL=scripted_llm.url, GROUNDWIRE_LLM_API_KEY=key)
    assert done.returncode == 3
    assert key not in done.stderr and "abcdef0123456789" not in done.stderr
    assert "[redacted]" in done.stderr and "Incorrect API key provided" in done.stderr


def test_without_config_every_llm_command_fails_the_same_way(files: dict[str, Path]) -> None:  # noqa: F811
    (files["dir"] / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\n')
    commands = [
        ["check", "-a", BAND_CLAIM, "-c", str(files["hours"]), "--judge"],
        ["repair", "-a", BAND_CLAIM, "-c", str(files["hours"]), "--llm"],
        ["generate", "-q", "When are you open?", "-c", str(files["hours"])],
    ]
    for args in commands:
        done = run(args, files["dir"])
        assert done.returncode == 2, (args, done.stderr)
        assert "needs an LLM endpoint: set [llm] base_url and model" in done.stderr


def test_generate_table_shows_findings_and_says_fallback_once(
    scripted_llm: ScriptedLLMServer, files: dict[str, Path]  # noqa: F811
) -> None:
    scripted_llm.responder = lambda _: "Refunds are issued within 14 days [S9]."
    done = run(["generate", "-q", "Refunds?", "-c", str(files["policy"])], files["dir"],
               GROUNDWIRE_LLM_BASE_URL=scripted_llm.url, COLUMNS="200")
    assert done.returncode == 0, done.stderr
    assert "fabricated_citation" in done.stdout and "findings" in done.stdout
    assert "fallback: fallback:" not in done.stdout and "fallback: no attempt passed" in done.stdout
