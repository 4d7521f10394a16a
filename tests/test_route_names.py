"""`route` is the routing's name on every surface (issue 57 item 3); the names it had in 0.1 (`decision`, `label`)
are still read for one release, each with a DeprecationWarning that names the field to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundwire.data.results import WRITTEN_ERROR, written_outcomes


def test_a_01_output_with_decision_is_read_on_resume_with_a_warning(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(record) + "\n" for record in (
        {"id": "a", "decision": "escalate", "score": 0.5}, {"id": "b", "error_code": "invalid_input"})))
    with pytest.warns(DeprecationWarning, match="'decision': read for one release; the field is 'route'"):
        assert written_outcomes(old) == {"a": "escalate", "b": WRITTEN_ERROR}


def test_an_output_with_route_is_read_without_a_warning(tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "a", "route": "reject", "score": 0.1}) + "\n")
    assert written_outcomes(new) == {"a": "reject"}
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_an_evaluations_old_names_read_with_a_warning() -> None:
    from groundwire.adapters.evaluations import Evaluation, names

    assert names() == ("groundwire_supported_share", "groundwire_route")
    assert names("score") == ("groundwire_score", "groundwire_route")
    assert names("score", "nightly") == ("nightly", "nightly_route")
    evaluation = Evaluation("span", "groundwire_supported_share", "escalate", "needs review: ...", 0.0,
                            metadata={"score": 0.6, "supported_share": 0.0})
    with pytest.warns(DeprecationWarning, match="Evaluation.route"):
        assert evaluation.label == "escalate"
    with pytest.warns(DeprecationWarning, match=r"Evaluation.value .*metadata\['score'\]"):
        assert evaluation.score == evaluation.value == 0.0
    with pytest.warns(DeprecationWarning, match="Evaluation.route_name"):
        assert evaluation.decision_name == evaluation.route_name == "groundwire_route"
