"""The semantic cache against ingest under concurrent load (issue 14): how often is an answer built from old text
served, or left servable, after the document changed?

    .venv/bin/python bench/cache_race.py                                   # the code of this tree
    PYTHONPATH=/tmp/before/src .venv/bin/python bench/cache_race.py        # another tree (e.g. before a fix)
    .venv/bin/python bench/cache_race.py --read-delay-ms 5                 # widen the race window, identically

Starts `groundwire serve --llm --scorer lexical` in a subprocess (the groundwire that this interpreter imports,
so PYTHONPATH picks the tree under test; a fresh SQLite file) against the scripted OpenAI-compatible server of
tests/llm/scripted_llm.py, which answers with the passage sentence it is sent. Every document's text carries a
revision number ("... gw start r17."), so each answer says which text it was built from. HTTP only.

Load phase: --clients threads send --generates POST /v1/generate (one fixed question per document, so repeats
can hit the cache); after every --ingest-every of them a POST /v1/ingest that moves one document to its
next revision. Counted:
  (a) stale hits: cached answers whose revision is older than the revision the client had seen acknowledged
      before it sent the request (the entry was filed under a newer document version than its text);
  (b) stale servable entries: after the load, and after each of --attempts targeted races (a generate and an
      ingest of the same document sent together), an identical question is served a cached answer built from
      superseded text.
--read-delay-ms sleeps in the server after every chunk read (Store.passages), the same in any tree, to widen
the window between reading the chunks and filing the answer. Nothing is asserted; races are timing-dependent.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from from_tests import ScriptedLLMServer, free_port

ROOT = Path(__file__).resolve().parents[1]

DOCS = ("alpha", "bravo", "charlie", "delta")
_REVISION_RE = re.compile(r"gw start (\w+) r(\d+)")
_CITE_RE = re.compile(r"\[(c_[0-9a-f]+)\]")
# The server process: optionally sleep after each chunk read, then run `groundwire serve` as the console script.
_LAUNCH = """
import sys, time
delay = float(sys.argv.pop(1)) / 1000.0
if delay:
    from groundwire.data.store import Store
    read = Store.passages
    def passages(self, **kwargs):
        found = read(self, **kwargs)
        time.sleep(delay)
        return found
    Store.passages = passages
from groundwire.cli.main import main
main()
"""


def document(name: str, revision: int) -> dict:
    return {"doc_id": name, "title": f"Cluster {name}", "page": 1,
            "text": f"The cluster {name} starts with the command gw start {name} r{revision}."}


def question(name: str) -> str:
    return f"How do I start the cluster {name}?"


def answer_from_passages(request: dict) -> str:
    """The scripted LLM: the passage sentence it was sent, with its cite id."""
    prompt = request["messages"][-1]["content"]
    found, cite = _REVISION_RE.search(prompt), _CITE_RE.search(prompt)
    if found is None or cite is None:
        return "NOT_IN_CONTEXT"
    name, revision = found.groups()
    return f"The cluster {name} starts with the command gw start {name} r{revision}. [{cite.group(1)}]"


def revision_of(answer: str) -> int:
    found = _REVISION_RE.search(answer)
    if found is None:
        raise RuntimeError(f"answer names no revision: {answer!r}")
    return int(found.group(2))


class Documents:
    """The revision of each document last acknowledged by /v1/ingest; ingests of one document are serialised."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.acked = dict.fromkeys(DOCS, 0)
        self._locks = {name: threading.Lock() for name in DOCS}

    def ingest_next(self, name: str) -> None:
        with self._locks[name]:
            revision = self.acked[name] + 1
            response = self.client.post("/v1/ingest", json={"documents": [document(name, revision)]})
            response.raise_for_status()
            self.acked[name] = revision


def generate(client: httpx.Client, name: str) -> tuple[bool, int]:
    response = client.post("/v1/generate", json={"question": question(name), "doc_ids": [name]})
    response.raise_for_status()
    body = response.json()
    return bool(body["cached"]), revision_of(body["answer"])


def load_phase(client: httpx.Client, docs: Documents, args: argparse.Namespace) -> Counter[str]:
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    rng = random.Random(args.seed)
    plan = [(rng.choice(DOCS), False) for _ in range(args.generates)]
    for at in range(len(plan) - len(plan) % args.ingest_every, 0, -args.ingest_every):
        plan.insert(at, (rng.choice(DOCS), True))  # an ingest after every ingest_every generates

    def one(step: tuple[str, bool]) -> None:
        name, is_ingest = step
        if is_ingest:
            docs.ingest_next(name)
            with lock:
                counts["ingests"] += 1
            return
        seen = docs.acked[name]
        cached, revision = generate(client, name)
        with lock:
            counts["generates"] += 1
            counts["cached"] += cached
            counts["stale_hits"] += cached and revision < seen
            counts["stale_fresh"] += (not cached) and revision < seen

    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(one, plan))
    for name in DOCS:  # at rest: is any document served an answer from superseded text?
        cached, revision = generate(client, name)
        counts["stale_at_rest"] += cached and revision < docs.acked[name]
    return counts


def targeted_phase(client: httpx.Client, docs: Documents, args: argparse.Namespace) -> Counter[str]:
    """A generate and an ingest of the same document, sent together; then the identical question again."""
    counts: Counter[str] = Counter()
    rng = random.Random(args.seed + 1)
    name = DOCS[0]
    with ThreadPoolExecutor(2) as pool:
        for _ in range(args.attempts):
            racing = pool.submit(generate, client, name)
            time.sleep(rng.uniform(0.0, args.jitter_ms / 1000.0))
            pool.submit(docs.ingest_next, name).result()
            racing.result()
            cached, revision = generate(client, name)
            counts["attempts"] += 1
            counts["stale_servable"] += cached and revision < docs.acked[name]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--generates", type=int, default=600, help="generates in the load phase")
    parser.add_argument("--ingest-every", type=int, default=5, help="an ingest after every n generates")
    parser.add_argument("--attempts", type=int, default=200, help="targeted races after the load")
    parser.add_argument("--jitter-ms", type=float, default=20.0, help="targeted: ingest sent 0..this after the generate")
    parser.add_argument("--read-delay-ms", type=float, default=0.0, help="server sleeps this after each chunk read")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import groundwire

    print(f"groundwire from {Path(groundwire.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as llm:
        llm.responder = answer_from_passages
        port = free_port()
        env = {**os.environ, "GROUNDWIRE_CONFIG": "", "HF_HUB_OFFLINE": "1", "GROUNDWIRE_LLM_BASE_URL": llm.url,
               "GROUNDWIRE_LLM_MODEL": "scripted", "GROUNDWIRE_LLM_API_KEY": "unused", "GROUNDWIRE_LLM_MAX_RETRIES": "0"}
        env.pop("GROUNDWIRE_API_KEYS", None)
        log = Path(tmp, "server.log")
        command = [sys.executable, "-c", _LAUNCH, str(args.read_delay_ms), "serve", "--host", "127.0.0.1",
                   "--port", str(port), "--db", str(Path(tmp, "gw.db")), "--scorer", "lexical", "--llm",
                   "--log-level", "warning"]
        with log.open("wb") as out:
            server = subprocess.Popen(command, cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120.0,
                              limits=httpx.Limits(max_connections=args.clients + 4)) as client:
                wait_ready(client, server, log)
                docs = Documents(client)
                for name in DOCS:
                    docs.ingest_next(name)
                    generate(client, name)  # loads the embedding model before the clock matters
                started = time.perf_counter()
                load = load_phase(client, docs, args)
                targeted = targeted_phase(client, docs, args)
                elapsed = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
    report(load, targeted, args, elapsed)


def wait_ready(client: httpx.Client, server: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(1800):
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode}:\n{log.read_text()}")
        try:
            if client.get("/healthz", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server did not become ready:\n{log.read_text()}")


def report(load: Counter[str], targeted: Counter[str], args: argparse.Namespace, elapsed: float) -> None:
    generates, attempts = load["generates"], targeted["attempts"]
    print(f"load: {args.clients} clients, {generates} generates ({load['cached']} cached), {load['ingests']} ingests; "
          f"server read delay {args.read_delay_ms:g} ms; {elapsed:.0f} s")
    print(f"(a) stale hits (cached answer older than the revision acknowledged before the request): "
          f"{load['stale_hits']} / {generates} = {load['stale_hits'] / max(generates, 1):.2%}")
    print(f"    fresh answers built from old text (should be 0): {load['stale_fresh']}")
    print(f"(b) stale servable entries after the load: {load['stale_at_rest']} / {len(DOCS)} documents")
    print(f"(b) stale servable entries after targeted races: {targeted['stale_servable']} / {attempts} = "
          f"{targeted['stale_servable'] / max(attempts, 1):.2%}")


if __name__ == "__main__":
    main()
