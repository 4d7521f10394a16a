"""How a route of the service is declared: on an APIRouter made by `service_router` (service/routes/), and, when its
work runs on the worker pool, with `@on_the_pool` under the router's decorator:

    @router.post("/v1/verify", response_model=models.VerifyResponse, tags=["verify"])
    @on_the_pool(may_be_small=True)
    async def verify(body: models.VerifyRequest, ...) -> models.VerifyResponse:
        return await pool.run_sized(...)

A route on the pool runs, before FastAPI reads or validates its body, under the time budget that stops its work when
its client goes (cancellation.py), and behind the pool's admission: 503 `busy` at once when the pool cannot take its
check (workers.refuse_when_full). The declaration sits on the route, so a new pooled route cannot be left out of a
table elsewhere; tests/service/test_service_routes.py fails on a declaration that its route ignores (one above the
router's decorator, or on a route that is not a `ServiceRoute`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from starlette.types import Receive, Scope, Send

from groundwire.service.cancellation import cancel_when_gone
from groundwire.service.runtime import Runtime
from groundwire.service.workers import WorkerPool, refuse_when_full

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.service.settings import ServiceSettings

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])
_DECLARED = "__groundwire_on_the_pool__"
"""The attribute `on_the_pool` sets on an endpoint, and ServiceRoute reads."""


@dataclass(frozen=True, slots=True)
class OnThePool:
    """A route whose work runs on the worker pool. `may_be_small`: whether its checks may be small (and so take the
    reserved lane), given the service's settings."""

    may_be_small: Callable[[ServiceSettings], bool]


def on_the_pool(*, may_be_small: bool | Callable[[ServiceSettings], bool] = False) -> Callable[[Endpoint], Endpoint]:
    """Declare that the endpoint below runs its work on the worker pool (see the module docstring); put it under the
    router's decorator. `may_be_small`: True, False, or a function of the settings (repair is small only without
    an LLM)."""
    declared = OnThePool(may_be_small if callable(may_be_small) else _always(may_be_small))

    def declare(endpoint: Endpoint) -> Endpoint:
        setattr(endpoint, _DECLARED, declared)
        return endpoint

    return declare


def _always(small: bool) -> Callable[[ServiceSettings], bool]:
    return lambda _settings: small


class ServiceRoute(APIRoute):
    """A route of the service: a route declared `on_the_pool` gets the time budget and the pool's admission before
    FastAPI handles the request; any other is FastAPI's own."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        self.on_the_pool: OnThePool | None = getattr(endpoint, _DECLARED, None)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.on_the_pool is None or scope["method"] not in (self.methods or ()):  # a wrong method: FastAPI's 405
            await super().handle(scope, receive, send)
            return
        state = scope["app"].state  # what create_app set up: the settings, the pool, the pace of refusals
        settings: ServiceSettings = state.settings
        admitted = partial(refuse_when_full, super().handle, pool=state.pool,
                           small=self.on_the_pool.may_be_small(settings), pace=state.refusal_pace)
        await cancel_when_gone(admitted, scope, receive, send, budget_s=settings.time_budget_s)


def service_router() -> APIRouter:
    """An APIRouter whose routes are ServiceRoutes (so that `on_the_pool` is honoured)."""
    return APIRouter(route_class=ServiceRoute)


async def service_runtime(request: Request) -> Runtime:
    """The app's Runtime (a dependency: `runtime: Runtime = Depends(service_runtime)`). Async, as every dependency
    of a route on the pool is, so that it costs no thread hop."""
    runtime: Runtime = request.app.state.runtime
    return runtime


async def worker_pool(request: Request) -> WorkerPool:
    """The app's worker pool (a dependency, as `service_runtime`)."""
    pool: WorkerPool = request.app.state.pool
    return pool
