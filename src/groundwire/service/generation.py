"""/v1/generate: grounded generation behind the semantic cache.

A cached answer is served only for the same scope and document-set version (and a query at
or above the cache's similarity threshold); only delivered, non-fallback answers are stored.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from groundwire.foundation.types import Chunk, Report
from groundwire.llm.generate import Generator
from groundwire.pipeline import Checker
from groundwire.service import models
from groundwire.service.runtime import Runtime


@dataclass(frozen=True, slots=True)
class _Cached:
    """What the semantic cache keeps of a delivered answer."""

    response: models.GenerateResponse
    chunks: list[dict[str, object]]
    report: Report


def generate(runtime: Runtime, body: models.GenerateRequest, *, scope: str) -> models.GenerateResponse:
    client = runtime.require_llm("/v1/generate")
    started = time.perf_counter()
    chunks, context = runtime.context(body, runtime.sent(body), scope=scope)
    doc_version = _doc_version(chunks)
    hit = runtime.cache.get(body.question, scope=scope, doc_version=doc_version) if body.use_cache else None
    if hit is not None:
        cached: _Cached = hit.response
        stored = cached.response
        response = stored.model_copy(update={
            "request_id": uuid.uuid4().hex, "cached": True,
            "detail": {**stored.detail, "cache": {"similarity": hit.similarity, "matched_query": hit.query}}})
        # The log keeps the cached body in its key order with the new request id last, as it always has.
        logged = {**_logged_body(response, cached.chunks), "request_id": response.request_id}
        _log(runtime, cached.report, response, logged, scope=scope, context=context, body=body, chunks=chunks,
             started=started)
        return response

    generator = Generator.from_config(runtime.config, client=client, checker=Checker(runtime.verifier_for(scope)))
    generation = generator.generate(body.question, chunks)
    detail = generation.to_dict()
    report_dict = detail.pop("report")
    request_id = uuid.uuid4().hex
    response = models.GenerateResponse(
        request_id=request_id, answer=generation.answer, cached=False, report=report_dict,
        review=runtime.review(request_id, body.question, generation.answer, score=generation.report.score,
                              route=generation.report.route, findings=[f.check for f in generation.report.findings]),
        detail=detail)
    shown = models.chunks_json(generation.chunks)
    logged = {"request_id": response.request_id, **_logged_body(response, shown)}
    _log(runtime, generation.report, response, logged, scope=scope, context=context, body=body, chunks=chunks,
         started=started)
    if generation.outcome.action in ("accept", "disclaim") and not generation.fallback:
        runtime.cache.put(body.question, _Cached(response, shown, generation.report), scope=scope,
                          doc_version=doc_version, doc_ids={c.doc_id or c.id for c in chunks})
    return response


def _logged_body(response: models.GenerateResponse, shown: list[dict[str, object]]) -> dict[str, object]:
    """The response as the request log keeps it, without its request id: the log also keeps the chunks the answer
    was built from (which the response leaves out), before `detail`."""
    dumped = response.model_dump(exclude={"request_id"})
    detail = dumped.pop("detail")
    return {**dumped, "chunks": shown, "detail": detail}


def _log(runtime: Runtime, report: Report, response: models.GenerateResponse, logged: dict[str, object], *,
         scope: str, context: str, body: models.GenerateRequest, chunks: Sequence[Chunk], started: float) -> None:
    runtime.log(report, logged, kind="generate", scope=scope, context=context, body=body, chunks=chunks,
                started=started, response=response.answer,
                extra={"cached": response.cached, "model_escalations": response.detail.get("escalations", []),
                       "attempts": len(response.detail.get("attempts", []))})


def _doc_version(chunks: Sequence[Chunk]) -> str:
    """The version of exactly the chunks the answer is built from, taken from the same read.

    A second read (the store's document version) could see an ingest that committed after the chunks were read
    and file an answer built from the old text under the new version. Ingesting unrelated documents leaves the
    hash, and so cached answers over these chunks, as they are."""
    digest = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        digest.update(f"{chunk.id}\x1f{chunk.text}\x1e".encode())
    return "chunks:" + digest.hexdigest()
