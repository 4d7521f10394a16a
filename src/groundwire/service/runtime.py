"""What the service does per request, independent of HTTP: verify, repair, generate, ingest, log.

One Runtime per app. It holds the things that must exist once per process (the verifier
model, the store, the cache) and writes one request-log row per request, committed before
the response is sent, so a client that got a request id can always look it up later.
"""

from __future__ import annotations

import hashlib
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
    from groundwire.cache import SemanticCache
    from groundwire.config import Config
    from groundwire.llm import LLMClient
    from groundwire.store import RequestRecord, Store


class Runtime:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.model_loads = 0
        self._verifier: Any = None
        self._store: Store | None = None
        self._client: LLMClient | None = None
        self._config: Config | None = None
        self.cache: SemanticCache | None = None
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

                loaded = Verifier(self.settings.scorer, accept_at=self.settings.accept_at,
                                  reject_at=self.settings.reject_at)
                self._verifier = _SerialVerifier(loaded, self._verify_lock)
                self.model_loads += 1
            if self._store is None:
                from groundwire.store import Store

                self._store = Store(self.settings.db_url)
            if self._config is None:
                from groundwire.config import Config

                self._config = self.settings.config if self.settings.config is not None else Config()
            if self.settings.use_llm and self._client is None:
                from groundwire.llm import client_from_config

                self._client = client_from_config(self._config)
            if self.cache is None:
                from groundwire.cache import SemanticCache

                # The embedding model loads on the first /v1/generate, not at start-up.
                self.cache = SemanticCache(threshold=self.settings.cache_threshold)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
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
        return self.verifier.verify(answer, chunks, question=question, require_citations=require_citations)

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
        return self._cache().invalidate(scope=scope, doc_ids=doc_ids) if doc_ids else 0

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
        records = self.store.requests(scope=scope, limit=limit)
        feedback = self.store.feedback_summary([r.id for r in records if r.id], scope=scope)
        out = []
        for record in records:
            given = feedback.get(record.id or "")
            out.append({**self._summary(record), "feedback": None if given is None else {
                "up": given.up, "down": given.down, "corrections": given.corrections}})
        return out

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
        # Feedback from a person takes a request out of the queue.
        items = [s for s in self.list_requests(scope=scope, limit=limit)
                 if s["review"]["queued"] and s["feedback"] is None]
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
        from groundwire.repair import repair

        started = time.perf_counter()
        chunks, context = self._context(body, scope=scope)
        report = self._verify(body.answer, chunks, question=body.question, require_citations=body.require_citations)
        config = self._config_or_default()
        # Without --llm the middle band is dropped rather than edited: repair still works offline.
        repaired = repair(report, chunks, verifier=self.verifier, client=self._client,
                          min_surviving_share=config.repair.min_surviving_share,
                          abstain_message=config.repair.abstain_message)
        request_id = uuid.uuid4().hex
        out = {"request_id": request_id, "report": report.to_dict(),
               "review": self._review(report.score, body.question, body.answer),
               "chunks": [_chunk_dict(c) for c in chunks],
               "repaired": {**repaired.to_dict(), "summary": _repair_summary(repaired)}}
        self._log(report, out, kind="repair", scope=scope, context=context, body=body, chunks=chunks,
                  started=started, response=repaired.answer, model_ids=self._model_ids(report),
                  extra={"repaired_score": repaired.report.score, "repair_abstained": repaired.abstained})
        return out

    def generate(self, body: models.GenerateRequest, *, scope: str) -> dict[str, Any]:
        from groundwire.generate import Generator

        if self._client is None:
            raise ServiceError(503, "llm_not_configured",
                               "/v1/generate needs an LLM endpoint: start the service with --llm and set [llm] "
                               "in groundwire.toml (or GROUNDWIRE_LLM_BASE_URL).")
        started = time.perf_counter()
        chunks, context = self._context(body, scope=scope)
        doc_version = self._doc_version(body, chunks, scope=scope)
        cache = self._cache()
        hit = cache.get(body.question, scope=scope, doc_version=doc_version) if body.use_cache else None
        if hit is not None:
            stored, report = hit.response
            out = {**stored, "request_id": uuid.uuid4().hex, "cached": True,
                   "detail": {**stored["detail"], "cache": {"similarity": hit.similarity, "matched_query": hit.query}}}
            self._log_generation(report, out, scope=scope, context=context, body=body, chunks=chunks,
                                 started=started)
            return out
        generator = Generator.from_config(self._config_or_default(), client=self._client, verifier=self.verifier)
        generation = generator.generate(body.question, chunks)
        detail = generation.to_dict()
        report = detail.pop("report")
        out = {"request_id": uuid.uuid4().hex, "answer": generation.answer, "cached": False, "report": report,
               "review": self._review(generation.report.score, body.question, generation.answer),
               "chunks": [_chunk_dict(c) for c in generation.chunks], "detail": detail}
        self._log_generation(generation.report, out, scope=scope, context=context, body=body, chunks=chunks,
                             started=started)
        if generation.outcome.action in ("accept", "disclaim") and not generation.fallback:
            stored = {k: v for k, v in out.items() if k != "request_id"}
            cache.put(body.question, (stored, generation.report), scope=scope, doc_version=doc_version,
                      doc_ids={c.doc_id or c.id for c in chunks})
        return out

    def _log_generation(self, report: Report, out: dict[str, Any], *, scope: str, context: str,
                        body: models.GenerateRequest, chunks: Sequence[Chunk], started: float) -> None:
        escalations = out["detail"].get("escalations", [])
        self._log(report, out, kind="generate", scope=scope, context=context, body=body, chunks=chunks,
                  started=started, response=out["answer"], model_ids=self._model_ids(report),
                  extra={"cached": out["cached"], "model_escalations": escalations,
                         "attempts": len(out["detail"].get("attempts", []))})

    def _doc_version(self, body: models.GenerateRequest, chunks: Sequence[Chunk], *, scope: str) -> str:
        if body.doc_ids is not None:
            return f"store:{self.store.doc_version(scope=scope)}"
        # Caller-supplied chunks: the document set is exactly these texts, so its version is their hash.
        digest = hashlib.blake2b(digest_size=16)
        for chunk in chunks:
            digest.update(f"{chunk.id}\x1f{chunk.text}\x1e".encode())
        return "chunks:" + digest.hexdigest()

    def _cache(self) -> SemanticCache:
        if self.cache is None:
            raise ServiceError(503, "not_ready", "The service is still starting; retry in a moment.")
        return self.cache

    def _config_or_default(self) -> Config:
        if self._config is None:
            raise ServiceError(503, "not_ready", "The service is still starting; retry in a moment.")
        return self._config

    def _model_ids(self, report: Report) -> dict[str, str]:
        ids = {"scorer": report.model_id}
        if self._client is not None:
            ids["llm"] = self._client.model
        return ids


    # the eval loop --------------------------------------------------------------------------------------

    def eval_loop(self, *, scope: str, sample_size: int, save: bool) -> Any:
        """The eval loop over a rolling sample of this scope's log (and this scope's corpus only)."""
        from groundwire.evalloop import run_eval_loop

        return run_eval_loop(verifier=self.verifier, store=self.store, scope=scope, sample_size=sample_size,
                             release=self.settings.release, save=save)

    def eval_summary(self, *, scope: str, limit: int, save: bool = False) -> dict[str, Any]:
        result = self.eval_loop(scope=scope, sample_size=limit, save=save)
        rolling = result.rolling or {}
        overall = dict(rolling.get("overall") or {})
        failures = overall.pop("failures", {}) or {}
        metrics = {**overall, **{f"failures_{name}": count for name, count in failures.items()}}
        recent = self.store.requests(scope=scope, limit=min(limit, 200))
        return {
            "metrics": metrics,
            "releases": [{"release": name, **_flat(values)} for name, values in rolling.get("by_release", {}).items()],
            "segments": [{"segment": name, **_flat(values)} for name, values in rolling.get("by_segment", {}).items()],
            "by_day": rolling.get("by_day", {}),
            "series": [{"created_at": r.created_at.isoformat() if r.created_at else None, "score": r.answer_score}
                       for r in reversed(recent) if r.answer_score is not None],
            "failure_examples": rolling.get("failure_examples", []),
            "history": result.history,
            "meta": result.meta,
        }


class _SerialVerifier:
    """The shared verifier with its verify() calls serialised; everything else passes through."""

    def __init__(self, verifier: Any, lock: threading.Lock) -> None:
        self._inner = verifier
        self._lock = lock

    def verify(self, *args: Any, **kwargs: Any) -> Report:
        with self._lock:
            return self._inner.verify(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _repair_summary(repaired: Any) -> str:
    counts: dict[str, int] = {}
    for action in repaired.actions:
        counts[action.action] = counts.get(action.action, 0) + 1
    parts = [f"{n} {name}" for name, n in sorted(counts.items())]
    head = "abstained" if repaired.abstained else f"re-verified score {repaired.report.score:.2f}"
    return f"{head}; claims: {', '.join(parts) or 'none'}"


def _flat(values: dict[str, Any]) -> dict[str, Any]:
    failures = values.get("failures") or {}
    return {**{k: v for k, v in values.items() if k != "failures"},
            **{f"failures_{name}": count for name, count in failures.items()}}


def _with_id(record: RequestRecord, request_id: str) -> RequestRecord:
    from dataclasses import replace

    return replace(record, id=request_id)


def _chunk_dict(chunk: Chunk) -> dict[str, Any]:
    return {"id": chunk.id, "text": chunk.text, "doc_id": chunk.doc_id, "page": chunk.page, "type": chunk.type}


def _claim_log(claim: Any) -> dict[str, Any]:
    return {"text": claim.text, "verdict": claim.verdict, "score": claim.score, "chunk_id": claim.chunk_id,
            "route": claim.route, "decided_by": claim.decided_by}
