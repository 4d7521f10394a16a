"""API keys -> permission scopes.

A scope is the unit of isolation: documents, cache entries and request-log rows all
carry the scope of the key that made them, and a key only ever sees its own scope.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from groundwire.foundation.errors import ErrorCode
from groundwire.service.errors import ServiceError
from groundwire.service.ratelimit import RateLimiter
from groundwire.service.settings import DEFAULT_SCOPE, ServiceSettings

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


# Declared as OpenAPI security schemes, so /docs' "Authorize" button can send a key with "Try it out".
BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="Authorization: Bearer <API key>")
API_KEY_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey",
                              description="X-API-Key: <API key>")


def presented_key(bearer: HTTPAuthorizationCredentials | None, header_key: str | None) -> str | None:
    if bearer is not None and bearer.credentials.strip():
        return bearer.credentials.strip()
    return header_key or None


def scope_for_key(settings: ServiceSettings, key: str | None) -> str:
    if settings.open_access:
        return DEFAULT_SCOPE
    if key is None:
        raise ServiceError(ErrorCode.MISSING_API_KEY,
                           "Send an API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'.",
                           headers=_CHALLENGE)
    # Compare against every key in constant time so response timing says nothing about near misses.
    found: str | None = None
    for known, scope in settings.api_keys.items():
        if hmac.compare_digest(known.encode(), key.encode()):
            found = scope
    if found is None:
        raise ServiceError(ErrorCode.INVALID_API_KEY, "The API key is not recognised.", headers=_CHALLENGE)
    return found


@dataclass(frozen=True, slots=True)
class Caller:
    scope: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class _Resolved:
    """A request's key and what it resolved to: its Caller, or the 401 refusing it."""

    key: str | None
    caller: Caller | ServiceError


_RESOLVED = "groundwire_caller"
"""Where `resolved_caller` keeps a request's resolution: the request's state (its ASGI scope's "state"), which the
pool's admission, the route and the failure log, outside it, all read."""


async def resolved_caller(request: Request) -> Caller:
    """The calling key's scope and access, resolved once per request whoever asks first (the pool's admission when
    the pool is full, the route, or the failure log for a request refused before its route) and kept in the
    request's state for the others. 401 (ServiceError) for a missing or wrong key."""
    resolved = await _resolved(request)
    if isinstance(resolved.caller, ServiceError):
        raise resolved.caller
    return resolved.caller


async def _resolved(request: Request, bearer: HTTPAuthorizationCredentials | None = None,
                    header_key: str | None = None, *, given: bool = False) -> _Resolved:
    held: _Resolved | None = getattr(request.state, _RESOLVED, None)
    if held is not None:
        return held
    settings: ServiceSettings = request.app.state.settings
    if not given:
        bearer, header_key = await BEARER(request), await API_KEY_HEADER(request)
    key = presented_key(bearer, header_key)
    try:
        caller: Caller | ServiceError = Caller(scope_for_key(settings, key), read_only=key in settings.read_only_keys)
    except ServiceError as refused:
        caller = refused
    held = _Resolved(key, caller)
    setattr(request.state, _RESOLVED, held)
    return held


async def caller_scope(caller: Annotated[Caller, Depends(_caller)]) -> str:
    """FastAPI dependency: the permission scope of the calling key, for reading and checking."""
    return caller.scope


async def writer_scope(caller: Annotated[Caller, Depends(_caller)]) -> str:
    """FastAPI dependency: the permission scope of the calling key, for changing what the scope holds."""
    if caller.read_only:
        raise ServiceError(ErrorCode.READ_ONLY_KEY, "This API key is read-only: it may verify and read, "
                                                 "not ingest, give feedback or record eval runs.")
    return caller.scope


async def _caller(request: Request,
                  bearer: HTTPAuthorizationCredentials | None = Security(BEARER),
                  header_key: str | None = Security(API_KEY_HEADER)) -> Caller:
    """The calling key's scope and access (`resolved_caller`'s), counted against the rate limit.

    Async, as are caller_scope and writer_scope: FastAPI runs a sync dependency on anyio's thread pool, so with
    its threads taken (by sync routes) even a request the worker pool refuses at once would first wait for one."""
    settings: ServiceSettings = request.app.state.settings
    limiter: RateLimiter | None = request.app.state.rate_limiter
    resolved = await _resolved(request, bearer, header_key, given=True)
    if isinstance(resolved.caller, ServiceError):
        if limiter is not None:
            await _count(request, limiter, f"address:{_address(request)}")  # a wrong key counts against its address
        raise resolved.caller
    if limiter is not None:
        await _count(request, limiter,
                     f"address:{_address(request)}" if settings.open_access else f"key:{resolved.key}")
    return resolved.caller


async def _count(request: Request, limiter: RateLimiter, caller: str) -> None:
    """Count the request against `caller`'s limit; over it, its 429 waits its turn in the refusal pace (a caller
    that resends at once would otherwise keep the event loop answering it, as a busy refusal's would)."""
    try:
        limiter.hit(caller)
    except ServiceError:
        await request.app.state.refusal_pace.turn()
        raise


def _address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"
