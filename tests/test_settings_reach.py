"""Everything groundwire.toml can say about a check is reachable from every entry point (issues 46 and 57): the test
walks the settings model, CheckSettings ([verify]), field by field, and shows that setting each one changes what
the check does, through `verify(..., settings=...)` and, as a keyword, through verify, averify, verify_many,
averify_many, assert_grounded, the adapters' one option set (AdapterCheck, an adapter saved and loaded again,
LangChain's runnable, the TruLens provider) and `groundwire check`'s flags; the service takes the two a request may
set and refuses the rest by name (422). The [llm] section arrives whole as the client's LLMConfig
(`client=LLMClient(LLMConfig(...))`), which the judge and an LLM decomposer call. ([repair], [generate], [policy]
and [serve] configure other calls: repair, generate and the service.) A field added to CheckSettings fails the walk
until it has a probe here, and until every entry point declares it."""

from __future__ import annotations

import asyncio
import inspect
import json
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from groundwire import CheckSettings, Report, Route, averify, averify_many, pipeline, verify, verify_many
from groundwire.adapters.common import ADAPTER_OPTION_NAMES, AdapterCheck, AdapterOptions
from groundwire.config import LLMConfig
from groundwire.llm.client import LLMClient
from groundwire.pipeline import CheckOptions, SettingsOptions
from groundwire.pytest_plugin import NotGroundedError, assert_grounded
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
def client(server: ScriptedLLMServer) -> Iterator[LLMClient]:
    with LLMClient(LLMConfig(base_url=server.url, model="walker", max_retries=0, timeout_s=10)) as llm:
        yield llm


@pytest.fixture
def configured(server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The scripted endpoint as groundwire.toml's [llm] (the environment's), for the entry points that take no
    client (the adapters, the CLI): the judge and an LLM decomposer find it there."""
    monkeypatch.chdir(tmp_path)  # no groundwire.toml of the repository's
    monkeypatch.setenv("GROUNDWIRE_LLM_BASE_URL", server.url)
    monkeypatch.setenv("GROUNDWIRE_LLM_MODEL", "walker")
    monkeypatch.setenv("GROUNDWIRE_LLM_MAX_RETRIES", "0")
    pipeline.configured_client.cache_clear()
    yield
    pipeline.configured_client.cache_clear()


Entry = Callable[[LLMClient, str, tuple[str, ...], dict[str, Any]], Report]


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[Report]:
    """The reports `pipeline.check` makes from now on: what an entry point that returns no Report (a frame, a
    command) checked."""
    reports: list[Report] = []
    real = pipeline.check

    def spy(*args: Any, **kwargs: Any) -> Report:
        reports.append(real(*args, **kwargs))
        return reports[-1]

    monkeypatch.setattr(pipeline, "check", spy)
    return reports


def _frame(answer: str, context: tuple[str, ...]) -> Any:
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"answer": [answer], "context": [list(context)]})


def _verify_settings(client: LLMClient, answer: str, context: tuple[str, ...], settings: dict[str, Any]) -> Report:
    return verify(answer, list(context), settings=CheckSettings(**{"scorer": "lexical", **settings}), client=client)


def _library(call: str) -> Entry:
    """A library call with the settings as keywords: `require_citations` is each call's own keyword."""

    def run(client: LLMClient, answer: str, context: tuple[str, ...], settings: dict[str, Any]) -> Report:
        options: dict[str, Any] = {"scorer": "lexical", "client": client, **settings}
        if call == "verify":
            return verify(answer, list(context), **options)
        if call == "averify":
            return asyncio.run(averify(answer, list(context), **options))
        if call == "assert_grounded":
            try:
                return assert_grounded(answer, list(context), **options)
            except NotGroundedError as failed:
                return failed.report
        with pytest.MonkeyPatch.context() as patch:
            reports = _spied(patch)
            if call == "verify_many":
                verify_many(_frame(answer, context), **options)
            else:
                asyncio.run(averify_many(_frame(answer, context), **options))
            (report,) = reports
            return report

    return run


def _adapter(form: str) -> Entry:
    """The adapters' one option set: AdapterCheck, the same saved and loaded again, LangChain's runnable (mapping
    form: it returns the Report), the TruLens provider (a pydantic model; it imports no TruLens)."""

    def run(client: LLMClient, answer: str, context: tuple[str, ...], settings: dict[str, Any]) -> Report:
        options: dict[str, Any] = {"scorer": "lexical", **settings}
        if form == "AdapterCheck":
            return AdapterCheck(**options).run(answer, list(context)).report
        if form == "saved":
            return AdapterCheck(**AdapterCheck(**options).saved()).run(answer, list(context)).report
        if form == "trulens":
            pytest.importorskip("trulens.core")  # without it the adapter names its extra (tests/test_extras.py)
            from groundwire.adapters.trulens import GroundwireProvider

            saved = GroundwireProvider(**options).model_dump()  # what TruLens saves, loaded again
            return GroundwireProvider(options=saved["options"]).assess(list(context), answer).report
        pytest.importorskip("langchain_core")
        from groundwire.adapters.langchain import GroundwireRunnable

        report = GroundwireRunnable(**options).invoke({"answer": answer, "context": list(context)})
        assert isinstance(report, Report)
        return report

    return run


def _flags(settings: dict[str, Any]) -> list[str]:
    """`groundwire check`'s flag for each setting: --accept-at 0.7, --pruner lexical, --no-canonical-figures."""
    flags: list[str] = []
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + name.replace("_", "-"))
        else:
            flags += [flag, str(value)]
    return flags


def _cli(client: LLMClient, answer: str, context: tuple[str, ...], settings: dict[str, Any]) -> Report:
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        paths = [Path(folder) / f"c{i}.txt" for i in range(len(context))]
        for path, text in zip(paths, context, strict=True):
            path.write_text(text, encoding="utf-8")
        reports = _spied(patch)
        args = ["check", "--answer", answer, "--json", "--fail-on", "never", *_flags({"scorer": "lexical", **settings})]
        result = CliRunner().invoke(app, args + [arg for path in paths for arg in ("--context", str(path))])
        assert result.exit_code == 0, (shlex.join(args), result.output)
        (report,) = reports
        return report


ENTRY_POINTS: dict[str, Entry] = {
    "verify(settings=)": _verify_settings,
    **{f"{call}()": _library(call) for call in ("verify", "averify", "verify_many", "averify_many", "assert_grounded")},
    **{f"adapter:{form}": _adapter(form) for form in ("AdapterCheck", "saved", "trulens", "langchain")},
    "groundwire check": _cli,
}


@pytest.fixture(scope="module", params=list(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def run(entry: str, client: LLMClient, configured: None) -> Run:
    """The entry point with the lexical scorer and these settings over it (the scripted [llm] endpoint for the
    judge and an LLM decomposer)."""

    def check(answer: str = NORTH, context: tuple[str, ...] = (CASTLE,), **settings: object) -> Report:
        return ENTRY_POINTS[entry](client, answer, context, dict(settings))

    return check


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
def test_each_setting_is_reachable_from_each_entry_point(field: str, run: Run, server: ScriptedLLMServer) -> None:
    PROBES[field](run, server)


FIELDS = set(CheckSettings.model_fields)


def test_every_entry_point_declares_every_setting() -> None:
    """One option set, from CheckSettings' fields: the library calls' (CheckOptions, each call's own
    require_citations), the adapters' (AdapterOptions) and `groundwire check`'s flags."""
    assert set(CheckOptions.__optional_keys__) == FIELDS - {"require_citations"} | {"settings", "verifier", "client"}
    assert set(SettingsOptions.__optional_keys__) == FIELDS | {"settings"}
    assert set(AdapterOptions.__optional_keys__) == ADAPTER_OPTION_NAMES == FIELDS | {"settings", "metric", "task",
                                                                                      "verifier"}
    from groundwire.cli.batch import batch
    from groundwire.cli.main import check, eval_command
    from groundwire.frames import averify_many, verify_many
    from groundwire.pipeline import averify

    for call in (verify, averify, verify_many, averify_many, assert_grounded):
        assert "require_citations" in inspect.signature(call).parameters, call
    assert set(inspect.signature(check).parameters) >= FIELDS
    for command in (eval_command, batch):  # they run no judge, and refuse [verify] judge (below)
        assert set(inspect.signature(command).parameters) >= FIELDS - {"judge"}, command


@pytest.mark.parametrize("command", [["eval", "rows.jsonl"], ["batch", "--input", "rows.jsonl", "--output", "out"]])
def test_eval_and_batch_refuse_the_judge_they_do_not_run(command: list[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": "1", "answer": NORTH, "context": [CASTLE]}) + "\n")
    monkeypatch.setenv("GROUNDWIRE_VERIFY_JUDGE", "true")  # was ignored: eval and batch ran without it
    result = CliRunner().invoke(app, [*command, "--scorer", "lexical"])
    assert "does not run the LLM judge" in str(result.exception), result.output  # an InputError: exit 2


def test_the_service_takes_what_a_request_sets_and_refuses_the_rest_by_name(tmp_path: Path) -> None:
    """A request sets require_citations and judge; every other setting is fixed when the service starts, and a
    request that names one is a 422 that names it (and where to set it)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from groundwire.service import ServiceSettings, create_app
    from groundwire.service.models import VerifyRequest

    assert FIELDS & set(VerifyRequest.model_fields) == {"require_citations", "judge"}
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys={"key": "alpha"},
                               check=CheckSettings(scorer="lexical"))
    body = {"answer": NORTH, "chunks": [{"id": "S1", "text": CASTLE}]}
    with TestClient(create_app(settings)) as http:
        headers = {"Authorization": "Bearer key"}
        assert http.post("/v1/verify", json=body, headers=headers).status_code == 200
        for name in sorted(FIELDS - {"require_citations", "judge"}) + ["threshold"]:
            response = http.post("/v1/verify", json={**body, name: 0.5}, headers=headers)
            assert response.status_code == 422, name
            (detail,) = response.json()["error"]["details"]
            assert detail["loc"] == ["body", name] and f"'{name}'" in detail["msg"], detail
            assert "accept_at" in detail["msg"] if name == "threshold" else "serve" in detail["msg"], detail


REFUSED = {"threshold": "takes no threshold=: use accept_at=", "route_mode": "takes no route_mode=: use route=",
           "acept_at": "unexpected keyword argument 'acept_at'; did you mean accept_at="}


@pytest.mark.parametrize("entry_point", [name for name in ENTRY_POINTS if name not in ("groundwire check",
                                                                                         "verify(settings=)")])
@pytest.mark.parametrize("keyword", sorted(REFUSED))
def test_an_unknown_or_renamed_keyword_is_a_type_error_naming_its_replacement(
        entry_point: str, keyword: str, client: LLMClient) -> None:
    with pytest.raises(TypeError, match=REFUSED[keyword]):
        ENTRY_POINTS[entry_point](client, NORTH, (CASTLE,), {keyword: 0.5})


@pytest.mark.parametrize("entry_point", [name for name in ENTRY_POINTS if name != "groundwire check"])
def test_a_bad_value_is_a_value_error(entry_point: str, client: LLMClient) -> None:
    with pytest.raises(ValueError, match="accept_at"):
        ENTRY_POINTS[entry_point](client, NORTH, (CASTLE,), {"accept_at": 2.0})


def test_the_llm_section_arrives_whole(run: Run) -> None:
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=5, json_mode="json_schema")
    with LLMClient(config) as client:
        assert client.config is config  # all of [llm]: the client holds it, and re-declares none of it


def test_verifier_refuses_by_the_same_rule() -> None:
    """A Verifier takes its settings whole (CheckSettings): a setting given as a keyword names where it goes, and
    any other keyword the closest parameter."""
    from groundwire import Verifier
    from groundwire.scoring import get_scorer

    with pytest.raises(TypeError, match=r"Verifier\(threshold=\) moved into the settings: .*CheckSettings\(accept_at="):
        Verifier(get_scorer("lexical"), threshold=0.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'pruners'; did you mean pruner="):
        Verifier(get_scorer("lexical"), pruners=None)  # type: ignore[arg-type]


def test_check_names_the_flag_that_needs_an_llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text(CASTLE)
    for name in ("GROUNDWIRE_LLM_BASE_URL", "GROUNDWIRE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(app, ["check", "-c", "c.txt", "-a", NORTH, "--scorer", "lexical",
                                      "--decomposer", "llm"])
    assert "--decomposer llm needs an LLM endpoint" in str(result.exception), result.output  # it said --judge
