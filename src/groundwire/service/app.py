"""The FastAPI app factory: the service's state, middleware and error handlers; the routes are in routes/, the work
in actions.py, generation.py and history.py."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.llm.errors import LLMError
from groundwire.redact import register_secret
from groundwire.service import models, observability
from groundwire.service.docs import install_docs
from groundwire.service.errors import error_response, install_error_handlers
from groundwire.service.failures import FailureLog
from groundwire.service.head import HeadAsGet
from groundwire.service.limits import BodySizeLimit, RefuseContentEncoding, SecurityHeaders
from groundwire.service.looplag import LoopLag, margin_cap
from groundwire.service.ratelimit import RateLimiter
from groundwire.service.routes import ROUTERS
from groundwire.service.routes.pages import STATIC
from groundwire.service.runtime import Runtime
from groundwire.service.settings import ServiceSettings
from groundwire.service.workers import RefusalPace, WorkerPool, default_workers
from groundwire.version import __version__

_log = logging.getLogger("groundwire.service")

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
    # A check past its time budget is answered the loop's lag before the deadline, so that it arrives by it.
    pool = WorkerPool(settings.workers or default_workers(), settings.max_waiting, reserved=settings.reserved_workers,
                      max_waiting_per_scope=settings.waiting_places_per_scope,
                      lag=LoopLag(cap_s=margin_cap(settings.time_budget_s)))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runtime.start()
        pool.lag.start()
        yield
        await pool.lag.stop()
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
    app.state.refusal_pace = RefusalPace(settings.refusal_rate)
    app.state.pool = pool
    install_error_handlers(app)

    @app.exception_handler(InputError)
    async def _input_error(_: Request, exc: InputError) -> Any:
        return error_response(exc.code, str(exc))

    @app.exception_handler(LLMError)
    async def _llm_error(_: Request, exc: LLMError) -> Any:
        # The configured LLM endpoint failed (after its retries): a bad gateway, not our bug. Its message names the
        # endpoint's address and may quote its reply: the operator reads it in the service log, a caller the kind.
        _log.warning("the LLM endpoint failed: %s", exc)
        return error_response(ErrorCode.LLM_UNAVAILABLE, f"The LLM endpoint failed ({exc.kind}); the service log "
                              "says why.")

    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes, timeout_s=settings.body_timeout_s)
    app.add_middleware(RefuseContentEncoding)  # before the size limit: a gzip body is refused whatever its size
    app.add_middleware(FailureLog, runtime=runtime)  # outside the size limit, so its 413s are logged too
    app.add_middleware(SecurityHeaders)
    app.add_middleware(HeadAsGet)  # outside the failure log, which reads the error bodies a HEAD does not send
    observability.install(app, runtime.metrics)
    runtime.metrics.watch_pool(pool)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    install_docs(app)
    # The routes; those on the worker pool say so themselves, and are refused at once when it is full, before their
    # body is parsed, and stopped at their time budget or when their client goes (service/routing.py).
    for router in ROUTERS:
        app.include_router(router)
    return app
