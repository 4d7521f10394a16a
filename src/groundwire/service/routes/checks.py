"""Checks of an answer: verify, repair and grounded generation, each on the worker pool."""

from __future__ import annotations

from fastapi import Depends, Request

from groundwire.service import actions, generation, models
from groundwire.service.auth import caller_scope
from groundwire.service.failures import accept
from groundwire.service.routing import on_the_pool, service_router, service_runtime, worker_pool
from groundwire.service.runtime import Runtime
from groundwire.service.settings import ServiceSettings
from groundwire.service.workers import WorkerPool

router = service_router()


def _repair_may_be_small(settings: ServiceSettings) -> bool:
    return not settings.use_llm  # --llm: repair edits with the LLM


@router.post("/v1/verify", response_model=models.VerifyResponse, tags=["verify"])
@on_the_pool(may_be_small=True)
async def verify(request: Request, body: models.VerifyRequest, scope: str = Depends(caller_scope),
                 runtime: Runtime = Depends(service_runtime),
                 pool: WorkerPool = Depends(worker_pool)) -> models.VerifyResponse:
    accept(request, "verify", body)  # failing later for a cause not its own, it is logged for review
    small = runtime.looks_small(body)
    return await pool.run_sized(scope, small, actions.verify, runtime, body, scope=scope)


@router.post("/v1/repair", response_model=models.RepairResponse, tags=["verify"])
@on_the_pool(may_be_small=_repair_may_be_small)
async def repair(request: Request, body: models.RepairRequest, scope: str = Depends(caller_scope),
                 runtime: Runtime = Depends(service_runtime),
                 pool: WorkerPool = Depends(worker_pool)) -> models.RepairResponse:
    accept(request, "repair", body)
    small = runtime.looks_small(body, calls_llm=runtime.llm is not None)  # --llm: repair edits with the LLM
    return await pool.run_sized(scope, small, actions.repair, runtime, body, scope=scope)


@router.post("/v1/generate", response_model=models.GenerateResponse, tags=["generate"])
@on_the_pool()
async def generate(body: models.GenerateRequest, scope: str = Depends(caller_scope),
                   runtime: Runtime = Depends(service_runtime),
                   pool: WorkerPool = Depends(worker_pool)) -> models.GenerateResponse:
    return await pool.run(scope, generation.generate, runtime, body, scope=scope)
