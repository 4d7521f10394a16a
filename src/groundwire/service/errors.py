"""Structured JSON errors: every 4xx and 5xx the service sends has the same shape.

    {"error": {"status": 413, "code": "payload_too_large", "message": "...", "details": [...]}}

The code comes from the registry, groundwire.foundation.errors.ErrorCode, and its HTTP status from http_status.py
(docs/errors.md lists both).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from groundwire.core.settings import RENAMED_OPTIONS, CheckSettings
from groundwire.foundation.errors import ErrorCode
from groundwire.service.http_status import HTTP_STATUS

log = logging.getLogger("groundwire.service")


class ServiceError(StarletteHTTPException):
    """An error the service reports to the caller as structured JSON.

    An HTTPException subclass, so FastAPI passes it through untouched even when it is
    raised while the body is being read (the size limit does that).
    """

    def __init__(self, code: ErrorCode, message: str, *, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=HTTP_STATUS[code], detail=message, headers=headers)
        self.status = HTTP_STATUS[code]
        self.code = code
        self.message = message
        self.details = details


def error_body(code: ErrorCode, message: str, details: Any = None, *, status: int | None = None) -> dict[str, Any]:
    """The JSON body of an error; `status` only where it is not the code's own (see _code_for)."""
    body: dict[str, Any] = {"status": HTTP_STATUS[code] if status is None else status, "code": code.value,
                            "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}


def _message(err: Mapping[str, Any]) -> str:
    """pydantic's message; for a check setting in a request's body, which the service fixes when it starts, the one
    rule's words (core.settings.option_error): the setting by name, its replacement where it was renamed, and
    where it is set."""
    loc, msg = tuple(err.get("loc", ())), str(err.get("msg", ""))
    if err.get("type") != "extra_forbidden" or len(loc) != 2 or loc[0] != "body":
        return msg
    name = str(loc[1])
    setting = RENAMED_OPTIONS.get(name, name)
    if setting not in CheckSettings.model_fields:
        return msg
    renamed = f"; use {setting}" if setting != name else ""
    return (f"{msg}: {name!r} is not a request option{renamed}. The service checks with the settings it started "
            f"with ([verify] {setting} in groundwire.toml, or GROUNDWIRE_VERIFY_{setting.upper()}, before `groundwire "
            "serve`); a request sets only require_citations, judge and task")


def error_response(code: ErrorCode, message: str, details: Any = None, *, status: int | None = None,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    status = HTTP_STATUS[code] if status is None else status
    return JSONResponse(error_body(code, message, details, status=status), status_code=status, headers=headers)


_KNOWN_STATUSES = frozenset(status.value for status in HTTPStatus)
_CODES_BY_NAME = {code.value: code for code in ErrorCode}


def _code_for(status: int) -> ErrorCode:
    """The code of an HTTP error Starlette or FastAPI raised itself (404 no route, 405, 400 an unreadable body):
    the registry's code named after the status's phrase; for a status the registry does not name, the generic code
    of its class (the response keeps Starlette's status)."""
    phrase = HTTPStatus(status).phrase if status in _KNOWN_STATUSES else "error"
    name = phrase.lower().replace(" ", "_").replace("-", "_")
    generic = ErrorCode.INVALID_REQUEST if status < 500 else ErrorCode.INTERNAL_ERROR
    return _CODES_BY_NAME.get(name, generic)


def _schema_message(details: list[dict[str, Any]]) -> str:
    """The 422's message: the first problem, where it is and what it is, so that a reader of the message alone (a
    log line, the page's error box) knows which field to fix; `details` lists every one."""
    if not details:
        return "The request does not match the schema (see details)."
    first = details[0]
    more = f" (and {len(details) - 1} more: see details)" if len(details) > 1 else ""
    return f"The request does not match the schema: {_where(first['loc'])}: {first['msg']}{more}."


def _where(loc: list[Any]) -> str:
    """A validation error's location as a reader writes it: ["body", "chunks", 0, "id"] -> "chunks[0].id"."""
    parts = loc[1:] if loc and loc[0] == "body" and len(loc) > 1 else loc
    where = ""
    for part in parts:
        where += f"[{part}]" if isinstance(part, int) else f"{'.' if where else ''}{part}"
    return where or "body"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.code, exc.message, exc.details, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"loc": list(err.get("loc", ())), "msg": _message(err), "type": err.get("type", "")}
            for err in exc.errors()
        ]
        return error_response(ErrorCode.INVALID_REQUEST, _schema_message(details), details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return error_response(_code_for(exc.status_code), message, status=exc.status_code,
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the server log; the caller gets the shape, not the internals.
        log.exception("unhandled error", exc_info=exc)
        return error_response(ErrorCode.INTERNAL_ERROR, "The service hit an unexpected error; see the server log.")
