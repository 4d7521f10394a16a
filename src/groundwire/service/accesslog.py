"""uvicorn's access log without secrets (`groundwire serve`).

uvicorn writes every request's path with its query string to the access log at info level. The service takes API
keys only in headers, but a client that puts one in the URL (`?api_key=...`) would have it written there, for
whoever reads the logs. So the log keeps the values of the query parameters the routes read (`limit`) and replaces
every other value with "[redacted]"; the keys `groundwire serve` was given (groundwire.redact's registered secrets)
are replaced wherever else they occur in the line.
"""

from __future__ import annotations

import copy
import logging
from typing import Any
from urllib.parse import unquote_plus

from uvicorn.config import LOGGING_CONFIG

from groundwire.redact import REDACTED, redact

SHOWN_QUERY_PARAMETERS = frozenset({"limit"})
"""The query parameters the service reads; only these keep their values in the access log."""
_PATH_ARG = 2
"""uvicorn's access-log record args: client address, method, path with query string, HTTP version, status."""


def redact_query(path: str) -> str:
    """`path` with the value of every query parameter but SHOWN_QUERY_PARAMETERS replaced by "[redacted]"."""
    route, sep, query = path.partition("?")
    if not sep:
        return path
    return f"{route}?{'&'.join(_redacted_pair(pair) for pair in query.split('&'))}"


def _redacted_pair(pair: str) -> str:
    name, sep, _ = pair.partition("=")
    if not sep:  # a bare `?token` is all value
        return REDACTED if pair else pair
    return pair if unquote_plus(name) in SHOWN_QUERY_PARAMETERS else f"{name}={REDACTED}"


class RedactQuery(logging.Filter):
    """A filter for the `uvicorn.access` logger: redacts the path argument of each access-log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        path = args[_PATH_ARG] if isinstance(args, tuple) and len(args) > _PATH_ARG else None
        if isinstance(args, tuple) and isinstance(path, str):
            record.args = (*args[:_PATH_ARG], redact(redact_query(path)), *args[_PATH_ARG + 1:])
        return True


def access_log_config() -> dict[str, Any]:
    """uvicorn's default logging config (its `log_config`) with RedactQuery on the access logger."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact_query": {"()": RedactQuery}}
    config["loggers"]["uvicorn.access"]["filters"] = ["redact_query"]
    return config
