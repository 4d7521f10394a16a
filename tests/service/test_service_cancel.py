"""Issue 47, item 3: work that stops when its caller goes, and a time budget for every pooled route.

Nothing here is timed: a wait for something to happen is bounded (WAIT_S) so that a hang fails the test; what is
asserted is what happened (the work stopped at a checkpoint, the worker came back, the status and code sent)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from live_server import live
from service_common import ALPHA

pytest.importorskip("fastapi")

WAIT_S = 30.0
CHUNK = {"id": "S1", "text": "The pump runs at 40 litres per minute."}
VERIFY = {"answer": "The pump runs at 40 litres per minute.", "chunks": [CHUNK]}
ENDLESS = {"answer": "Endless work: the pump runs at 40 litres per minute.", "chunks": [CHUNK]}


# --- the token --------------------------------------------------------------------------------------------------


def test_a_checkpoint_stops_work_under_a_cancelled_or_expired_token_and_nothing_else() -> None:
    from groundwire.core.cancel import Cancelled, CancelToken, cancellable, checkpoint

    checkpoint()  # no token: the CLI and the library run as before
    token = CancelToken.after(60)
    with cancellable(token):
        checkpoint()
        token.cancel()
        with pytest.raises(Cancelled) as stopped:
            checkpoint()
        assert stopped.value.reason == "disconnected"
    checkpoint()  # outside the block again
    with cancellable(CancelToken.after(-1)), pytest.raises(Cancelled) as expired:
        checkpoint()
    assert expired.value.reason == "deadline"
    # A child expires sooner than its parent, and is cancelled with it.
    parent = CancelToken.after(60)
    child = parent.within(61)
    assert child.reason == "deadline" and parent.reason is None
    later = parent.within(1)
    assert later.reason is None and later.deadline is not None and parent.deadline is not None
    assert later.deadline < parent.deadline
    parent.cancel()
    assert later.reason == "disconnected"
    assert not issubclass(Cancelled, Exception)  # `except Exception` (one item's failure) does not swallow it


def test_an_index_stops_between_window_batches_once_its_token_is_cancelled() -> None:
    from groundwire.core.cancel import Cancelled, CancelToken, cancellable
    from groundwire.data.embed import FIRST_WINDOWS, WINDOW_BATCH, index_texts
    from groundwire.scoring.embedder import default_embedder

    embedder = default_embedder()
    token = CancelToken()
    batches: list[int] = []

    class CancelsAfterFirstBatch:
        """The real embedder; the caller goes away while its first batch is embedded."""

        model_id, dim = embedder.model_id, embedder.dim

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            batches.append(len(texts))
            token.cancel()
            return embedder.embed(texts)

    texts = [f"The pump of unit {n} runs at {n} bar." for n in range(WINDOW_BATCH * 3)]
    with cancellable(token), pytest.raises(Cancelled):
        index_texts(CancelsAfterFirstBatch(), texts)
    assert batches == [FIRST_WINDOWS]  # the first batch, and no other
    batches.clear()
    whole = index_texts(CancelsAfterFirstBatch(), texts)  # without a token: the whole index, as before
    assert whole.vectors.shape == (len(texts), embedder.dim)
    assert batches == [WINDOW_BATCH] * 3  # in the embedder's own batches


# --- the service ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client


class Endless:
    """actions.verify for an answer that starts "Endless work": a check that never ends by itself, with a boundary
    (core.cancel.checkpoint) every 10 ms, as a long check has between plans, window batches and attempts. Other
    answers are verified as ever."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.entered = threading.Event()
        self.stopped = threading.Event()
        self.stopped_by: list[str] = []

    def __call__(self, runtime: Any, body: Any, sent: Any, *, scope: str) -> Any:
        from groundwire.core.cancel import Cancelled, checkpoint

        if not body.answer.startswith("Endless work"):
            return self.real(runtime, body, sent, scope=scope)
        self.entered.set()
        try:
            for _ in range(int(WAIT_S * 100)):  # bounded, so that a test that fails does not hang
                checkpoint()
                threading.Event().wait(0.01)
            raise AssertionError("the endless check was never stopped")
        except Cancelled as stopped:
            self.stopped_by.append(stopped.reason)
            raise
        finally:
            self.stopped.set()


@pytest.fixture
def endless(monkeypatch: pytest.MonkeyPatch) -> Endless:
    from groundwire.service import actions

    work = Endless(actions.verify)
    monkeypatch.setattr(actions, "verify", work)
    return work


def _post(body: dict[str, Any]) -> bytes:
    content = json.dumps(body).encode()
    return (b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-alpha\r\n"
            b"Content-Type: application/json\r\nContent-Length: " + str(len(content)).encode() + b"\r\n\r\n" + content)


def test_a_check_whose_client_disconnects_stops_at_its_next_checkpoint_and_frees_its_worker(settings,
                                                                                           endless) -> None:
    with serving(settings, workers=1, reserved_workers=0) as client, live(client) as port:
        pool = client.app.state.pool
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as sock:
            sock.sendall(_post(ENDLESS))
            assert endless.entered.wait(WAIT_S), "the check never started"
            assert pool.busy() == 1
        # The client has gone: the check stops at its next checkpoint and its worker is free again.
        assert endless.stopped.wait(WAIT_S), "the check went on after its client had gone"
        assert endless.stopped_by == ["disconnected"]
        answered = client.post("/v1/verify", headers=ALPHA, json=VERIFY)  # the only worker takes it
        assert answered.status_code == 200, answered.text
        assert pool.busy() == 0 and pool.waiting == 0
        # Nothing was logged for the abandoned check: no result, no error row.
        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        assert [row["endpoint"] for row in logged] == ["verify"], logged


def test_a_check_that_waits_for_a_worker_and_whose_client_goes_never_runs(settings, endless) -> None:
    with serving(settings, workers=1, reserved_workers=0) as client, live(client) as port:
        pool = client.app.state.pool
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as holder:
            holder.sendall(_post(ENDLESS))
            assert endless.entered.wait(WAIT_S)
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as waiter:
                waiter.sendall(_post(VERIFY))
                for _ in range(int(WAIT_S * 100)):
                    if pool.waiting == 1:
                        break
                    threading.Event().wait(0.01)
                assert pool.waiting == 1
            # The waiting check's client has gone: its place is given back at once, before any worker is free.
            for _ in range(int(WAIT_S * 100)):
                if pool.waiting == 0:
                    break
                threading.Event().wait(0.01)
            assert pool.waiting == 0 and pool.busy() == 1
        assert endless.stopped.wait(WAIT_S)
        assert client.get("/v1/requests", headers=ALPHA).json()["requests"] == []


def test_a_check_past_its_time_budget_gets_504_and_one_that_waited_all_of_it_gets_503(
        settings, endless, monkeypatch) -> None:
    from groundwire.service import actions

    with serving(settings, workers=1, reserved_workers=0, time_budget_s=1.0) as client:
        stopped = client.post("/v1/verify", headers=ALPHA, json=ENDLESS)
        assert stopped.status_code == 504, stopped.text
        assert stopped.json()["error"]["code"] == "time_budget_exceeded"
        # The 504 is sent at the deadline; the worker records why it stopped at its next boundary, a moment later.
        for _ in range(int(WAIT_S * 100)):
            if endless.stopped_by:
                break
            threading.Event().wait(0.01)
        assert endless.stopped_by == ["deadline"]
        # A check between two boundaries (one long scoring call) holds the only worker past the next one's budget.
        entered, release = threading.Event(), threading.Event()

        def stubborn(runtime: Any, body: Any, sent: Any, *, scope: str) -> Any:
            entered.set()
            assert release.wait(WAIT_S)
            return endless.real(runtime, body, sent, scope=scope)

        monkeypatch.setattr(actions, "verify", stubborn)
        held: list[Any] = []
        holder = threading.Thread(target=lambda: held.append(client.post("/v1/verify", headers=ALPHA, json=VERIFY)))
        holder.start()
        try:
            assert entered.wait(WAIT_S)
            waited = client.post("/v1/verify", headers=ALPHA, json=VERIFY)
        finally:
            release.set()
            holder.join(WAIT_S)
        assert waited.status_code == 503, waited.text
        assert waited.json()["error"]["code"] == "queue_timeout" and waited.headers["retry-after"] == "1"
        # Answered 504 at its deadline, while its check was still between two boundaries; let go, the check stops at
        # its next one (the plan's) and gives its worker back.
        assert held[0].status_code == 504
        pool = client.app.state.pool
        for _ in range(int(WAIT_S * 100)):
            if pool.busy() == 0:
                break
            threading.Event().wait(0.01)
        assert pool.busy() == 0 and pool.waiting == 0
        # The checks stopped are error rows of the log; the refusal of a loaded service is not (as `busy` is not).
        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        assert sorted(row["status"] for row in logged) == [504, 504], logged


def test_the_eval_routes_answer_within_their_budget_with_what_they_finished(settings) -> None:
    sentences = [f"The valve of unit {n} opens at {n % 90 + 5} bar and was checked in week {n % 52}. "
                 for n in range(3_000)]
    corpus = "".join(sentences)  # about 240k characters, 800 windows: far more than 0.5 s to embed
    with serving(settings, time_budget_s=1.0, max_body_bytes=1_000_000) as client:
        documents = [{"doc_id": f"manual {i}", "text": corpus[at:at + 80_000]}
                     for i, at in enumerate(range(0, len(corpus), 80_000))]
        assert client.post("/v1/ingest", headers=ALPHA, json={"documents": documents}).status_code == 200
        for n in range(3):  # failures whose claims the corpus is searched for
            failed = {"answer": f"The valve of unit {n} opens at {n + 300} bar.",
                      "chunks": [{"id": "S1", "text": f"The valve of unit {n} is painted red."}]}
            assert client.post("/v1/verify", headers=ALPHA, json=failed).status_code == 200
        for path in ("/v1/eval?limit=10", "/v1/eval/report?limit=10"):
            response = client.get(path, headers=ALPHA)
            assert response.status_code == 200, (path, response.text[:500])
        evidence = client.get("/v1/eval?limit=10", headers=ALPHA).json()["meta"]["evidence"]
        # The evidence checks stopped a reserve before the deadline: every failure is undetermined, and said so.
        assert evidence["failures_not_checked_for_time"] == 3, evidence
        assert evidence["failures_not_checked"] == 3 and "time budget" in evidence["reason"], evidence


def test_the_time_budget_is_a_setting_and_a_serve_flag(settings, tmp_path, monkeypatch) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from groundwire.cli.main import app
    from groundwire.foundation.errors import InputError
    from groundwire.service import ServiceSettings

    assert ServiceSettings().time_budget_s == 30.0  # the default
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(InputError):
            replace(settings, time_budget_s=bad)
    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda service, **_: served.append(service))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GROUNDWIRE_CONFIG", "")
    result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db"), "--scorer", "lexical",
                                      "--time-budget", "12.5"])
    assert result.exit_code == 0, result.output
    assert served[0].state.settings.time_budget_s == 12.5
    refused = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db"), "--time-budget", "0"])
    assert refused.exit_code != 0 and len(served) == 1


def test_generate_s_attempts_and_llm_calls_share_the_request_s_time_budget(settings) -> None:
    import sys
    from pathlib import Path

    from groundwire.config import Config, LLMConfig

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
    from scripted_llm import Reply, ScriptedLLMServer

    with ScriptedLLMServer() as llm:
        # Every reply comes after 8 s: the configured timeout (30 s) and retries (2) would wait 24 s and more for
        # attempts; the call is cut to what is left of the 1.5 s budget, and no attempt or retry follows.
        llm.responder = lambda _: Reply("The pump runs at 40 litres per minute [S1].", delay_s=8.0)
        config = Config(llm=LLMConfig(base_url=llm.url, model="scripted", max_retries=2, timeout_s=30))
        with serving(settings, use_llm=True, config=config, time_budget_s=1.5) as client:
            response = client.post("/v1/generate", headers=ALPHA,
                                   json={"question": "How fast does the pump run?", "chunks": [CHUNK]})
            assert response.status_code == 504, response.text
            assert response.json()["error"]["code"] == "time_budget_exceeded"
            assert len(llm.requests) == 1, llm.requests


def test_a_check_on_a_huge_context_is_answered_504_at_its_budget_not_after_its_work(settings, monkeypatch) -> None:
    """Issue 58: one verify against 200k characters was answered 200 after its 1 s budget: its long steps (the one
    scoring call, the figures, the windows, the context's index) had no checkpoint. Here the scorer takes 5 ms a
    pair, so that its 740 pairs take about 4 s whatever the machine: one call could not be stopped, and the pool
    waited for it. Now the pool answers at the deadline and the scoring stops between two batches; no result is
    logged, and the worker comes back."""
    from groundwire.scoring.lexical import LexicalScorer

    quick = LexicalScorer.score

    def slow(self: LexicalScorer, pairs: Any) -> Any:
        threading.Event().wait(0.005 * len(pairs))
        return quick(self, pairs)

    monkeypatch.setattr(LexicalScorer, "score", slow)
    prose = "".join(f"The pump of unit {n} runs at {n % 97 + 3} bar and was serviced in week {n % 52 + 1}. "
                    for n in range(2_500))
    answer = " ".join(["The freight team " + ", ".join(f"handled {n} orders" for n in range(30))
                       + " and filed invoices."] * 2)
    body = {"answer": answer, "chunks": [{"id": "S1", "text": prose[:200_000]}]}
    with serving(settings, workers=1, reserved_workers=0, time_budget_s=1.0, max_body_bytes=1_000_000) as client:
        stopped = client.post("/v1/verify", headers=ALPHA, json=body)
        assert stopped.status_code == 504, stopped.text[:300]
        assert stopped.json()["error"]["code"] == "time_budget_exceeded"
        pool = client.app.state.pool
        for _ in range(int(WAIT_S * 100)):
            if pool.busy() == 0:
                break
            threading.Event().wait(0.01)
        assert pool.busy() == 0
        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        assert [(row["endpoint"], row["status"]) for row in logged] == [("error", 504)], logged
