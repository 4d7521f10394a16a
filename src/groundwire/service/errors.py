"""Structured JSON errors: every 4xx and 5xx the service sends has the same shape.

    {"error": {"status": 413, "code": "payload_too_large", "message": "...", "details": [...]}}
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("groundwire.service")


class ServiceError(StarletteHTTPException):
    """An error the service reports to the caller as structured JSON.

    An HTTPException subclass, so FastAPI passes it through untouched even when it is
    raised while the body is being read (the size limit does that).
    """

    def __init__(self, status: int, code: str, message: str, *, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=status, detail=message, headers=headers)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def error_body(status: int, code: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"status": status, "code": code, "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}


def error_response(status: int, code: str, message: str, details: Any = None, *,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, code, message, details), status_code=status, headers=headers)


_KNOWN_STATUSES = frozenset(status.value for status in HTTPStatus)


def _code_for(status: int) -> str:
    phrase = HTTPStatus(status).phrase if status in _KNOWN_STATUSES else "error"
    return phrase.lower().replace(" ", "_").replace("-", "_")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.details, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"loc": list(err.get("loc", ())), "msg": err.get("msg", ""), "type": err.get("type", "")}
            for err in exc.errors()
        ]
        return error_response(422, "invalid_request", "The request does not match the schema (see details).", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return error_response(exc.status_code, _code_for(exc.status_code), message,
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the server log; the caller gets the shape, not the internals.
        log.exception("unhandled error", exc_info=exc)
        return error_response(500, "internal_error", "The service hit an unexpected error; see the server log.")
