"""The web page, its icon, and the health check."""

from __future__ import annotations

from importlib import resources

from fastapi import Depends
from fastapi.responses import FileResponse

from groundwire.service import models
from groundwire.service.routing import service_router, service_runtime
from groundwire.service.runtime import Runtime

STATIC = resources.files("groundwire.service") / "static"
"""The web page's files (create_app serves them under /static)."""

router = service_router()


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(str(STATIC / "index.html"))


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    """The page's icon (an SVG, which browsers take under this name too), for a browser that asks for it by its
    conventional path: on /docs, /metrics or a JSON response, say (the page itself links it)."""
    return FileResponse(str(STATIC / "favicon.svg"), media_type="image/svg+xml")


@router.get("/healthz", response_model=models.HealthResponse, tags=["service"])
def healthz(runtime: Runtime = Depends(service_runtime)) -> models.HealthResponse:
    return runtime.health()
