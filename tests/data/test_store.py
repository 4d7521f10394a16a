"""The SQLAlchemy store: ingest with durable ids, scoped request log, feedback, WAL durability."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from groundwire import Verifier
from groundwire.data.provenance import Document, render_context
from groundwire.data.store import ERROR_KIND, RequestRecord, RetrievedChunk, Store
from groundwire.foundation.errors import InputError
from groundwire.scoring import get_scorer

MANUAL = "Run start.sh to start the cluster.\n\nRun stop.sh to stop the cluster.\n\nLogs live in /var/log/cluster."


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server URL: $GROUNDWIRE_TEST_POSTGRES_URL, or a throwaway local cluster (skip if neither)."""
    if os.environ.get("GROUNDWIRE_TEST_POSTGRES_URL"):
        yield os.environ["GROUNDWIRE_TEST_POSTGRES_URL"]
        return
    pytest.importorskip("psycopg")
    if not (shutil.which("initdb") and shutil.which("pg_ctl")):
        pytest.skip("no PostgreSQL: install its server binaries or set GROUNDWIRE_TEST_POSTGRES_URL")
    base = Path(tempfile.mkdtemp(prefix="gwpg"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        if not shutil.which("runuser"):
            pytest.skip("running as root without runuser: cannot start a PostgreSQL cluster")
        shutil.chown(base, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = base / "data"
    subprocess.run([*as_user, "initdb", "-D", str(data), "-A", "trust", "-U", "gw"], check=True, capture_output=True)
    options = f"-p {port} -k {base} -c listen_addresses='' -c fsync=off"
    subprocess.run(
        [*as_user, "pg_ctl", "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    yield f"postgresql+psycopg://gw@/postgres?host={base}&port={port}"
    subprocess.run([*as_user, "pg_ctl", "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


def _fresh_postgres_database(server_url: str) -> str:
    import sqlalchemy as sa

    name = f"gw_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    admin.dispose()
    return server_url.replace("/postgres?", f"/{name}?")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The same tests on SQLite and, where a server is available, PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'gw.db'}"
    else:
        url = _fresh_postgres_database(request.getfixturevalue("postgres_server"))
    s = Store(url)
    yield s
    s.close()


@pytest.fixture()
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'gw.db'}")
    yield s
    s.close()


def test_sqlite_runs_in_wal_mode(sqlite_store: Store, tmp_path: Path) -> None:
    sqlite_store.ingest([Document("m", "Manual", MANUAL)], scope="a")
    with sqlite3.connect(tmp_path / "gw.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reingest_keeps_ids_and_version_and_changes_only_what_changed(store: Store) -> None:
    first = store.ingest([Document("m", "Manual", MANUAL, page=1)], scope="a")
    assert first.doc_version == 1 and first.changed_doc_ids == ("m",)
    again = store.ingest([Document("m", "Manual", MANUAL, page=1)], scope="a")
    assert again.doc_version == 1 and again.changed_doc_ids == ()
    assert [p.cite_id for p in again.passages] == [p.cite_id for p in first.passages]

    split = Store(store.url)
    small = split.ingest([Document("n", "Notes", MANUAL)], scope="a", max_chars=50)
    assert len(small.passages) == 3
    edited = MANUAL.replace("Logs live in /var/log/cluster.", "Logs live in /srv/logs.")
    after = split.ingest([Document("n", "Notes", edited)], scope="a", max_chars=50)
    assert after.doc_version == small.doc_version + 1 and after.changed_doc_ids == ("n",)
    assert [p.cite_id for p in after.passages[:2]] == [
        p.cite_id for p in small.passages[:2]
    ]  # unchanged text keeps ids
    assert after.passages[2].cite_id != small.passages[2].cite_id
    assert after.retired_ids == (small.passages[2].cite_id,)
    current = {p.cite_id for p in split.passages(scope="a", doc_ids=["n"])}
    assert current == {p.cite_id for p in after.passages}
    # A retired id still resolves for old log rows.
    assert split.lookup_passages([small.passages[2].cite_id], scope="a")[small.passages[2].cite_id].text.endswith(
        "/var/log/cluster."
    )
    split.close()


def test_store_resolves_cite_id_collisions_deterministically(tmp_path: Path) -> None:
    docs = [Document(f"d{i}", "T", f"fact number {i} is true") for i in range(40)]
    ids = []
    for name in ("one.db", "two.db"):
        s = Store(f"sqlite:///{tmp_path / name}", cite_id_length=2)
        result = s.ingest(docs, scope="a")
        assert result.collisions > 0
        assert len({p.cite_id for p in result.passages}) == 40
        assert [p.cite_id for p in s.ingest(docs, scope="a").passages] == [p.cite_id for p in result.passages]
        ids.append([p.cite_id for p in result.passages])
        s.close()
    assert ids[0] == ids[1]


def test_passages_come_back_in_the_same_order_on_every_backend(store: Store) -> None:
    docs = [Document("b", "B", "Page two.", page=2), Document("b", "B", "No page."), Document("a", "A", "One.", page=1)]
    store.ingest(docs, scope="a")
    assert [(p.doc_id, p.page) for p in store.passages(scope="a")] == [("a", 1), ("b", None), ("b", 2)]


def test_scopes_are_isolated(store: Store) -> None:
    a = store.ingest([Document("m", "Manual", MANUAL)], scope="team-a")
    store.ingest([Document("secret", "Payroll", "Alice earns 100k.")], scope="team-b")
    assert {p.doc_id for p in store.passages(scope="team-a")} == {"m"}
    assert store.lookup_passages([p.cite_id for p in a.passages], scope="team-b") == {}
    request_id = store.log_request(RequestRecord(scope="team-a", response="r", context="c"))
    assert store.get_request(request_id, scope="team-a") is not None
    assert store.get_request(request_id, scope="team-b") is None
    assert store.requests(scope="team-b") == []
    with pytest.raises(InputError, match="no logged request"):
        store.add_feedback(request_id, scope="team-b", thumbs=1)
    assert store.doc_version(scope="team-a") == 1 and store.doc_version(scope="nobody") == 0


def test_request_log_round_trips_everything_from_a_report(store: Store) -> None:
    ingest = store.ingest([Document("m", "Manual", MANUAL, page=2)], scope="a")
    chunks = [p.as_chunk() for p in ingest.passages]
    answer = "Run start.sh to start the cluster. The cluster needs 64 GB of RAM."
    report = Verifier(get_scorer("lexical")).verify(answer, chunks, question="how do I start the cluster")
    context = render_context(ingest.passages)
    record = RequestRecord.from_report(
        report,
        scope="a",
        context=context,
        retrieved=[(p.cite_id, 0.87) for p in ingest.passages],
        latency_ms=12.5,
        release="v1.2",
        segment="docs",
        gold_ids=[ingest.passages[0].cite_id],
    )
    request_id = store.log_request(record)
    back = store.get_request(request_id, scope="a")
    assert back is not None
    assert back.query == "how do I start the cluster"
    assert back.context == context  # exactly as sent
    assert back.response == answer
    assert back.retrieved == tuple(RetrievedChunk(p.cite_id, 0.87) for p in ingest.passages)
    assert [c.verdict for c in back.claims] == [r.verdict.value for r in report.claims]
    assert [c.score for c in back.claims] == pytest.approx([r.score for r in report.claims])
    assert back.route == report.route.value
    assert back.escalations == sum(1 for r in report.claims if r.route.value == "escalate")
    assert back.model_ids == {"scorer": report.model_id}
    assert (back.release, back.segment, back.latency_ms) == ("v1.2", "docs", 12.5)
    assert back.gold_ids == (ingest.passages[0].cite_id,)
    assert back.report is not None and back.report["score"] == pytest.approx(report.score)
    assert back.created_at is not None and back.created_at.tzinfo is not None


def test_feedback_is_linked_and_validated(store: Store) -> None:
    request_id = store.log_request(RequestRecord(scope="a", response="r", context="c"))
    store.add_feedback(request_id, scope="a", thumbs=-1, correction="It is stop.sh, not start.sh.")
    store.add_feedback(request_id, scope="a", thumbs=1)
    got = store.feedback(request_id, scope="a")
    assert [(f.thumbs, f.correction) for f in got] == [(-1, "It is stop.sh, not start.sh."), (1, None)]
    assert store.feedback(request_id, scope="b") == []
    other = store.log_request(RequestRecord(scope="a", response="r2", context="c"))
    silent = store.log_request(RequestRecord(scope="a", response="r3", context="c"))
    store.add_feedback(other, scope="a", correction="Wrong page cited.")
    summary = store.feedback_summary([request_id, other, silent], scope="a")
    assert {k: (v.up, v.down, v.corrections) for k, v in summary.items()} == {request_id: (1, 1, 1), other: (0, 0, 1)}
    assert store.feedback_summary([request_id], scope="b") == {}
    with pytest.raises(InputError, match="thumbs"):
        store.add_feedback(request_id, scope="a", thumbs=5)
    with pytest.raises(InputError, match="needs"):
        store.add_feedback(request_id, scope="a")


def test_bad_input_is_rejected_before_anything_is_written(store: Store) -> None:
    with pytest.raises(InputError, match="scope"):
        store.log_request(RequestRecord(scope="", response="r", context="c"))
    with pytest.raises(InputError, match="JSON"):
        store.log_request(RequestRecord(scope="a", response="r", context="c", extra={"when": object()}))
    with pytest.raises(InputError):
        store.ingest([], scope="a")
    assert store.requests(scope="a") == []


def test_requests_filter_and_sample_reproducibly(store: Store) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(30):
        store.log_request(
            RequestRecord(
                scope="a", response=f"r{i}", context="c", release=f"v{i % 2}", created_at=start + timedelta(hours=i)
            )
        )
    assert len(store.requests(scope="a", limit=None)) == 30
    assert {r.release for r in store.requests(scope="a", release="v1", limit=None)} == {"v1"}
    assert len(store.requests(scope="a", since=start + timedelta(hours=20), limit=None)) == 10
    first = store.sample_requests(scope="a", n=10, seed=7)
    assert len(first) == 10
    assert [r.id for r in first] == [r.id for r in store.sample_requests(scope="a", n=10, seed=7)]
    assert [r.id for r in first] != [r.id for r in store.sample_requests(scope="a", n=10, seed=8)]


def test_concurrent_writers_lose_nothing(store: Store) -> None:
    store.ingest([Document("m", "Manual", MANUAL)], scope="a")
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(10):
                request_id = store.log_request(RequestRecord(scope="a", response=f"{worker}-{i}", context="c"))
                store.add_feedback(request_id, scope="a", thumbs=1)
                store.ingest([Document(f"doc{worker}", "T", f"version {i} of worker {worker}")], scope="a")
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {r.response for r in store.requests(scope="a", limit=None)} == {
        f"{w}-{i}" for w in range(8) for i in range(10)
    }
    assert store.doc_version(scope="a") == 1 + 8 * 10


WRITER = """
import sys
from groundwire.data.store import RequestRecord, Store
store = Store(sys.argv[1])
for i in range(100000):
    request_id = store.log_request(RequestRecord(scope="a", response="x" * 2000, context=str(i)))
    print(request_id, flush=True)
"""


def test_a_killed_writer_loses_no_committed_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    Store(url).close()  # schema first, so the child starts writing at once
    child = subprocess.Popen([sys.executable, "-c", WRITER, url], stdout=subprocess.PIPE, text=True, env={**os.environ})
    assert child.stdout is not None
    committed = [child.stdout.readline().strip() for _ in range(50)]
    child.send_signal(signal.SIGKILL)  # mid-stream: it is writing the next rows right now
    child.wait()
    store = Store(url)
    stored = {r.id for r in store.requests(scope="a", limit=None)}
    store.close()
    assert all(committed) and set(committed) <= stored


def _reviewable(store: Store, *, scope: str = "a") -> tuple[str, list[str]]:
    """A logged request whose report has three claims, and their texts."""
    chunks = [p.as_chunk() for p in store.ingest([Document("m", "Manual", MANUAL)], scope=scope).passages]
    answer = "Run start.sh to start the cluster. The cluster needs 64 GB of RAM. Logs live in /var/log/cluster."
    report = Verifier(get_scorer("lexical")).verify(answer, chunks)
    request_id = store.log_request(RequestRecord.from_report(report, scope=scope, context=render_context([])))
    texts = [r.claim.text for r in report.claims]
    assert len(texts) == 3
    return request_id, texts


def test_a_verdict_is_stored_with_its_feedback_and_a_later_one_is_in_force(store: Store) -> None:
    request_id, texts = _reviewable(store)
    store.add_feedback(request_id, scope="a", thumbs=1)
    first = store.add_review(request_id, scope="a", thumbs=-1, correction="It needs 32 GB.", faithful=False,
                             unfaithful_claims=[1])
    assert first.feedback_id is not None and first.replaces is None and first.verdict is not None
    assert [(c.index, c.text) for c in first.verdict.unfaithful_claims] == [(1, texts[1])]
    only_verdict = store.add_review(request_id, scope="a", faithful=True)
    assert only_verdict.feedback_id is None and only_verdict.replaces == first.verdict.id
    # Nothing is lost: both feedback rows and both verdicts, oldest first; the newest verdict is in force.
    assert [(f.thumbs, f.correction) for f in store.feedback(request_id, scope="a")] == [(1, None),
                                                                                         (-1, "It needs 32 GB.")]
    history = store.verdicts(request_id, scope="a")
    assert [(v.faithful, len(v.unfaithful_claims)) for v in history] == [(False, 1), (True, 0)]
    assert history[0].created_at <= history[1].created_at and history[1].created_at.tzinfo is not None
    assert store.latest_verdicts([request_id, "nope"], scope="a") == {request_id: history[1]}
    [(record, verdict)] = store.reviewed(scope="a")
    assert record.id == request_id and verdict == history[1]
    # Another scope sees none of it, and cannot add to it.
    assert store.verdicts(request_id, scope="b") == [] and store.reviewed(scope="b") == []
    assert store.latest_verdicts([request_id], scope="b") == {}
    with pytest.raises(InputError) as caught:
        store.add_review(request_id, scope="b", faithful=False)
    assert caught.value.code == "request_not_found"


@pytest.mark.parametrize(("review", "code", "message"), [
    ({"thumbs": -1, "faithful": False, "unfaithful_claims": [3]}, "invalid_verdict", "claims 0 to 2: no claim 3"),
    ({"faithful": False, "unfaithful_claims": [-1]}, "invalid_verdict", "no claim -1"),
    ({"faithful": False, "unfaithful_claims": [0, 0]}, "invalid_verdict", "twice"),
    ({"faithful": True, "unfaithful_claims": [0]}, "invalid_verdict", "faithful=false"),
    ({"unfaithful_claims": [0]}, "invalid_verdict", "faithful=false"),
    ({}, "invalid_feedback", "needs thumbs, a correction or a verdict"),
    ({"thumbs": 2, "faithful": True}, "invalid_feedback", "thumbs"),
])
def test_a_bad_verdict_is_refused_and_writes_nothing(store: Store, review: dict, code: str, message: str) -> None:
    request_id, _ = _reviewable(store)
    with pytest.raises(InputError, match=message) as caught:
        store.add_review(request_id, scope="a", **review)
    assert caught.value.code == code
    assert store.feedback(request_id, scope="a") == [] and store.verdicts(request_id, scope="a") == []


def test_a_request_failed_before_its_answer_was_accepted_takes_thumbs_but_no_verdict(store: Store) -> None:
    failed = store.log_request(RequestRecord(scope="a", response="", context="", kind=ERROR_KIND))
    with pytest.raises(InputError, match="no answer to give a verdict on") as caught:
        store.add_review(failed, scope="a", thumbs=-1, faithful=False)
    assert caught.value.code == "invalid_verdict"
    assert store.feedback(failed, scope="a") == []  # the thumbs given with it were not written either
    assert store.add_review(failed, scope="a", thumbs=-1).feedback_id is not None


def test_a_request_failed_after_its_answer_was_accepted_takes_a_verdict_without_claims(store: Store) -> None:
    failed = store.log_request(RequestRecord(scope="a", response="The pump runs at 40 l/min.", context="c",
                                             kind=ERROR_KIND))
    with pytest.raises(InputError, match="no claims: no claim 0") as caught:
        store.add_review(failed, scope="a", faithful=False, unfaithful_claims=[0])  # none were checked
    assert caught.value.code == "invalid_verdict"
    written = store.add_review(failed, scope="a", faithful=False)
    assert written.verdict is not None and written.verdict.faithful is False
    assert [record.id for record, _ in store.reviewed(scope="a")] == [failed]


def test_an_existing_database_gains_the_verdicts_table_and_keeps_its_feedback(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = Store(f"sqlite:///{path}")
    request_id, _ = _reviewable(old)
    old.add_feedback(request_id, scope="a", thumbs=-1, correction="kept")
    old.close()
    with sqlite3.connect(path) as raw:  # a log written before verdicts existed
        raw.execute("DROP TABLE review_verdicts")
    store = Store.open(str(path))
    try:
        store.add_review(request_id, scope="a", faithful=False, unfaithful_claims=[0])
        assert [f.correction for f in store.feedback(request_id, scope="a")] == ["kept"]
        assert [v.faithful for v in store.verdicts(request_id, scope="a")] == [False]
    finally:
        store.close()
    with pytest.raises(InputError, match="no such database file") as caught:
        Store.open(str(tmp_path / "missing.db"))
    assert caught.value.code == "file_not_found"
