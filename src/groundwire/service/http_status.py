"""The HTTP status the service answers each error code with (docs/errors.md lists them beside the codes).

It imports no FastAPI: the error responses (service/errors.py), the header-timeout refusals sent before h11 has a
request (service/headertimeout.py) and scripts/errors_doc.py read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from groundwire.foundation.errors import ErrorCode

HTTP_STATUS: Final[Mapping[ErrorCode, int]] = MappingProxyType(
    {
        # The input (InputError): 422, apart from an LLM the service was started without.
        ErrorCode.INVALID_INPUT: 422,
        ErrorCode.EMPTY_ANSWER: 422,
        ErrorCode.EMPTY_QUESTION: 422,
        ErrorCode.NO_CONTEXT: 422,
        ErrorCode.INVALID_CHUNKS: 422,
        ErrorCode.INVALID_DOCUMENT: 422,
        ErrorCode.INVALID_FEEDBACK: 422,
        ErrorCode.INVALID_VERDICT: 422,
        ErrorCode.FILE_NOT_FOUND: 422,
        ErrorCode.INVALID_FILE: 422,
        ErrorCode.INVALID_ROW: 422,
        ErrorCode.MISSING_COLUMN: 422,
        ErrorCode.NO_ROWS: 422,
        ErrorCode.INVALID_OPTION: 422,
        ErrorCode.CONFIG_NOT_FOUND: 422,
        ErrorCode.INVALID_CONFIG: 422,
        ErrorCode.INVALID_SETTINGS: 422,
        ErrorCode.MISSING_EXTRA: 422,
        ErrorCode.OUTPUT_EXISTS: 422,
        ErrorCode.INVALID_PROFILE: 422,
        ErrorCode.PROFILE_MODEL_MISMATCH: 422,
        ErrorCode.TOO_FEW_LABELS: 422,
        ErrorCode.PROFILE_MISSES_TARGET: 422,
        ErrorCode.LLM_NOT_CONFIGURED: 503,
        # The HTTP request (ServiceError).
        ErrorCode.INVALID_REQUEST: 422,
        ErrorCode.JUDGE_NOT_AVAILABLE: 422,
        ErrorCode.MISSING_API_KEY: 401,
        ErrorCode.INVALID_API_KEY: 401,
        ErrorCode.READ_ONLY_KEY: 403,
        ErrorCode.REQUEST_NOT_FOUND: 404,
        ErrorCode.DOCUMENT_NOT_FOUND: 404,
        ErrorCode.PROFILE_NOT_FOUND: 404,
        ErrorCode.BAD_REQUEST: 400,
        ErrorCode.MALFORMED_REQUEST: 400,
        ErrorCode.NOT_FOUND: 404,
        ErrorCode.METHOD_NOT_ALLOWED: 405,
        ErrorCode.HEADER_TIMEOUT: 408,
        ErrorCode.BODY_TIMEOUT: 408,
        ErrorCode.PAYLOAD_TOO_LARGE: 413,
        ErrorCode.TOO_MUCH_WORK: 413,
        ErrorCode.UNSUPPORTED_CONTENT_ENCODING: 415,
        ErrorCode.CLIENT_CLOSED_REQUEST: 499,  # nginx's 'client closed request', which HTTP does not name
        ErrorCode.RATE_LIMITED: 429,
        ErrorCode.HEADERS_TOO_LARGE: 431,
        # groundwire, the service or the LLM endpoint could not do it.
        ErrorCode.LLM_UNAVAILABLE: 502,
        ErrorCode.INTERNAL_ERROR: 500,
        ErrorCode.NOT_READY: 503,
        ErrorCode.BUSY: 503,
        ErrorCode.QUEUE_TIMEOUT: 503,
        ErrorCode.TIME_BUDGET_EXCEEDED: 504,
    }
)
"""The HTTP status of every error code, a 4xx or a 5xx. tests/test_errors.py fails on a code without one."""
