"""The service's routes, one APIRouter per part of the API; create_app includes `ROUTERS` in this order (the order of
the paths in /openapi.json). A route whose work runs on the worker pool says so itself (routing.on_the_pool)."""

from __future__ import annotations

from groundwire.service.routes import checks, documents, evals, log, pages, profiles

ROUTERS = (pages.router, checks.router, documents.router, log.router, evals.router, profiles.router)

__all__ = ["ROUTERS"]
