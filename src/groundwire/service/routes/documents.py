"""Documents to check against: ingest."""

from __future__ import annotations

from fastapi import Depends

from groundwire.service import actions, models
from groundwire.service.auth import writer_scope
from groundwire.service.routing import service_router, service_runtime
from groundwire.service.runtime import Runtime

router = service_router()


@router.post("/v1/ingest", response_model=models.IngestResponse, tags=["documents"])
def ingest(body: models.IngestRequest, scope: str = Depends(writer_scope),
           runtime: Runtime = Depends(service_runtime)) -> models.IngestResponse:
    return actions.ingest(runtime, body, scope=scope)
