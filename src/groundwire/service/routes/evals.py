"""The eval loop over the request log: the dashboard's metrics, a recorded run, and the HTML report. The eval loop
re-runs the verifier over up to `limit` logged requests: a check's work, on the same pool."""

from __future__ import annotations

import json

from fastapi import Depends, Query, Request
from fastapi.responses import HTMLResponse

from groundwire.foundation.errors import ErrorCode
from groundwire.service import history, models
from groundwire.service.auth import caller_scope, writer_scope
from groundwire.service.errors import ServiceError
from groundwire.service.routing import on_the_pool, service_router, service_runtime, worker_pool
from groundwire.service.runtime import Runtime
from groundwire.service.workers import WorkerPool

router = service_router()


async def no_body(request: Request) -> None:
    """A dependency: 422 for a request that sends a body other than none or `{}` (a route whose options are all in
    its query, which would otherwise ignore a body and answer 200, as if it had been read)."""
    raw = await request.body()
    if not raw:
        return
    try:
        sent = json.loads(raw)
    except ValueError:  # not JSON, or not UTF-8
        sent = None
    if sent != {}:
        raise ServiceError(ErrorCode.INVALID_REQUEST,
                           f"{request.method} {request.url.path} takes no body: send none, or {{}} (its one option "
                           "is the query parameter `limit`).", details={"body_bytes": len(raw)})


@router.get("/v1/eval", response_model=models.EvalSummary, tags=["eval"])
@on_the_pool()
async def eval_dashboard(scope: str = Depends(caller_scope), limit: int = Query(500, ge=1, le=10_000),
                         runtime: Runtime = Depends(service_runtime),
                         pool: WorkerPool = Depends(worker_pool)) -> models.EvalSummary:
    """Eval-loop metrics over a rolling sample of your scope's request log (nothing is recorded)."""
    return await pool.run_with_reserve(scope, history.eval_reserve_s(runtime.settings), history.eval_summary, runtime,
                                       scope=scope, limit=limit)


@router.post("/v1/eval/runs", response_model=models.EvalSummary, tags=["eval"])
@on_the_pool()
async def record_eval_run(scope: str = Depends(writer_scope), limit: int = Query(500, ge=1, le=10_000),
                          runtime: Runtime = Depends(service_runtime),
                          pool: WorkerPool = Depends(worker_pool), _: None = Depends(no_body)) -> models.EvalSummary:
    """Run the eval loop and record the run in the history the dashboard plots. It takes no body (422 for one other
    than none or `{}`)."""
    return await pool.run_with_reserve(scope, history.eval_reserve_s(runtime.settings), history.eval_summary, runtime,
                                       scope=scope, limit=limit, save=True)


@router.get("/v1/eval/report", tags=["eval"], response_class=HTMLResponse)
@on_the_pool()
async def eval_report(scope: str = Depends(caller_scope), limit: int = Query(500, ge=1, le=10_000),
                      runtime: Runtime = Depends(service_runtime),
                      pool: WorkerPool = Depends(worker_pool)) -> HTMLResponse:
    """The eval loop's self-contained HTML report (plots over time, tables per release and segment)."""
    return HTMLResponse(await pool.run_with_reserve(scope, history.eval_reserve_s(runtime.settings), history.eval_report,
                                                    runtime, scope=scope, limit=limit))
