from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_llm import ScriptedLLMServer

POLICY = "Refunds are issued within 14 days of the return. Shipping is free on orders over $50."
HOURS = "The store is open Monday to Friday, 9am to 5pm."


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "policy.md").write_text(POLICY)
    (tmp_path / "hours.md").write_text(HOURS)
    (tmp_path / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\n[llm]\nmax_retries = 0\ntimeout_s = 5\n')
    return {"dir": tmp_path, "policy": tmp_path / "policy.md", "hours": tmp_path / "hours.md"}


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))} | env
    return subprocess.run(
        [sys.executable, "-c", "from groundwire.cli.main import main; main()", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_generate_json(scripted_llm: ScriptedLLMServer, files: dict[str, Path]) -> None:
    scripted_llm.script("Refunds are issued within 14 days [S1].")
    done = run(
        [
            "generate",
            "-q",
            "How long do refunds take?",
            "-c",
            str(files["policy"]),
            "-c",
            str(files["hours"]),
            "--model",
            "cheap",
            "--json",
        ],
        files["dir"],
        GROUNDWIRE_LLM_BASE_URL=scripted_llm.url,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"] == "Refunds are issued within 14 days [S1]." and result["action"] == "accept"
    assert result["report"]["model_id"].startswith("lexical")
    assert result["llm_calls"][0]["purpose"] == "generate" and scripted_llm.requests[0]["model"] == "cheap"


def test_generate_endpoint_down_exits_3(files: dict[str, Path]) -> None:
    with ScriptedLLMServer() as server:
        url = server.url  # the port is closed once the server stops
    done = run(["generate", "-q", "Refunds?", "-c", str(files["policy"])], files["dir"], GROUNDWIRE_LLM_BASE_URL=url)
    assert done.returncode == 3
    assert "LLM endpoint failed" in done.stderr and "cannot reach" in done.stderr


def test_repair_without_llm(files: dict[str, Path]) -> None:
    answer = "Refunds are issued within 14 days [S1]. Shipping is free on orders over $50 [S1]. Our CEO is Jane Doe."
    done = run(["repair", "-a", answer, "-c", str(files["policy"]), "--no-llm", "--json"], files["dir"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"] == "Refunds are issued within 14 days [S1]. Shipping is free on orders over $50 [S1]."
    assert [a["action"] for a in result["actions"]] == ["keep", "keep", "drop"]


def test_repair_with_judge_and_abstention_message(scripted_llm: ScriptedLLMServer, files: dict[str, Path]) -> None:
    (files["dir"] / "groundwire.toml").write_text(
        '[verify]\nscorer = "lexical"\n[repair]\nmin_surviving_share = 0.9\n'
        'abstain_message = "The sources don\'t support a complete answer."\n'
    )
    # The judge confabulates support for the band claim; the quote check turns it into NOT_FOUND. The claim is
    # partly supported ("store", "open"), so it goes to the editor, which finds no supported edit.
    scripted_llm.script(
        json.dumps({"quote": "The store is open on Sundays.", "chunk_id": "S2", "verdict": "SUPPORTED", "reason": "x"}),
        json.dumps({"edited": ""}),
    )
    answer = "Refunds are issued within 14 days [S1]. The store is open on Sundays [S2]."
    done = run(
        ["repair", "-a", answer, "-c", str(files["policy"]), "-c", str(files["hours"]), "--json", "--fail-on-fallback"],
        files["dir"],
        GROUNDWIRE_LLM_BASE_URL=scripted_llm.url,
    )
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"] == "The sources don't support a complete answer." and result["abstained"]
    assert [r["messages"][0]["content"] != "" for r in scripted_llm.requests] == [True, True]


def test_check_judge_uses_the_config(scripted_llm: ScriptedLLMServer, files: dict[str, Path]) -> None:
    scripted_llm.script(
        json.dumps(
            {
                "quote": "The store is open Monday to Friday",
                "chunk_id": "S2",
                "verdict": "CONTRADICTED",
                "reason": "weekdays only",
            }
        )
    )
    done = run(
        [
            "check",
            "--scorer",
            "lexical",
            "-c",
            str(files["policy"]),
            "-c",
            str(files["hours"]),
            "-a",
            "The store is open on Sundays [S2].",
            "--judge",
            "--json",
        ],
        files["dir"],
        GROUNDWIRE_LLM_BASE_URL=scripted_llm.url,
    )
    assert done.returncode == 1, done.stderr  # the judge rejected it: CommandOutcome.NOT_GROUNDED
    report = json.loads(done.stdout)
    claim = report["claims"][0]
    assert (claim["verdict"], claim["decided_by"], claim["route"]) == ("CONTRADICTED", "judge", "reject")
    assert report["meta"]["judge"]["calls"] == 1 and report["route"] == "reject"


def test_bad_config_is_exit_2(files: dict[str, Path]) -> None:
    (files["dir"] / "groundwire.toml").write_text("[llm]\ntimeout = 5\n")
    done = run(["repair", "-a", "Refunds take 14 days.", "-c", str(files["policy"])], files["dir"])
    assert done.returncode == 2 and "timeout" in done.stderr


def test_repair_with_the_llm_decomposer(scripted_llm: ScriptedLLMServer, files: dict[str, Path]) -> None:
    (files["dir"] / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\ndecomposer = "llm"\n')
    scripted_llm.script(
        json.dumps({"claims": ["Refunds are issued within 14 days.", "The CEO is Jane Doe."]}),
        json.dumps({"claims": ["Refunds are issued within 14 days."]}),  # re-verifying the repaired answer
    )
    answer = "Refunds are issued within 14 days and the CEO is Jane Doe [S1]."
    done = run(
        ["repair", "-a", answer, "-c", str(files["policy"]), "--json"],
        files["dir"],
        GROUNDWIRE_LLM_BASE_URL=scripted_llm.url,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(a["claim"], a["action"]) for a in result["actions"]] == [
        ("Refunds are issued within 14 days.", "keep"),
        ("The CEO is Jane Doe.", "drop"),
    ]
    assert result["answer"] == "Refunds are issued within 14 days [S1]."
    assert len(scripted_llm.requests) == 2 and "Split an answer" in scripted_llm.requests[0]["messages"][0]["content"]


def test_llm_decomposer_without_llm_is_a_clear_error(files: dict[str, Path]) -> None:
    (files["dir"] / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\ndecomposer = "llm"\n')
    done = run(["repair", "-a", "Refunds take 14 days.", "-c", str(files["policy"]), "--no-llm"], files["dir"])
    assert done.returncode == 2 and "needs an LLM" in done.stderr
