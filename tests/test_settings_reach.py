"""Everything groundwire.toml can say about a check is reachable from `verify()` (issue 46): the test walks the
settings model, CheckSettings ([verify]), field by field, and shows that setting each one through
`verify(..., settings=...)` changes what the check does; the [llm] section arrives whole as the client's LLMConfig
(`client=LLMClient(LLMConfig(...))`), which the judge and an LLM decomposer call. ([repair], [generate], [policy]
and [serve] configure other calls: repair, generate and the service.) A field added to CheckSettings fails the walk
until it has a probe here."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from groundwire import CheckSettings, Report, Route, verify
from groundwire.config import LLMConfig
from groundwire.llm.client import LLMClient
from groundwire.scoring.onnx import bundled_path
from groundwire.scoring.profile import PROFILE_FILE

sys.path.insert(0, str(Path(__file__).resolve().parent / "llm"))
from scripted_llm import ScriptedLLMServer

CASTLE = "The castle faces the harbor."
NORTH = "The castle faces the north harbor."
"""The lexical scorer gives it 0.75 against CASTLE: escalated between its default thresholds, 0.2 and 0.8."""
Run = Callable[..., Report]


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def run(server: ScriptedLLMServer) -> Iterator[Run]:
    """verify() with the lexical scorer and these settings over it, and a client for the scripted [llm] endpoint."""
    with LLMClient(LLMConfig(base_url=server.url, model="walker", max_retries=0, timeout_s=10)) as client:

        def check(answer: str = NORTH, context: tuple[str, ...] = (CASTLE,), **settings: object) -> Report:
            return verify(answer, list(context), settings=CheckSettings(**{"scorer": "lexical", **settings}),
                          client=client)

        yield check


def _scorer(run: Run, server: ScriptedLLMServer) -> None:
    if not (bundled_path() / "config.json").is_file():
        pytest.skip("no bundled model")
    assert run(scorer="bundled").model_id != run().model_id


def _accept_at(run: Run, server: ScriptedLLMServer) -> None:
    assert run().route is Route.ESCALATE and run(accept_at=0.7).route is Route.ACCEPT


def _reject_at(run: Run, server: ScriptedLLMServer) -> None:
    assert run(reject_at=0.76).route is Route.REJECT


def _route(run: Run, server: ScriptedLLMServer) -> None:
    assert run(route="decide").route is Route.ACCEPT  # at the midpoint, 0.5: nothing escalated


def _decide_at(run: Run, server: ScriptedLLMServer) -> None:
    assert run(route="decide", decide_at=0.76).route is Route.REJECT


def _require_citations(run: Run, server: ScriptedLLMServer) -> None:
    assert not run(answer=CASTLE).findings and run(answer=CASTLE, require_citations=True).findings


def _decomposer(run: Run, server: ScriptedLLMServer) -> None:
    server.script(json.dumps({"claims": ["The castle faces the harbor.", "The harbor is north of it."]}))
    report = run(decomposer="llm")
    assert [claim.claim.text for claim in report.claims] == ["The castle faces the harbor.", "The harbor is north of it."]
    assert server.requests[-1]["model"] == "walker"  # the [llm] section reached the request


def _pruner(run: Run, server: ScriptedLLMServer) -> None:
    context = (CASTLE, "The museum opens at nine.", "Tickets cost 12 euros.", "The bridge closes at midnight.",
               "The garden hosts a market on Sundays.")
    exact, pruned = run(context=context), run(context=context, pruner="lexical")
    assert (pruned.meta.pairs_scored or 0) < (exact.meta.pairs_scored or 0)


def _canonical_figures(run: Run, server: ScriptedLLMServer) -> None:
    def novel(**settings: object) -> float | None:
        features = run("The trail is 12 km long.", ("The trail is 12 kilometres long.",), **settings).claims[0].features
        return None if features is None else features["novel_word_share"]

    assert novel() == 0.0 and novel(canonical_figures=False) != 0.0


def _meaning(run: Run, server: ScriptedLLMServer) -> None:
    def features(**settings: object) -> set[str]:
        return set(run(**settings).claims[0].features or {})

    assert "meaning_similarity" in features(meaning=True) - features()


def _entities(run: Run, server: ScriptedLLMServer) -> None:
    pytest.importorskip("spacy")
    swapped = ("The committee criticised the mayor.", ("The mayor criticised the committee.",))
    assert not run(*swapped).claims[0].checks
    assert [finding.check for finding in run(*swapped, entities=True).claims[0].checks] == ["role_swap"]


def _judge(run: Run, server: ScriptedLLMServer) -> None:
    server.script(json.dumps({"quote": CASTLE, "chunk_id": "S1", "verdict": "NOT_FOUND", "reason": "north"}))
    asked = len(server.requests)
    report = run(judge=True)
    assert len(server.requests) == asked + 1 and report.meta.judge is not None and report.meta.judge.calls == 1
    assert server.requests[-1]["model"] == "walker"


def _cascade(run: Run, server: ScriptedLLMServer) -> None:
    report = run(cascade="lexical")  # the first stage escalates: the second checks again
    assert len(report.meta.cascade or ()) == 2 and run().meta.cascade is None


def _profile(run: Run, server: ScriptedLLMServer) -> None:
    with tempfile.TemporaryDirectory() as folder:  # a domain profile (groundwire adapt) that accepts at 0.7
        (Path(folder) / PROFILE_FILE).write_text(json.dumps({
            "format": 1, "base_model": "lexical-baseline",
            "calibration": {"thresholds": [0.7, 0.3], "combiner": None, "canonical_figures": True, "meaning": False}}))
        assert run().route is Route.ESCALATE and run(profile=folder).route is Route.ACCEPT


PROBES = {
    "scorer": _scorer, "accept_at": _accept_at, "reject_at": _reject_at, "route": _route, "decide_at": _decide_at,
    "require_citations": _require_citations, "decomposer": _decomposer, "pruner": _pruner,
    "canonical_figures": _canonical_figures, "meaning": _meaning, "entities": _entities, "judge": _judge,
    "cascade": _cascade, "profile": _profile,
}


def test_every_setting_has_a_probe() -> None:
    assert set(PROBES) == set(CheckSettings.model_fields)


@pytest.mark.parametrize("field", sorted(CheckSettings.model_fields))
def test_each_setting_is_reachable_from_verify(field: str, run: Run, server: ScriptedLLMServer) -> None:
    PROBES[field](run, server)


def test_the_llm_section_arrives_whole(run: Run) -> None:
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=5, json_mode="json_schema")
    with LLMClient(config) as client:
        assert client.config is config  # all of [llm]: the client holds it, and re-declares none of it
