"""Loading a domain profile (scoring/profile.py): what it changes in the base calibration, and what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundwire.config import CheckSettings
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import RoutedThresholds
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration
from groundwire.scoring.combiner import LogisticCombiner
from groundwire.scoring.lexical import LexicalScorer
from groundwire.scoring.profile import PROFILE_FILE, ProfiledScorer, load_profile, profile_of


def _write(folder: Path, **changes: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    document = {"format": 1, "base_model": "lexical-baseline",
                "calibration": {"thresholds": [0.6, 0.3], "task_thresholds": {"qa": [0.7, 0.2]}, "decide_at": 0.45,
                                "combiner": None, "canonical_figures": True, "meaning": False}}
    document.update(changes)
    (folder / PROFILE_FILE).write_text(json.dumps(document))
    return folder


def test_a_profile_replaces_the_thresholds_and_keeps_the_base_combiner(tmp_path: Path) -> None:
    profile = load_profile(_write(tmp_path / "clinic"))
    shipped = LogisticCombiner(names=("support",), mean=(0.0,), scale=(1.0,), coef=(1.0,), intercept=0.0)
    calibration = profile.calibration_over(Calibration(thresholds=(0.9, 0.1), combiner=shipped))
    assert (calibration.thresholds, dict(calibration.task_thresholds)) == ((0.6, 0.3), {"qa": (0.7, 0.2)})
    assert calibration.combiner is shipped and calibration.decide_at == 0.45
    verifier = build_verifier(CheckSettings(scorer="lexical", profile=str(tmp_path / "clinic")))
    assert profile_of(verifier.scorer) is not None
    assert verifier.thresholds_for("qa") == (0.7, 0.2)
    assert verifier.thresholds_for("summary") == (0.6, 0.3)


def test_a_profile_of_another_base_model_is_refused(tmp_path: Path) -> None:
    profile = load_profile(_write(tmp_path / "p", base_model="groundwire-verifier-v2"))
    with pytest.raises(InputError) as error:
        ProfiledScorer(LexicalScorer(), profile)
    assert error.value.code is ErrorCode.PROFILE_MODEL_MISMATCH
    assert "groundwire-verifier-v2" in str(error.value)
    with pytest.raises(InputError) as again:  # through the settings, the same refusal (not invalid_settings)
        build_verifier(CheckSettings(scorer="lexical", profile=str(tmp_path / "p")))
    assert again.value.code is ErrorCode.PROFILE_MODEL_MISMATCH


@pytest.mark.parametrize("changes", [
    {"format": 3},
    {"calibration": {"thresholds": [0.2, 0.6]}},  # reject_at above accept_at
    {"calibration": {"thresholds": [0.6, 0.3], "combiner": "missing.json"}},
    {"base_model": None, "calibration": None},
])
def test_a_malformed_profile_is_refused_with_its_file_named(tmp_path: Path, changes: dict[str, object]) -> None:
    folder = _write(tmp_path / "bad", **changes)
    with pytest.raises(InputError) as error:
        load_profile(folder)
    assert error.value.code is ErrorCode.INVALID_PROFILE
    assert str(folder / PROFILE_FILE) in str(error.value)


def test_a_directory_without_profile_json_is_not_a_profile(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        load_profile(tmp_path)
    assert error.value.code is ErrorCode.INVALID_PROFILE


def test_a_profile_and_a_cascade_exclude_each_other(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cascade"):
        build_verifier(CheckSettings(scorer="lexical", cascade="lexical", profile=str(_write(tmp_path / "p"))))


def test_verify_takes_a_profile_and_the_report_names_it(tmp_path: Path) -> None:
    from groundwire.pipeline import verify

    folder = _write(tmp_path / "clinic")
    report = verify("The clinic opens at 9.", ["The clinic opens at 9 every weekday."], scorer="lexical",
                    profile=folder, task="qa")
    assert report.meta.profile == "clinic"
    assert report.meta.thresholds == RoutedThresholds(accept_at=0.7, reject_at=0.2)
