"""Issue 46, item 4: the service's routes are on APIRouters (service/routes/), and a route whose work runs on the worker
pool says so on the route (`routing.on_the_pool`), not in a table of paths: the pool's admission and the time budget
follow the declaration."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

POOLED = {("POST", "/v1/verify"), ("POST", "/v1/repair"), ("POST", "/v1/generate"), ("GET", "/v1/eval"),
          ("POST", "/v1/eval/runs"), ("GET", "/v1/eval/report")}
"""The routes whose work runs on the worker pool (checks and the eval loop), as they were before the routers."""


def _api_routes(app: Any) -> list[Any]:
    """Every APIRoute the app serves, those of its included routers too."""
    from fastapi import routing

    if hasattr(routing, "iter_route_contexts"):  # FastAPI 0.16x keeps an included router whole
        routes = [context.original_route for context in routing.iter_route_contexts(app.routes)]
    else:  # older FastAPI copies the included routes, keeping their class
        routes = list(app.routes)
    return [route for route in routes if isinstance(route, routing.APIRoute)]


def _pooled(app: Any) -> dict[tuple[str, str], bool]:
    """(method, path) of each route declared on the pool, and whether its checks may be small."""
    settings = app.state.settings
    return {(method, route.path): route.on_the_pool.may_be_small(settings) for route in _api_routes(app)
            if getattr(route, "on_the_pool", None) is not None for method in route.methods}


def test_every_declaration_is_honoured_by_its_route(settings) -> None:
    from groundwire.service import create_app
    from groundwire.service.routing import ServiceRoute

    routes = _api_routes(create_app(settings))
    assert {route.path for route in routes} >= {path for _, path in POOLED} | {"/healthz", "/v1/ingest"}
    # A declaration under the router's decorator is read when the route is made; one above it, or on a route that is
    # not a ServiceRoute, would be ignored: both fail here.
    ignored = [route.path for route in routes
               if hasattr(route.endpoint, "__groundwire_on_the_pool__") and not isinstance(route, ServiceRoute)
               or isinstance(route, ServiceRoute) and route.on_the_pool is not getattr(
                   route.endpoint, "__groundwire_on_the_pool__", None)]
    assert ignored == []


def test_the_checks_and_the_eval_loop_are_declared_on_the_pool(settings) -> None:
    from groundwire.service import create_app

    pooled = _pooled(create_app(settings))
    assert set(pooled) == POOLED
    assert {key for key, small in pooled.items() if small} == {("POST", "/v1/verify"), ("POST", "/v1/repair")}
    # With an LLM, repair edits with it: never small.
    with_llm = _pooled(create_app(replace(settings, use_llm=True)))
    assert {key for key, small in with_llm.items() if small} == {("POST", "/v1/verify")}


def test_the_declaration_brings_the_pools_admission_and_the_time_budget(settings, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    from groundwire.core import cancel
    from groundwire.service import create_app
    from groundwire.service.routing import on_the_pool, service_router

    router = service_router()

    @router.post("/test/pooled")
    @on_the_pool()
    async def pooled() -> dict[str, float | None]:
        return {"budget": cancel.remaining()}

    @router.post("/test/plain")
    async def plain() -> dict[str, float | None]:
        return {"budget": cancel.remaining()}

    app = create_app(replace(settings, time_budget_s=30.0))
    app.include_router(router)
    with TestClient(app, raise_server_exceptions=False) as client:
        # A free pool: the declared route runs under the time budget, the other under none.
        budget = client.post("/test/pooled", headers=ALPHA).json()["budget"]
        assert 0 < budget <= 30.0
        assert client.post("/test/plain", headers=ALPHA).json() == {"budget": None}
        # A full pool refuses the declared routes at once, and only them.
        pool = client.app.state.pool
        monkeypatch.setattr(pool, "must_wait", lambda *, small: True)
        monkeypatch.setattr(pool, "full", lambda *, small, scope=None: True)
        for path in ("/test/pooled", "/v1/verify"):
            refused = client.post(path, headers=ALPHA, content=b"{not json")  # refused before it is parsed
            assert (refused.status_code, refused.json()["error"]["code"]) == (503, "busy"), path
        assert client.post("/test/plain", headers=ALPHA).status_code == 200
        assert client.get("/healthz").status_code == 200
        # A method the route does not take is FastAPI's 405, not a busy refusal.
        assert client.get("/v1/verify", headers=ALPHA).status_code == 405
