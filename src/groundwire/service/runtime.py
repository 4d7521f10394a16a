"""What the service does per request, independent of HTTP: verify, repair, generate, ingest, log.

One Runtime per app. It holds the things that must exist once per process (the verifier
model, the store, the cache) and writes one request-log row per request, committed before
the response is sent, so a client that got a request id can always look it up later.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from groundwire.service import models
from groundwire.service.errors import ServiceError
from groundwire.service.review import review_reasons
from groundwire.service.settings import ServiceSettings
from groundwire.types import Chunk, Report

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.store import RequestRecord, Store


class Runtime:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.model_loads = 0
        self._verifier: Any = None
        self._store: Store | None = None
        self._lock = threading.Lock()
        # Request threads share one verifier, and not every part of it is thread-safe (pysbd's segmenter
        # keeps per-call state on the instance), so verification is serialised. The log writes are not.
        self._verify_lock = threading.Lock()

    # lifecycle --------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and open the store; called once when the app starts."""
        with self._lock:
            if self._verifier is None:
                from groundwire import Verifier

                self._verifier = Verifier(self.settings.scorer, accept_at=self.settings.accept_at,
                                          reject_at=self.settings.reject_at)
                self.model_loads += 1
            if self._store is None:
                from groundwire.store import Store

                self._store = Store(self.settings.db_url)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def verifier(self) -> Any:
        if self._verifier is None:
            raise ServiceError(503, "not_ready", "The service is still starting; retry in a moment.")
        return self._verifier

    @property
    def store(self) -> Store:
        if self._store is None:
            raise ServiceError(503, "not_ready", "The service is still starting; retry in a moment.")
        return self._store

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "model_id": getattr(self._verifier, "model_id", None),
            "model_loads": self.model_loads,
            "release": self.settings.release,
            "store": self.store.engine.dialect.name,
        }

    # verify and repair ------------------------------------------------------------------------------------

    def verify(self, body: models.VerifyRequest, *, scope: str) -> dict[str, Any]:
        started = time.perf_counter()
        chunks, context = self._context(body, scope=scope)
        report = self._verify(body.answer, chunks, question=body.question, require_citations=body.require_citations)
        request_id = uuid.uuid4().hex
        review = self._review(report.score, body.question, body.answer)
        out = {"request_id": request_id, "report": report.to_dict(), "review": review,
               "chunks": [_chunk_dict(c) for c in chunks]}
        self._log(report, out, kind="verify", scope=scope, context=context, body=body, chunks=chunks,
                  started=started)
        return out

    def _verify(self, answer: str, chunks: Sequence[Chunk], *, question: str | None,
                require_citations: bool) -> Report:
        verifier = self.verifier
        with self._verify_lock:
            return verifier.verify(answer, chunks, question=question, require_citations=require_citations)

    # the context ------------------------------------------------------------------------------------------

    def _context(self, body: models.VerifyRequest | models.GenerateRequest, *, scope: str) -> tuple[list[Chunk], str]:
        """The chunks to check against, and the context as it is logged."""
        if body.chunks is not None:
            chunks = [Chunk(id=c.id, text=c.text, doc_id=c.doc_id, page=c.page, type=c.type) for c in body.chunks]
            # Logged exactly as the caller sent it.
            sent = [c.model_dump(exclude_unset=True) for c in body.chunks]
            return chunks, json.dumps(sent, ensure_ascii=False)
        from groundwire.provenance import render_context

        doc_ids = list(dict.fromkeys(body.doc_ids or ()))
        found = self.store.passages(scope=scope, doc_ids=doc_ids)
        missing = sorted(set(doc_ids) - {p.doc_id for p in found})
        if missing:
            # Another scope's documents look exactly like documents that do not exist.
            raise ServiceError(404, "document_not_found", "No ingested document with these ids in your scope.",
                               details={"doc_ids": missing})
        return [p.as_chunk() for p in found], render_context(found)

    # documents --------------------------------------------------------------------------------------------

    def ingest(self, body: models.IngestRequest, *, scope: str) -> dict[str, Any]:
        from groundwire.provenance import Document

        documents = [Document(doc_id=d.doc_id, title=d.title, text=d.text, page=d.page, type=d.type)
                     for d in body.documents]
        result = self.store.ingest(documents, scope=scope)
        invalidated = self._invalidate_cache(scope=scope, doc_ids=result.changed_doc_ids)
        return {
            "doc_set_version": str(result.doc_version),
            "chunks": [{"id": p.cite_id, "doc_id": p.doc_id, "title": p.title, "page": p.page, "type": p.type,
                        "text": p.text} for p in result.passages],
            "changed_doc_ids": list(result.changed_doc_ids),
            "retired_ids": list(result.retired_ids),
            "cache_invalidated": invalidated,
        }

    def _invalidate_cache(self, *, scope: str, doc_ids: Sequence[str]) -> int:
        return 0

    # the request log --------------------------------------------------------------------------------------

    def _review(self, score: float | None, *texts: str | None) -> dict[str, Any]:
        reasons = review_reasons(score=score, texts=texts, threshold=self.settings.review_threshold,
                                 patterns=self.settings.high_risk_patterns)
        return {"queued": bool(reasons), "reasons": reasons}

    def _log(self, report: Report, out: dict[str, Any], *, kind: str, scope: str, context: str,
             body: models.VerifyRequest | models.GenerateRequest, chunks: Sequence[Chunk], started: float,
             response: str | None = None, model_ids: dict[str, str] | None = None,
             extra: dict[str, Any] | None = None) -> None:
        from groundwire.store import RequestRecord

        scores = {c.id: c.score for c in (body.chunks or ())}
        record = RequestRecord.from_report(
            report,
            scope=scope,
            context=context,
            query=body.question,
            response=response,
            retrieved=[(c.id, scores.get(c.id)) for c in chunks],
            kind=kind,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            model_ids=model_ids if model_ids is not None else {"scorer": report.model_id},
            release=self.settings.release,
            # The whole response body, so the page can show a logged request exactly as it was answered.
            extra={"body": out, **(extra or {})},
        )
        self.store.log_request(_with_id(record, out["request_id"]))

    def list_requests(self, *, scope: str, limit: int) -> list[dict[str, Any]]:
        return [self._summary(r) for r in self.store.requests(scope=scope, limit=limit)]

    def get_request(self, request_id: str, *, scope: str) -> dict[str, Any] | None:
        record = self.store.get_request(request_id, scope=scope)
        if record is None:
            return None
        feedback = self.store.feedback(request_id, scope=scope)
        return {
            **self._summary(record),
            "context": record.context,
            "retrieved": [{"cite_id": r.cite_id, "score": r.score} for r in record.retrieved],
            "claims": [_claim_log(c) for c in record.claims],
            "escalations": record.escalations,
            "refused": record.refused,
            "latency_ms": record.latency_ms,
            "model_ids": record.model_ids,
            "release": record.release,
            "response_text": record.response,
            "response": record.extra.get("body"),
            "feedback": [{"id": f.id, "thumbs": f.thumbs, "correction": f.correction,
                          "created_at": f.created_at.isoformat()} for f in feedback],
        }

    def _summary(self, record: RequestRecord) -> dict[str, Any]:
        body = record.extra.get("body") or {}
        answer = (body.get("report") or {}).get("answer", record.response)
        return {
            "request_id": record.id,
            "created_at": record.created_at.isoformat() if record.created_at else None,
            "endpoint": record.kind,
            "question": record.query,
            "answer": answer,
            "score": record.answer_score,
            "decision": record.route,
            "review": self._review(record.answer_score, record.query, answer),
        }

    def review_queue(self, *, scope: str, limit: int) -> dict[str, Any]:
        flagged = [s for s in self.list_requests(scope=scope, limit=limit) if s["review"]["queued"]]
        # Feedback from a person takes a request out of the queue.
        items = [s for s in flagged if not self.store.feedback(s["request_id"], scope=scope)]
        return {"threshold": self.settings.review_threshold,
                "patterns": list(self.settings.high_risk_patterns), "items": items}

    def feedback(self, body: models.FeedbackRequest, *, scope: str) -> dict[str, Any]:
        if self.store.get_request(body.request_id, scope=scope) is None:
            raise ServiceError(404, "request_not_found", f"No request {body.request_id!r} in your scope.")
        thumbs = {"up": 1, "down": -1, None: None}[body.thumbs]
        feedback_id = self.store.add_feedback(body.request_id, scope=scope, thumbs=thumbs, correction=body.correction)
        return {"feedback_id": str(feedback_id), "request_id": body.request_id}

    # not yet wired ----------------------------------------------------------------------------------------

    def repair(self, body: models.RepairRequest, *, scope: str) -> dict[str, Any]:
        raise ServiceError(501, "not_implemented", "repair is not wired yet")

    def generate(self, body: models.GenerateRequest, *, scope: str) -> dict[str, Any]:
        raise ServiceError(501, "not_implemented", "generate is not wired yet")


    def eval_summary(self, *, scope: str, limit: int) -> dict[str, Any]:
        raise ServiceError(501, "not_implemented", "eval is not wired yet")


def _with_id(record: RequestRecord, request_id: str) -> RequestRecord:
    from dataclasses import replace

    return replace(record, id=request_id)


def _chunk_dict(chunk: Chunk) -> dict[str, Any]:
    return {"id": chunk.id, "text": chunk.text, "doc_id": chunk.doc_id, "page": chunk.page, "type": chunk.type}


def _claim_log(claim: Any) -> dict[str, Any]:
    return {"text": claim.text, "verdict": claim.verdict, "score": claim.score, "chunk_id": claim.chunk_id,
            "route": claim.route, "decided_by": claim.decided_by}
