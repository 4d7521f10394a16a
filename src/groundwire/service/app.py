"""The FastAPI app factory: routes only. The work is in actions.py, generation.py and history.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.llm.errors import LLMError
from groundwire.redact import register_secret
from groundwire.service import actions, generation, history, models, observability
from groundwire.service.auth import caller_scope, writer_scope
from groundwire.service.cancellation import CancelWhenGone
from groundwire.service.docs import install_docs
from groundwire.service.errors import ServiceError, error_response, install_error_handlers
from groundwire.service.failures import FailureLog
from groundwire.service.limits import BodySizeLimit, RefuseContentEncoding, SecurityHeaders
from groundwire.service.ratelimit import RateLimiter
from groundwire.service.runtime import Runtime
from groundwire.service.settings import ServiceSettings
from groundwire.service.workers import RefusalPace, RefuseWhenFull, WorkerPool, default_workers
from groundwire.version import __version__

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": models.ErrorResponse}
    for status in (400, 401, 403, 404, 408, 413, 415, 422, 429, 500, 502, 503, 504)
}


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    """Build the service. The verifier model loads once, when the app starts (not per request)."""
    settings = settings if settings is not None else ServiceSettings()
    for key in settings.api_keys:  # no key at rest: redacted, in every spelling, wherever the service writes
        register_secret(key)
    runtime = Runtime(settings)

    # Checks and the eval loop run on the worker pool (service/workers.py): a bounded number at once, a bounded
    # number waiting, and 503 `busy` past that; small checks may also use the reserved workers.
    pool = WorkerPool(settings.workers or default_workers(), settings.max_waiting, reserved=settings.reserved_workers,
                      max_waiting_per_scope=settings.waiting_places_per_scope)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runtime.start()
        yield
        pool.close()
        runtime.close()

    app = FastAPI(
        title="groundwire",
        version=__version__,
        summary="Verify RAG answers against their sources, claim by claim; repair, generate, log and review.",
        lifespan=lifespan,
        responses=_ERRORS,
        docs_url=None,  # served by install_docs, from local assets
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.runtime = runtime
    app.state.rate_limiter = RateLimiter(settings.rate_limit) if settings.rate_limit is not None else None
    # One pace for every refusal under load: the pool's 503 `busy` and the rate limit's 429.
    app.state.refusal_pace = pace = RefusalPace(settings.refusal_rate)
    install_error_handlers(app)

    @app.exception_handler(InputError)
    async def _input_error(_: Request, exc: InputError) -> Any:
        return error_response(exc.code, str(exc))

    @app.exception_handler(LLMError)
    async def _llm_error(_: Request, exc: LLMError) -> Any:
        # The configured LLM endpoint failed (after its retries): a bad gateway, not our bug.
        return error_response(ErrorCode.LLM_UNAVAILABLE, f"The LLM endpoint failed: {exc}")

    # Innermost: a check the pool cannot take is refused before its body is parsed (service/workers.py).
    pooled = {("POST", "/v1/verify"): True, ("POST", "/v1/repair"): not settings.use_llm,
              ("POST", "/v1/generate"): False, ("GET", "/v1/eval"): False, ("POST", "/v1/eval/runs"): False,
              ("GET", "/v1/eval/report"): False}
    app.add_middleware(RefuseWhenFull, pool=pool, settings=settings, pace=pace, routes=pooled)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes, timeout_s=settings.body_timeout_s)
    app.add_middleware(RefuseContentEncoding)  # before the size limit: a gzip body is refused whatever its size
    # The pooled routes' time budget, and their work stopped when the client goes (service/cancellation.py).
    app.add_middleware(CancelWhenGone, routes=pooled.keys(), budget_s=settings.time_budget_s)
    app.add_middleware(FailureLog, runtime=runtime)  # outside the size limit, so its 413s are logged too
    app.add_middleware(SecurityHeaders)
    observability.install(app, runtime.metrics)
    runtime.metrics.watch_pool(pool)
    static = resources.files("groundwire.service") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    install_docs(app)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(str(static / "index.html"))

    @app.get("/healthz", response_model=models.HealthResponse, tags=["service"])
    def healthz() -> models.HealthResponse:
        return runtime.health()

    app.state.pool = pool

    @app.post("/v1/verify", response_model=models.VerifyResponse, tags=["verify"])
    async def verify(body: models.VerifyRequest, scope: str = Depends(caller_scope)) -> models.VerifyResponse:
        small = runtime.looks_small(body)
        return await pool.run_sized(scope, small, actions.verify, runtime, body, scope=scope)

    @app.post("/v1/repair", response_model=models.RepairResponse, tags=["verify"])
    async def repair(body: models.RepairRequest, scope: str = Depends(caller_scope)) -> models.RepairResponse:
        small = runtime.looks_small(body, calls_llm=runtime.llm is not None)  # --llm: repair edits with the LLM
        return await pool.run_sized(scope, small, actions.repair, runtime, body, scope=scope)

    @app.post("/v1/generate", response_model=models.GenerateResponse, tags=["generate"])
    async def generate(body: models.GenerateRequest, scope: str = Depends(caller_scope)) -> models.GenerateResponse:
        return await pool.run(scope, generation.generate, runtime, body, scope=scope)

    @app.post("/v1/ingest", response_model=models.IngestResponse, tags=["documents"])
    def ingest(body: models.IngestRequest, scope: str = Depends(writer_scope)) -> models.IngestResponse:
        return actions.ingest(runtime, body, scope=scope)

    @app.post("/v1/feedback", response_model=models.FeedbackResponse, tags=["log"])
    def feedback(body: models.FeedbackRequest, scope: str = Depends(writer_scope)) -> models.FeedbackResponse:
        return actions.feedback(runtime, body, scope=scope)

    @app.get("/v1/requests", response_model=models.RequestList, tags=["log"])
    def list_requests(scope: str = Depends(caller_scope),
                      limit: int = Query(50, ge=1, le=1000)) -> models.RequestList:
        return models.RequestList(requests=history.list_requests(runtime, scope=scope, limit=limit))

    @app.get("/v1/requests/{request_id}", tags=["log"])
    def get_request(request_id: str, scope: str = Depends(caller_scope)) -> dict[str, Any]:
        entry = history.get_request(runtime, request_id, scope=scope)
        if entry is None:
            # Another scope's id looks exactly like an id that does not exist.
            raise ServiceError(ErrorCode.REQUEST_NOT_FOUND, f"No request {request_id!r} in your scope.")
        return entry

    @app.get("/v1/review", response_model=models.ReviewQueue, tags=["log"])
    def review_queue(scope: str = Depends(caller_scope),
                     limit: int = Query(100, ge=1, le=1000)) -> models.ReviewQueue:
        return history.review_queue(runtime, scope=scope, limit=limit)

    # The eval loop re-runs the verifier over up to `limit` logged requests: a check's work, on the same pool.
    @app.get("/v1/eval", response_model=models.EvalSummary, tags=["eval"])
    async def eval_dashboard(scope: str = Depends(caller_scope),
                             limit: int = Query(500, ge=1, le=10_000)) -> models.EvalSummary:
        """Eval-loop metrics over a rolling sample of your scope's request log (nothing is recorded)."""
        return await pool.run(scope, history.eval_summary, runtime, scope=scope, limit=limit)

    @app.post("/v1/eval/runs", response_model=models.EvalSummary, tags=["eval"])
    async def record_eval_run(scope: str = Depends(writer_scope),
                              limit: int = Query(500, ge=1, le=10_000)) -> models.EvalSummary:
        """Run the eval loop and record the run in the history the dashboard plots."""
        return await pool.run(scope, history.eval_summary, runtime, scope=scope, limit=limit, save=True)

    @app.get("/v1/eval/report", tags=["eval"], response_class=HTMLResponse)
    async def eval_report(scope: str = Depends(caller_scope),
                          limit: int = Query(500, ge=1, le=10_000)) -> HTMLResponse:
        """The eval loop's self-contained HTML report (plots over time, tables per release and segment)."""
        return HTMLResponse(await pool.run(scope, history.eval_report, runtime, scope=scope, limit=limit))

    return app
