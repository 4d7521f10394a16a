"""groundwire's evaluations in a real Phoenix: a Phoenix server on 127.0.0.1 (arize-phoenix, from .venv-phoenix,
a temporary working folder and SQLite; its gRPC receiver off, see phoenix_server.py, so it listens on loopback
only), spans sent to it over OTLP/HTTP, verify_many's results logged on those spans with Phoenix's own client
(arize-phoenix-client), and read back through that client and Phoenix's GraphQL API (what its span list shows).

`make test` builds .venv-phoenix and names its python in GROUNDWIRE_PHOENIX_PYTHON; without a Phoenix server to
start, these tests skip and say so."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_one_rule import CASES

from conftest import BAD, REFUND
from groundwire.adapters.common import Outcome

pytest.importorskip("phoenix.client")
pd = pytest.importorskip("pandas")
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from phoenix.client import Client  # noqa: E402

from groundwire import verify_many  # noqa: E402
from groundwire.adapters.phoenix import log_evaluations, span_annotations  # noqa: E402
from groundwire.core import tracing  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = Path(__file__).with_name("phoenix_server.py")
PROJECT = "groundwire-test"
BATCH_PROJECT = "groundwire-batch"
OPENING = {Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}
STARTUP_LIMIT_S = 300  # a guard against a hung start, not a measurement: Phoenix took 26 s here on 2 busy cores


def _phoenix_python() -> str | None:
    """The Phoenix env's python: GROUNDWIRE_PHOENIX_PYTHON (relative to the repository, as `make test` gives it),
    else .venv-phoenix's when it is there."""
    given = os.environ.get("GROUNDWIRE_PHOENIX_PYTHON")
    python = ROOT / given if given else ROOT / ".venv-phoenix" / "bin" / "python"
    return str(python) if given or python.exists() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Phoenix:
    url: str
    pid: int
    grpc_port: int


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    """A Phoenix server of this test's own, on 127.0.0.1, its gRPC receiver off (phoenix_server.py)."""
    python = _phoenix_python()
    if python is None:
        pytest.skip("no Phoenix server to start: `make test` builds .venv-phoenix (arize-phoenix) for this test")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (work / "server.log").open("wb")
    server = subprocess.Popen([python, str(LAUNCHER)], env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(server, url, work / "server.log")
        yield Phoenix(url, server.pid, grpc_port)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="module")
def phoenix(server: Phoenix) -> str:
    """The server's base URL."""
    return server.url


def _wait_until_healthy(server: subprocess.Popen, url: str, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the Phoenix server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the Phoenix server did not answer /healthz:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def sent(phoenix: str, lexical) -> dict[str, str]:
    """One RAG span per answer of the one rule, each with groundwire's verify span inside it, exported to Phoenix
    over OTLP/HTTP: {answer: span id}."""
    provider = _provider(phoenix, PROJECT)
    tracer = provider.get_tracer("rag-app")
    ids = {}
    with _groundwire_on(provider):
        for answer, context, question, _ in CASES:
            with tracer.start_as_current_span("rag", attributes={"openinference.span.kind": "CHAIN",
                                                                 "input.value": question,
                                                                 "output.value": answer}) as span:
                span_id = format(span.get_span_context().span_id, "016x")
                verify(answer, [context], question=question, verifier=lexical, response_id=_response_id(span_id))
                ids[answer] = span_id
    provider.force_flush()
    provider.shutdown()
    _wait_for_spans(Client(base_url=phoenix), 2 * len(CASES), PROJECT)
    return ids


def _response_id(span_id: str) -> str:
    """The id the model gave the answer written in that RAG span (as an OpenAI completion's "chatcmpl-...")."""
    return f"chatcmpl-{span_id}"


def verify(answer: str, contexts: list[str], *, question: str, verifier, response_id: str) -> None:
    """The one-call API with a given verifier: pipeline.check, as verify() and the adapters run it."""
    from groundwire.core.plan import as_chunks
    from groundwire.pipeline import CheckItem, check

    check(verifier, CheckItem(answer, as_chunks(contexts), question=question, response_id=response_id))


def _provider(url: str, project: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    return provider


@contextlib.contextmanager
def _groundwire_on(provider: TracerProvider) -> Iterator[None]:
    """groundwire's spans go to this provider too."""
    real = tracing._get_tracer
    tracing._get_tracer = lambda: provider.get_tracer("groundwire")
    try:
        yield
    finally:
        tracing._get_tracer = real


def _wait_for_spans(client: Client, count: int, project: str) -> None:
    """Phoenix writes spans asynchronously (the project appears with the first): wait until `count` can be read."""
    import httpx

    for _ in range(2 * STARTUP_LIMIT_S):
        try:
            if len(client.spans.get_spans(project_identifier=project, limit=100)) >= count:
                return
        except httpx.HTTPStatusError as error:
            if error.response.status_code != 404:
                raise
        time.sleep(0.5)
    pytest.fail(f"Phoenix did not list the {count} spans sent to it")


def _frame(ids: dict[str, str]) -> pd.DataFrame:
    """The table a user builds from their spans: answer, context and question, indexed by span id."""
    return pd.DataFrame({"answer": [a for a, *_ in CASES], "context": [[c] for _, c, _, _ in CASES],
                         "question": [q for *_, q, _ in CASES]}, index=[ids[a] for a, *_ in CASES])


def test_verify_many_results_are_annotations_on_the_spans(phoenix, sent, lexical) -> None:
    client = Client(base_url=phoenix)
    results, claims = verify_many(_frame(sent), verifier=lexical, claims=True)
    inserted = log_evaluations(client, results, claims=claims)
    assert len(inserted) == 2 * len(CASES)  # the scored annotation and the decision's
    annotations = client.spans.get_span_annotations(span_ids=list(sent.values()), project_identifier=PROJECT,
                                                    include_annotation_names=["groundwire_supported_share"])
    by_span = {annotation["span_id"]: annotation for annotation in annotations}
    assert set(by_span) == set(sent.values())
    for answer, context, question, expected in CASES:
        report = lexical.verify(answer, [context], question=question)
        annotation = by_span[sent[answer]]
        result = annotation["result"]
        assert annotation["annotator_kind"] == "CODE" and annotation["source"] == "API"
        assert result["label"] == report.route.value
        assert result["score"] == report.supported_share  # the one rule's score
        assert result["explanation"].startswith(OPENING[expected])
        assert annotation["metadata"]["outcome"] == expected.value
        assert annotation["metadata"]["passed"] is (expected is Outcome.PASS)
    fabricated = by_span[sent[BAD]]["result"]["explanation"]
    assert '- "Refunds are accepted within 90 days of purchase.": CONTRADICTED, score' in fabricated
    decisions = client.spans.get_span_annotations(span_ids=list(sent.values()), project_identifier=PROJECT,
                                                  include_annotation_names=["groundwire_route"])
    assert {(d["span_id"], d["result"]["label"]) for d in decisions} == {
        (sent[answer], lexical.verify(answer, [context], question=question).route.value)
        for answer, context, question, _ in CASES}
    assert all(d["result"]["score"] is None and d["result"]["explanation"].count("\n") == 0 for d in decisions)


def test_the_span_lists_chips_tell_accept_escalate_and_reject_apart(phoenix, sent, lexical) -> None:
    """Phoenix's span list shows each annotation's mean score, or its labels where it has no score (the
    `spanAnnotationSummaries` its SpansTable query reads): the decision's chip is the decision."""
    results = verify_many(_frame(sent), verifier=lexical)
    log_evaluations(Client(base_url=phoenix), results, identifier="chips")
    chips = _span_list_chips(phoenix, PROJECT)
    shown = {span_id: chips[span_id]["groundwire_route"] for span_id in sent.values()}
    assert all(chip["meanScore"] is None for chip in shown.values())  # so the label is what the chip shows
    assert {answer: [(f["label"], f["fraction"]) for f in shown[sent[answer]]["labelFractions"]]
            for answer, *_ in CASES} == {answer: [(label, 1.0)] for answer, label in zip(
                [a for a, *_ in CASES], results["route"], strict=True)}
    assert set(results["route"]) == {"accept", "escalate", "reject"}


def _span_list_chips(url: str, project: str) -> dict[str, dict[str, dict]]:
    """{span id: {annotation name: summary}} as Phoenix's GraphQL API gives its span list."""
    import httpx

    query = """query ($name: String!) { projects(filter: {col: name, value: $name}) { edges { node {
        spans(first: 100) { edges { node { spanId
            spanAnnotationSummaries { name meanScore labelFractions { label fraction } } } } } } } } }"""
    answer = httpx.post(f"{url}/graphql", json={"query": query, "variables": {"name": project}}, timeout=30)
    answer.raise_for_status()
    body = answer.json()
    assert "errors" not in body, body
    (edge,) = body["data"]["projects"]["edges"]
    return {span["node"]["spanId"]: {summary["name"]: summary for summary in span["node"]["spanAnnotationSummaries"]}
            for span in edge["node"]["spans"]["edges"]}


def test_a_run_with_an_identifier_replaces_its_annotation(phoenix, sent, lexical) -> None:
    client = Client(base_url=phoenix)
    results = verify_many(_frame(sent), verifier=lexical)
    log_evaluations(client, results, name="groundwire_min", identifier="nightly")
    log_evaluations(client, results, name="groundwire_min", identifier="nightly", metric="score")  # a name given: kept
    annotations = client.spans.get_span_annotations(span_ids=[sent[BAD]], project_identifier=PROJECT,
                                                    include_annotation_names=["groundwire_min"])
    (annotation,) = annotations  # the second run replaced the first
    assert annotation["result"]["score"] == lexical.verify(BAD, [REFUND], question=CASES[1][2]).score
    assert annotation["identifier"] == "nightly"


def test_groundwire_spans_carry_the_openinference_evaluation(phoenix, sent) -> None:
    """groundwire's span carries the evaluation as attributes; its GenAI events are on the RAG span it checked."""
    client = Client(base_url=phoenix)
    every = client.spans.get_spans(project_identifier=PROJECT, limit=100)
    rag = {span["context"]["span_id"]: span for span in every if span["name"] == "rag"}
    spans = [s for s in every if s["name"] == "groundwire.verify"]
    assert len(spans) == len(CASES)
    labels = set()
    for span in spans:
        attributes = span["attributes"]
        assert span["span_kind"] == "EVALUATOR"  # Phoenix reads openinference.span.kind into the span's kind
        assert attributes["evaluations.0.evaluation.name"] == "groundwire.grounding"
        assert attributes["evaluations.0.evaluation.score"] == attributes["groundwire.score"]
        assert attributes["gen_ai.evaluation.score.label"] == attributes["evaluations.0.evaluation.label"]
        labels.add(attributes["evaluations.0.evaluation.label"])
        assert span["parent_id"] in rag  # inside the RAG span it checked
        assert not span["events"]
        events = [e for e in rag[span["parent_id"]]["events"] if e["name"] == "gen_ai.evaluation.result"]
        assert len(events) == 1 + attributes["groundwire.claims"]
        assert events[0]["attributes"]["gen_ai.evaluation.score.label"] == attributes["groundwire.route"]
        assert {e["attributes"]["gen_ai.response.id"] for e in events} == {_response_id(span["parent_id"])}
    assert labels == {"accept", "reject", "escalate"}


def test_verify_many_under_a_span_is_one_trace(phoenix, lexical) -> None:
    """Three answers checked by verify_many inside the caller's span: one trace in Phoenix, not one per row."""
    provider = _provider(phoenix, BATCH_PROJECT)
    frame = pd.DataFrame({"answer": [a for a, *_ in CASES], "context": [[c] for _, c, _, _ in CASES]})
    with _groundwire_on(provider), provider.get_tracer("rag-app").start_as_current_span("nightly-eval"):
        verify_many(frame, verifier=lexical)
    provider.force_flush()
    provider.shutdown()
    client = Client(base_url=phoenix)
    _wait_for_spans(client, 2 + len(CASES), BATCH_PROJECT)
    spans = client.spans.get_spans(project_identifier=BATCH_PROJECT, limit=100)
    assert len({span["context"]["trace_id"] for span in spans}) == 1
    by_id = {span["context"]["span_id"]: span for span in spans}
    rows = [span for span in spans if span["name"] == "groundwire.verify"]
    assert len(rows) == len(CASES)
    assert {by_id[row["parent_id"]]["name"] for row in rows} == {"groundwire.verify_many"}


def test_the_server_listens_on_loopback_only(server: Phoenix) -> None:
    """Every socket the Phoenix server (and any process it started) listens on is a loopback address, and its
    gRPC port is not open."""
    listening = _listening(server.pid)
    assert listening, "found no listening socket of the Phoenix server"
    assert all(_loopback(host) for host, _ in listening), listening
    assert int(server.url.rsplit(":", 1)[1]) in {port for _, port in listening}
    assert server.grpc_port not in {port for _, port in listening}


def _listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of each TCP socket in LISTEN state, and each bound UDP socket, that `pid` or one of its
    descendants holds: their inodes (/proc/PID/fd) looked up in /proc/PID/net/{tcp,tcp6,udp,udp6}."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc (Linux)")
    found = []
    for process in _with_descendants(pid):
        inodes = set()
        for fd in Path(f"/proc/{process}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
        for table, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
            path = Path(f"/proc/{process}/net/{table}")
            for line in path.read_text().splitlines()[1:] if path.exists() else []:
                fields = line.split()
                if fields[3] == state and fields[9] in inodes:
                    found.append(_address(fields[1]))
    return found


def _with_descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        process = queue.pop()
        found.append(process)
        for task in Path(f"/proc/{process}/task").iterdir():
            children = task / "children"
            queue += [int(child) for child in children.read_text().split()] if children.exists() else []
    return found


def _address(field: str) -> tuple[str, int]:
    """/proc/net's "0100007F:1F90": the address in host order, 32 bits at a time, and the port in hex."""
    host, port = field.split(":")
    raw = bytes.fromhex(host)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port, 16)


def _loopback(host: str) -> bool:
    address = ipaddress.ip_address(host)
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def test_a_row_that_could_not_be_checked_is_an_error_annotation(lexical) -> None:
    frame = pd.DataFrame({"answer": [BAD], "context": [[]]}, index=["00000000000000b2"])
    (annotation,) = span_annotations(verify_many(frame, verifier=lexical))  # the decision's alone: no score
    assert annotation["name"] == "groundwire_route"
    assert annotation["span_id"] == "00000000000000b2" and annotation["result"]["label"] == "error"
    assert "score" not in annotation["result"] and annotation["result"]["explanation"].startswith("error: ")

