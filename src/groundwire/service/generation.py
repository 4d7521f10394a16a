"""/v1/generate: grounded generation behind the semantic cache.

A cached answer is served only for the same scope and document-set version (and a query at
or above the cache's similarity threshold); only delivered, non-fallback answers are stored.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Sequence
from typing import Any

from groundwire.service import models
from groundwire.service.runtime import Runtime, chunk_dict
from groundwire.core.types import Chunk, Report
from groundwire.llm.generate import Generator
from groundwire.pipeline import Checker


def generate(runtime: Runtime, body: models.GenerateRequest, *, scope: str) -> dict[str, Any]:
    client = runtime.require_llm("/v1/generate")
    started = time.perf_counter()
    chunks, context = runtime.context(body, scope=scope)
    doc_version = _doc_version(chunks)
    hit = runtime.cache.get(body.question, scope=scope, doc_version=doc_version) if body.use_cache else None
    if hit is not None:
        stored, report = hit.response
        out = {**stored, "request_id": uuid.uuid4().hex, "cached": True,
               "detail": {**stored["detail"], "cache": {"similarity": hit.similarity, "matched_query": hit.query}}}
        _log(runtime, report, out, scope=scope, context=context, body=body, chunks=chunks, started=started)
        return out

    generator = Generator.from_config(runtime.config, client=client, checker=Checker(runtime.verifier))
    generation = generator.generate(body.question, chunks)
    detail = generation.to_dict()
    report_dict = detail.pop("report")
    out = {"request_id": uuid.uuid4().hex, "answer": generation.answer, "cached": False, "report": report_dict,
           "review": runtime.review(generation.report.score, body.question, generation.answer,
                                   findings=[f.check for f in generation.report.findings]),
           "chunks": [chunk_dict(c) for c in generation.chunks], "detail": detail}
    _log(runtime, generation.report, out, scope=scope, context=context, body=body, chunks=chunks, started=started)
    if generation.outcome.action in ("accept", "disclaim") and not generation.fallback:
        stored = {k: v for k, v in out.items() if k != "request_id"}
        runtime.cache.put(body.question, (stored, generation.report), scope=scope, doc_version=doc_version,
                          doc_ids={c.doc_id or c.id for c in chunks})
    return out


def _log(runtime: Runtime, report: Report, out: dict[str, Any], *, scope: str, context: str,
         body: models.GenerateRequest, chunks: Sequence[Chunk], started: float) -> None:
    runtime.log(report, out, kind="generate", scope=scope, context=context, body=body, chunks=chunks,
                started=started, response=out["answer"],
                extra={"cached": out["cached"], "model_escalations": out["detail"].get("escalations", []),
                       "attempts": len(out["detail"].get("attempts", []))})


def _doc_version(chunks: Sequence[Chunk]) -> str:
    """The version of exactly the chunks the answer is built from, taken from the same read.

    A second read (the store's document version) could see an ingest that committed after the chunks were read
    and file an answer built from the old text under the new version. Ingesting unrelated documents leaves the
    hash, and so cached answers over these chunks, as they are."""
    digest = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        digest.update(f"{chunk.id}\x1f{chunk.text}\x1e".encode())
    return "chunks:" + digest.hexdigest()
