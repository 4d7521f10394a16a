"""--route / --decide-at on the commands that take --accept-at, and [verify] route read from groundwire.toml."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from groundwire.cli.main import run_cli

CONTEXT = "The plan costs $10 a month and includes roaming in the EU."
HALF = "The plan costs $10 a month and includes free international roaming for every customer."
"""The lexical baseline scores it mid-band: three-way routing escalates it."""


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_cli(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of its own (no groundwire.toml but the test's), with the context file in it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GROUNDWIRE_CONFIG", raising=False)
    for name in ("ROUTE", "DECIDE_AT", "JUDGE", "SCORER", "ACCEPT_AT", "REJECT_AT", "CASCADE"):
        monkeypatch.delenv(f"GROUNDWIRE_VERIFY_{name}", raising=False)
    (tmp_path / "ctx.txt").write_text(CONTEXT, encoding="utf-8")
    return tmp_path


def _report(*extra: str) -> dict:
    status, out, err = cli("check", "-c", "ctx.txt", "-a", HALF, "--scorer", "lexical", "--json", *extra)
    report = json.loads(out)
    assert status == {"accept": 0, "reject": 1, "escalate": 7}[report["route"]], err  # it follows the decision
    return report


def test_the_route_flag_changes_the_decision(here: Path) -> None:
    three_way = _report()
    assert three_way["route"] == "escalate" and three_way["claims"][0]["verdict"] == "UNRESOLVED"
    score = three_way["score"]
    decided = _report("--route", "decide")
    assert decided["route"] == ("accept" if score >= 0.5 else "reject")  # the lexical midpoint, with a warning
    assert decided["meta"]["thresholds"]["decide_at"] == 0.5 and any("midpoint" in w for w in decided["warnings"])
    accepted = _report("--route", "decide", "--decide-at", f"{score - 0.01:.4f}")
    rejected = _report("--route", "decide", "--decide-at", f"{score + 0.01:.4f}")
    assert (accepted["route"], accepted["claims"][0]["verdict"]) == ("accept", "SUPPORTED")
    assert (rejected["route"], rejected["claims"][0]["verdict"]) == ("reject", "NOT_FOUND")


def test_the_table_footer_names_the_decide_threshold(here: Path) -> None:
    status, out, err = cli("check", "-c", "ctx.txt", "-a", HALF, "--scorer", "lexical", "--route", "decide",
                           "--decide-at", "0.9")
    assert status == 1, err  # rejected at 0.9
    assert "decided: accept >= 0.9, else reject;" in " ".join(out.split())


def test_the_route_is_read_from_groundwire_toml_and_the_flag_wins(here: Path) -> None:
    (here / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\nroute = "decide"\ndecide_at = 0.3\n',
                                          encoding="utf-8")
    status, out, err = cli("check", "-c", "ctx.txt", "-a", HALF, "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["route"] == "accept" and report["meta"]["thresholds"]["decide_at"] == 0.3
    status, out, err = cli("check", "-c", "ctx.txt", "-a", HALF, "--json", "--route", "three-way")
    assert status == 7, err
    assert json.loads(out)["route"] == "escalate"


def test_judge_with_decide_is_refused_with_exit_2(here: Path) -> None:
    status, _, err = cli("check", "-c", "ctx.txt", "-a", HALF, "--scorer", "lexical", "--route", "decide", "--judge")
    assert status == 2
    assert "exclude each other" in " ".join(err.split())


@pytest.mark.parametrize("args", [["--route", "sometimes"], ["--route", "decide", "--decide-at", "1.5"]])
def test_bad_route_flags_exit_2(here: Path, args: list[str]) -> None:
    status, _, _ = cli("check", "-c", "ctx.txt", "-a", HALF, "--scorer", "lexical", *args)
    assert status == 2


def test_eval_decides_every_row(here: Path) -> None:
    rows = [{"id": str(i), "question": "q", "context": [CONTEXT], "answer": answer, "hallucinated": label}
            for i, (answer, label) in enumerate([(HALF, True), ("The plan costs $10 a month.", False),
                                                 ("The plan costs $25 a month.", True)])]
    (here / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    status, out, err = cli("eval", "rows.jsonl", "--scorer", "lexical", "--json", "--route", "decide")
    assert status == 0, err
    assert json.loads(out)["routing"]["all"]["escalated"] == 0.0
    status, _, err = cli("eval", "rows.jsonl", "--scorer", "lexical", "--route", "decide", "--target-far", "0.1",
                         "--target-frr", "0.1")
    assert status == 2 and "three-way" in err


@pytest.mark.parametrize("command", ["check", "eval", "batch"])
def test_every_command_with_accept_at_takes_route_and_decide_at(command: str) -> None:
    status, out, _ = cli(command, "--help")
    assert status == 0 and "--accept-at" in out and "--route" in out and "--decide-at" in out
