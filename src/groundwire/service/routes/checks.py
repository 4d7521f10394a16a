"""Checks of an answer: verify, repair and grounded generation, each on the worker pool."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from pydantic_core import to_json

from groundwire.service import actions, generation, models
from groundwire.service.auth import caller_scope
from groundwire.service.failures import accept
from groundwire.service.routing import on_the_pool, service_router, service_runtime, worker_pool
from groundwire.service.runtime import Runtime
from groundwire.service.settings import ServiceSettings
from groundwire.service.workers import WorkerPool

router = service_router()


def checked(body: dict[str, Any]) -> Response:
    """A check's response: its body, built as plain JSON values by the check (its report serialised once, the dump
    the request log keeps), written as FastAPI writes a response model (pydantic's JSON), without validating it
    again. The route's `response_model` describes it in /openapi.json."""
    return Response(to_json(body), media_type="application/json")


def _repair_may_be_small(settings: ServiceSettings) -> bool:
    return not settings.use_llm  # --llm: repair edits with the LLM


@router.post("/v1/verify", response_model=models.VerifyResponse, tags=["verify"])
@on_the_pool(may_be_small=True)
async def verify(request: Request, body: models.VerifyRequest, scope: str = Depends(caller_scope),
                 runtime: Runtime = Depends(service_runtime),
                 pool: WorkerPool = Depends(worker_pool)) -> Response:
    sent = runtime.sent(body)  # converted once, and held to the work limits (413) before it is queued
    accept(request, "verify", body, sent)  # failing later for a cause not its own, it is logged for review
    small = runtime.looks_small(body, sent)
    return checked(await pool.run_sized(scope, small, actions.verify, runtime, body, sent, scope=scope))


@router.post("/v1/repair", response_model=models.RepairResponse, tags=["verify"])
@on_the_pool(may_be_small=_repair_may_be_small)
async def repair(request: Request, body: models.RepairRequest, scope: str = Depends(caller_scope),
                 runtime: Runtime = Depends(service_runtime),
                 pool: WorkerPool = Depends(worker_pool)) -> Response:
    sent = runtime.sent(body)
    accept(request, "repair", body, sent)
    small = runtime.looks_small(body, sent, calls_llm=runtime.llm is not None)  # --llm: repair edits with the LLM
    return checked(await pool.run_sized(scope, small, actions.repair, runtime, body, sent, scope=scope))


@router.post("/v1/generate", response_model=models.GenerateResponse, tags=["generate"])
@on_the_pool()
async def generate(body: models.GenerateRequest, scope: str = Depends(caller_scope),
                   runtime: Runtime = Depends(service_runtime),
                   pool: WorkerPool = Depends(worker_pool)) -> models.GenerateResponse:
    return await pool.run(scope, generation.generate, runtime, body, scope=scope)
