"""uvicorn's access log without secrets (`groundwire serve`).

uvicorn writes every request's path with its query string to the access log at info level. The service takes API
keys only in headers, but a client that puts one in the URL (`?api_key=...`) would have it written there, for
whoever reads the logs. So the log keeps the values of the query parameters the routes read (`limit`) and replaces
every other value with "[redacted]"; the keys `groundwire serve` was given (groundwire.redact's registered secrets)
are replaced wherever else they occur in the line, in every spelling (percent-encoded, JSON-escaped, base64). The
server's other log lines go through the same redaction.
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


class RedactRecord(logging.Filter):
    """A filter for the server's other log lines (uvicorn's, groundwire's): the message and its traceback, with the
    registered keys redacted in every spelling (groundwire.redact)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        record.exc_info = None  # the formatter prints exc_text, redacted, instead
        return True


def access_log_config() -> dict[str, Any]:
    """uvicorn's default logging config (its `log_config`) with RedactQuery on the access logger, and RedactRecord on
    every other line: uvicorn's and groundwire's own (which would otherwise reach stderr unfiltered)."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact_query": {"()": RedactQuery}, "redact_record": {"()": RedactRecord}}
    config["loggers"]["uvicorn.access"]["filters"] = ["redact_query"]
    config["handlers"]["default"]["filters"] = ["redact_record"]
    config["loggers"]["groundwire"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config
