"""The command line's exit statuses: one for each error code (`EXIT_STATUS`), and the outcomes of a command that
ran to the end (`CommandOutcome`). docs/errors.md lists them beside the codes (`python scripts/errors_doc.py` writes its
tables); docs/cli.md names the classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, unique
from types import MappingProxyType
from typing import Final

from groundwire.foundation.errors import ErrorCode

# One exit status per class of error (CommandOutcome has the others). A batch whose rows failed one by one ran to the end:
# its statuses (5, 6) are Outcomes, apart from 2 (the command was used wrongly, nothing was checked).
_BAD_INPUT, _LLM_FAILED, _INTERNAL = 2, 3, 4

EXIT_STATUS: Final[Mapping[ErrorCode, int]] = MappingProxyType(
    {
        # The input a check, a command or the library was given (InputError).
        ErrorCode.INVALID_INPUT: _BAD_INPUT,
        ErrorCode.EMPTY_ANSWER: _BAD_INPUT,
        ErrorCode.EMPTY_QUESTION: _BAD_INPUT,
        ErrorCode.NO_CONTEXT: _BAD_INPUT,
        ErrorCode.INVALID_CHUNKS: _BAD_INPUT,
        ErrorCode.INVALID_DOCUMENT: _BAD_INPUT,
        ErrorCode.INVALID_FEEDBACK: _BAD_INPUT,
        ErrorCode.INVALID_VERDICT: _BAD_INPUT,
        ErrorCode.FILE_NOT_FOUND: _BAD_INPUT,
        ErrorCode.INVALID_FILE: _BAD_INPUT,
        ErrorCode.INVALID_ROW: _BAD_INPUT,
        ErrorCode.MISSING_COLUMN: _BAD_INPUT,
        ErrorCode.NO_ROWS: _BAD_INPUT,
        ErrorCode.INVALID_OPTION: _BAD_INPUT,
        ErrorCode.CONFIG_NOT_FOUND: _BAD_INPUT,
        ErrorCode.INVALID_CONFIG: _BAD_INPUT,
        ErrorCode.INVALID_SETTINGS: _BAD_INPUT,
        ErrorCode.MISSING_EXTRA: _BAD_INPUT,
        ErrorCode.OUTPUT_EXISTS: _BAD_INPUT,
        ErrorCode.INVALID_PROFILE: _BAD_INPUT,
        ErrorCode.PROFILE_MODEL_MISMATCH: _BAD_INPUT,
        ErrorCode.TOO_FEW_LABELS: _BAD_INPUT,
        ErrorCode.PROFILE_MISSES_TARGET: _BAD_INPUT,
        ErrorCode.LLM_NOT_CONFIGURED: _BAD_INPUT,
        # The HTTP request (ServiceError): a code only the service sends has the exit status of its class.
        ErrorCode.INVALID_REQUEST: _BAD_INPUT,
        ErrorCode.JUDGE_NOT_AVAILABLE: _BAD_INPUT,
        ErrorCode.MISSING_API_KEY: _BAD_INPUT,
        ErrorCode.INVALID_API_KEY: _BAD_INPUT,
        ErrorCode.READ_ONLY_KEY: _BAD_INPUT,
        ErrorCode.REQUEST_NOT_FOUND: _BAD_INPUT,
        ErrorCode.PROFILE_NOT_FOUND: _BAD_INPUT,
        ErrorCode.DOCUMENT_NOT_FOUND: _BAD_INPUT,
        ErrorCode.BAD_REQUEST: _BAD_INPUT,
        ErrorCode.MALFORMED_REQUEST: _BAD_INPUT,
        ErrorCode.NOT_FOUND: _BAD_INPUT,
        ErrorCode.METHOD_NOT_ALLOWED: _BAD_INPUT,
        ErrorCode.HEADER_TIMEOUT: _BAD_INPUT,
        ErrorCode.BODY_TIMEOUT: _BAD_INPUT,
        ErrorCode.PAYLOAD_TOO_LARGE: _BAD_INPUT,
        ErrorCode.TOO_MUCH_WORK: _BAD_INPUT,
        ErrorCode.UNSUPPORTED_CONTENT_ENCODING: _BAD_INPUT,
        ErrorCode.CLIENT_CLOSED_REQUEST: _BAD_INPUT,
        ErrorCode.RATE_LIMITED: _BAD_INPUT,
        ErrorCode.HEADERS_TOO_LARGE: _BAD_INPUT,
        # groundwire, the service or the LLM endpoint could not do it.
        ErrorCode.LLM_UNAVAILABLE: _LLM_FAILED,
        ErrorCode.INTERNAL_ERROR: _INTERNAL,
        ErrorCode.NOT_READY: _INTERNAL,
        ErrorCode.BUSY: _INTERNAL,
        ErrorCode.QUEUE_TIMEOUT: _INTERNAL,
        ErrorCode.TIME_BUDGET_EXCEEDED: _INTERNAL,
    }
)
"""The exit status of every error code: the class of error it belongs to, 2 the caller's input or request, 3 the LLM
endpoint, 4 groundwire or the service itself. tests/test_errors.py fails on a code without one."""


@unique
class CommandOutcome(Enum):
    """The exit status of a command that ran to the end, when it is not an error's (EXIT_STATUS)."""

    exit_status: int
    meaning: str

    def __new__(cls, name: str, exit_status: int, meaning: str) -> CommandOutcome:
        """An outcome from its row: name, CLI exit status, what it means."""
        outcome = object.__new__(cls)
        outcome._value_ = name
        outcome.exit_status = exit_status
        outcome.meaning = meaning
        return outcome

    OK = ("ok", 0, "The command did its work.")
    NOT_GROUNDED = (
        "not_grounded",
        1,
        "check: the answer was rejected (with --input, at least one row was); --fail-on never turns this off.",
    )
    LLM_FALLBACK = (
        "llm_fallback",
        1,
        "repair, generate with --fail-on-fallback: the answer fell back to the abstention.",
    )
    ROWS_IN_ERROR = (
        "rows_in_error",
        5,
        "check --input, batch: some rows could not be checked and the others were; each failed row is an error "
        "record (id, code, message) in the output.",
    )
    ALL_ROWS_IN_ERROR = (
        "all_rows_in_error",
        6,
        "check --input, batch: rows were read and not one of them could be checked; each is an error record.",
    )
    ESCALATED = (
        "escalated",
        7,
        "check: the answer was escalated for review (with --input, a row was and none was rejected); --fail-on "
        "reject lets it pass.",
    )
    INTERRUPTED = ("interrupted", 130, "Interrupted (Ctrl-C).")
