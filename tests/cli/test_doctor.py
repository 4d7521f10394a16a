"""`groundwire doctor`: the CPU's class, the bundled model's form and why, and a measured speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from groundwire.scoring.forms import TRIAL_PAIRS, cpu_features


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groundwire", "doctor", *args], capture_output=True, text=True,
                          check=False, env={**os.environ, **(env or {})})


def test_doctor_reports_this_cpu_and_the_form_it_runs() -> None:
    out = doctor("--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["cpu_class"] == cpu_features().cpu_class
    assert found["form"] in found["forms_in_bundle"] == ["blockwise", "fp32", "int8"]
    assert found["why"] and found["pairs_per_s"] > 0
    # Each pair timed is distinct (one met twice in a call runs once), and its tokens are counted as run.
    assert found["pairs_run"] == len(TRIAL_PAIRS) ** 2
    assert 100 * found["pairs_run"] < found["tokens_run"] < 256 * found["pairs_run"]
    assert found["s_per_1k_tokens"] == pytest.approx(
        1000 * found["pairs_run"] / found["pairs_per_s"] / found["tokens_run"], rel=0.01
    )


def test_a_form_can_be_pinned_by_option_or_environment() -> None:
    assert json.loads(doctor("--json", "--form", "fp32").stdout)["form"] == "fp32"
    pinned = json.loads(doctor("--json", env={"GROUNDWIRE_MODEL_FORM": "fp32"}).stdout)
    assert (pinned["form"], pinned["why"]) == ("fp32", "asked for")


def test_an_unknown_form_is_refused_with_exit_2() -> None:
    out = doctor("--form", "fp16")
    assert out.returncode == 2
    assert "fp16" in out.stderr and "auto, int8, fp32" in out.stderr
