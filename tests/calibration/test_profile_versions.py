"""Versioned profiles (calibration/versions.py): a replacement is atomic and recorded, old versions are kept, a
rollback puts one back, and a folder written before versions is adopted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from groundwire.calibration import adapt, versions
from groundwire.calibration.combine import ClaimRow
from groundwire.foundation.errors import InputError
from groundwire.scoring.base import Calibration
from groundwire.scoring.profile import load_profile


def _rows(n: int, seed: int, *, gap: float = 0.5) -> list[ClaimRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(0.5 - gap / 2 if hallucinated else 0.5 + gap / 2, 0.15), 0.01, 0.99))
        rows.append(ClaimRow("synthetic", f"a{i}", "qa", f"doc{i // 2}", hallucinated, support, 0, (0, 10), None,
                             {"support": support, "n_claims": 1.0}))
    return rows


def _adapted(seed: int, gap: float = 0.5) -> adapt.Adapted:
    base = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})
    return adapt.adapt_rows(_rows(200, seed, gap=gap), base, recipe="thresholds", targets=adapt.Targets(),
                            c=adapt.PRIOR_C, folds=5, base_model="m", calibration=Calibration(), auroc_rounds=0)


def test_each_write_is_a_new_version_in_force_and_the_old_ones_stay(tmp_path: Path) -> None:
    out = tmp_path / "support"
    first, second = _adapted(1), _adapted(2, gap=0.3)
    adapt.write_profile(first, out)
    assert load_profile(out).version == "v0001"
    seen: list[str | None] = []

    def fill(staging: Path) -> None:  # while the new version is written, the old one is whole and in force
        seen.append(load_profile(out).version)
        (staging / "profile.json").write_text(json.dumps(second.document), encoding="utf-8")

    versions.install(out, fill, by="test")
    profile = load_profile(out)
    assert seen == ["v0001"] and profile.version == "v0002"
    assert profile.thresholds == tuple(second.fitted.pooled)
    assert versions.versions(out) == ["v0001", "v0002"] and (out / "current").is_symlink()
    assert json.loads((out / "profile.json").read_text())["calibration"] == second.document["calibration"]
    events = [(e["event"], e["version"], e["previous"]) for e in versions.history(out)]
    assert events == [("installed", "v0001", None), ("replaced", "v0002", "v0001")]
    installed = versions.history(out)[0]
    assert installed["labels"]["human"] == 200 and installed["labels"]["judge"] == 0
    assert installed["figures"]["cross_validated"]["false_accept"]["n"] == 100


def test_a_rollback_puts_an_earlier_version_back_and_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "support"
    first, second = _adapted(1), _adapted(2, gap=0.3)
    adapt.write_profile(first, out)
    adapt.write_profile(second, out, force=True)
    assert versions.rollback(out, by="test", reason="bad week") == "v0001"
    assert load_profile(out).thresholds == tuple(first.fitted.pooled) and load_profile(out).version == "v0001"
    assert versions.rollback(out, to="v0002", by="test") == "v0002"
    last = versions.history(out)[-1]
    assert (last["event"], last["version"], last["previous"]) == ("rolled_back", "v0002", "v0001")
    with pytest.raises(InputError, match="no version 'v0009'"):
        versions.rollback(out, to="v0009", by="test")
    versions.rollback(out, to="v0001", by="test")
    assert versions.rollback(out, by="test") == "v0002"  # undoes the last change: the version in force before it
    versions.rollback(out, to="v0001", by="test")
    adapt.write_profile(_adapted(3), out, force=True)  # v0003, replacing v0001
    assert versions.rollback(out, by="test") == "v0001"  # not v0002, the version numbered before


def test_a_first_version_has_nothing_to_roll_back_to(tmp_path: Path) -> None:
    adapt.write_profile(_adapted(1), tmp_path / "support")
    with pytest.raises(InputError, match="first version"):
        versions.rollback(tmp_path / "support", by="test")


def test_a_folder_written_before_versions_is_adopted_on_its_first_replacement(tmp_path: Path) -> None:
    out = tmp_path / "legacy"
    out.mkdir()
    old = _adapted(1)
    (out / "profile.json").write_text(json.dumps(old.document), encoding="utf-8")
    assert load_profile(out).version is None
    adapt.write_profile(_adapted(2, gap=0.3), out, force=True)
    assert versions.versions(out) == ["v0001", "v0002"] and load_profile(out).version == "v0002"
    assert [e["event"] for e in versions.history(out)] == ["adopted", "replaced"]
    versions.rollback(out, by="test")
    assert load_profile(out).thresholds == tuple(old.fitted.pooled)


def test_a_report_names_the_profile_version_that_routed_it(tmp_path: Path) -> None:
    from groundwire.config import CheckSettings
    from groundwire.pipeline import CheckItem, build_verifier, check

    out = tmp_path / "support"
    for seed in (1, 2):
        adapted = _adapted(seed)
        adapted.document["base_model"] = "lexical-baseline"
        adapt.write_profile(adapted, out, force=True)
    item = CheckItem("The museum opened in 1800.", ["The museum opened in 1800."])
    report = check(build_verifier(CheckSettings(scorer="lexical", profile=str(out))), item)
    assert (report.meta.profile, report.meta.profile_version) == ("support", "v0002")
    assert report.to_dict()["meta"]["profile_version"] == "v0002"
