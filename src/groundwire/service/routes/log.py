"""The request log: feedback on a logged answer, the logged requests, and the review queue."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import Depends, Query

from groundwire.foundation.errors import ErrorCode
from groundwire.service import actions, history, models
from groundwire.service.auth import caller_scope, writer_scope
from groundwire.service.errors import ServiceError
from groundwire.service.routing import service_router, service_runtime
from groundwire.service.runtime import Runtime

router = service_router()


@router.post("/v1/feedback", response_model=models.FeedbackResponse, tags=["log"])
def feedback(body: models.FeedbackRequest, scope: str = Depends(writer_scope),
             runtime: Runtime = Depends(service_runtime)) -> models.FeedbackResponse:
    return actions.feedback(runtime, body, scope=scope)


@router.get("/v1/requests", response_model=models.RequestList, tags=["log"])
def list_requests(scope: str = Depends(caller_scope), limit: int = Query(50, ge=1, le=1000),
                  runtime: Runtime = Depends(service_runtime)) -> models.RequestList:
    return models.RequestList(requests=history.list_requests(runtime, scope=scope, limit=limit))


@router.get("/v1/requests/{request_id}", tags=["log"])
def get_request(request_id: str, scope: str = Depends(caller_scope),
                runtime: Runtime = Depends(service_runtime)) -> dict[str, Any]:
    entry = history.get_request(runtime, request_id, scope=scope)
    if entry is None:
        # Another scope's id looks exactly like an id that does not exist.
        raise ServiceError(ErrorCode.REQUEST_NOT_FOUND, f"No request {request_id!r} in your scope.")
    return entry


@router.get("/v1/review", response_model=models.ReviewQueue, tags=["log"])
def review_queue(scope: str = Depends(caller_scope), limit: int = Query(100, ge=1, le=1000),
                 order: Literal["teach", "arrival"] | None = Query(
                     None, description="teach: the verdicts that would move the routing most first; arrival: newest "
                                       "first. Default: the service's --review-order."),
                 runtime: Runtime = Depends(service_runtime)) -> models.ReviewQueue:
    return history.review_queue(runtime, scope=scope, limit=limit, order=order)
