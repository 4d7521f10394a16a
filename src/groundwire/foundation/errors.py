"""Errors a caller can act on, and the one registry of their codes.

Every error groundwire reports has a code in `ErrorCode` (as spaCy's `Errors` registry does): a stable
snake_case name, the exit status the CLI gives it, the HTTP status the service gives it, and what it means. The
service sends the name as `error.code`, the CLI prints it before the message (`error [empty_answer]: ...`), and
an `InputError` carries one in `.code`. Clients match on these names: never rename one. `Outcome` names the exit
statuses of a command that ran to the end. docs/errors.md lists both; `python scripts/errors_doc.py` writes it
from here and tests/test_errors.py fails when it drifts.

This module imports nothing of groundwire: every layer may raise these errors.
"""

from __future__ import annotations

from enum import Enum, StrEnum, unique

# The CLI's exit statuses for errors (Outcome has the others): one per class of error, as documented in the README.
# A batch whose rows failed one by one ran to the end: its statuses (5, 6) are Outcomes, apart from 2 (the command
# was used wrongly, nothing was checked).
_BAD_INPUT, _LLM_FAILED, _INTERNAL = 2, 3, 4


@unique
class ErrorCode(StrEnum):
    """An error's stable name (the member's value, a str), its CLI exit status, its HTTP status and its meaning.

    A code only the service sends still has an exit status: the class of error it belongs to (2 the caller's
    input or request, 3 the LLM endpoint, 4 groundwire or the service itself)."""

    exit_status: int
    http_status: int
    meaning: str

    def __new__(cls, name: str, exit_status: int, http_status: int, meaning: str) -> ErrorCode:
        """A code from its row of the registry: name, CLI exit status, HTTP status, what it means."""
        code = str.__new__(cls, name)
        code._value_ = name
        code.exit_status = exit_status
        code.http_status = http_status
        code.meaning = meaning
        return code

    # The input a check, a command or the library was given (InputError). -----------------------------------
    INVALID_INPUT = (
        "invalid_input",
        _BAD_INPUT,
        422,
        "The input cannot be used as given; the message says what to change (no more specific code).",
    )
    EMPTY_ANSWER = ("empty_answer", _BAD_INPUT, 422, "The answer to check or cite is empty.")
    EMPTY_QUESTION = ("empty_question", _BAD_INPUT, 422, "Grounded generation was given an empty question.")
    NO_CONTEXT = ("no_context", _BAD_INPUT, 422, "No non-empty retrieved chunk (or --context file) was given.")
    INVALID_CHUNKS = (
        "invalid_chunks",
        _BAD_INPUT,
        422,
        "The chunks are malformed: one string instead of a list, or duplicated chunk ids.",
    )
    INVALID_DOCUMENT = (
        "invalid_document",
        _BAD_INPUT,
        422,
        "A document to ingest has no doc_id or no text, a page that is not 1-based, or an unknown type.",
    )
    INVALID_FEEDBACK = (
        "invalid_feedback",
        _BAD_INPUT,
        422,
        "Feedback has thumbs other than 1 or -1, or none of thumbs, correction and comment.",
    )
    FILE_NOT_FOUND = ("file_not_found", _BAD_INPUT, 422, "A named input file, directory or database does not exist.")
    INVALID_FILE = (
        "invalid_file",
        _BAD_INPUT,
        422,
        "A file is not what it should be: binary or not UTF-8 text, not a wheel or zip, a wrong SHA-256, "
        "no config.json, mixed formats.",
    )
    INVALID_ROW = (
        "invalid_row",
        _BAD_INPUT,
        422,
        "A row of a JSONL or Parquet input is malformed; the message names the file and line.",
    )
    MISSING_COLUMN = (
        "missing_column",
        _BAD_INPUT,
        422,
        "A column the rows or the frame need is missing; name yours (--columns, answer=, context=).",
    )
    NO_ROWS = ("no_rows", _BAD_INPUT, 422, "The input holds no rows (or no labelled rows) to work on.")
    INVALID_OPTION = (
        "invalid_option",
        _BAD_INPUT,
        422,
        "Command-line options that do not fit together, or a value that is not one of the choices.",
    )
    CONFIG_NOT_FOUND = (
        "config_not_found",
        _BAD_INPUT,
        422,
        "The config file named by --config or GROUNDWIRE_CONFIG does not exist.",
    )
    INVALID_CONFIG = (
        "invalid_config",
        _BAD_INPUT,
        422,
        "groundwire.toml or a GROUNDWIRE_* variable is invalid: not TOML, a wrong type or value.",
    )
    INVALID_SETTINGS = (
        "invalid_settings",
        _BAD_INPUT,
        422,
        "A setting given in code or by a flag is invalid: an unknown scorer or pruner, thresholds "
        "out of order, a limit out of range.",
    )
    MISSING_EXTRA = (
        "missing_extra",
        _BAD_INPUT,
        422,
        "The command needs an optional dependency: pip install 'groundwire[EXTRA]' as the message says.",
    )
    OUTPUT_EXISTS = (
        "output_exists",
        _BAD_INPUT,
        422,
        "The output path is in the way: it exists (pass --force) or is a file where a folder goes.",
    )
    LLM_NOT_CONFIGURED = (
        "llm_not_configured",
        _BAD_INPUT,
        503,
        "An LLM endpoint is needed and none is configured ([llm] in groundwire.toml; serve --llm).",
    )

    # The HTTP request (ServiceError). ---------------------------------------------------------------------------
    INVALID_REQUEST = (
        "invalid_request",
        _BAD_INPUT,
        422,
        "The request body does not match the schema; details lists each field.",
    )
    JUDGE_NOT_AVAILABLE = (
        "judge_not_available",
        _BAD_INPUT,
        422,
        "judge=true on a service started without --llm; send the request without judge.",
    )
    MISSING_API_KEY = ("missing_api_key", _BAD_INPUT, 401, "The service needs an API key and the request has none.")
    INVALID_API_KEY = ("invalid_api_key", _BAD_INPUT, 401, "The API key is not recognised.")
    READ_ONLY_KEY = ("read_only_key", _BAD_INPUT, 403, "A read-only API key asked to write.")
    REQUEST_NOT_FOUND = ("request_not_found", _BAD_INPUT, 404, "No logged request with this id in the caller's scope.")
    DOCUMENT_NOT_FOUND = (
        "document_not_found",
        _BAD_INPUT,
        404,
        "No ingested document with these ids in the caller's scope; details lists them.",
    )
    BAD_REQUEST = ("bad_request", _BAD_INPUT, 400, "The request body could not be read.")
    MALFORMED_REQUEST = (
        "malformed_request",
        _BAD_INPUT,
        400,
        "The request is not valid HTTP/1.1 (a garbage request line, a bad Content-Length or Transfer-Encoding, "
        "invalid chunked framing); the connection is closed.",
    )
    NOT_FOUND = ("not_found", _BAD_INPUT, 404, "No such route or static file.")
    METHOD_NOT_ALLOWED = ("method_not_allowed", _BAD_INPUT, 405, "The route does not take this HTTP method.")
    HEADER_TIMEOUT = (
        "header_timeout",
        _BAD_INPUT,
        408,
        "The request headers did not arrive in time; the connection is closed.",
    )
    BODY_TIMEOUT = (
        "body_timeout",
        _BAD_INPUT,
        408,
        "The request body did not arrive in time; the connection is closed.",
    )
    PAYLOAD_TOO_LARGE = (
        "payload_too_large",
        _BAD_INPUT,
        413,
        "The body is over the byte limit; refused before it is parsed, chunked bodies too.",
    )
    TOO_MUCH_WORK = (
        "too_much_work",
        _BAD_INPUT,
        413,
        "The request asks for more work than allowed (chunks, characters, claims, pairs); "
        "details.limit names the limit.",
    )
    UNSUPPORTED_CONTENT_ENCODING = (
        "unsupported_content_encoding",
        _BAD_INPUT,
        415,
        "The request has a Content-Encoding (gzip, ...) the service does not decode; send the body uncompressed.",
    )
    CLIENT_CLOSED_REQUEST = (
        "client_closed_request",
        _BAD_INPUT,
        499,
        "The client disconnected before the answer was ready: its work stopped at its next boundary and nothing was "
        "logged (nginx's 499; no client receives it, /metrics counts it).",
    )
    RATE_LIMITED = ("rate_limited", _BAD_INPUT, 429, "Too many requests for this API key; retry after Retry-After.")
    HEADERS_TOO_LARGE = (
        "headers_too_large",
        _BAD_INPUT,
        431,
        "The request line and headers are over the byte limit; the connection is closed.",
    )

    # groundwire, the service or the LLM endpoint could not do it. ---------------------------------------------
    LLM_UNAVAILABLE = (
        "llm_unavailable",
        _LLM_FAILED,
        502,
        "The LLM endpoint failed after its retries: down, 401, or a reply that is not a chat completion.",
    )
    INTERNAL_ERROR = (
        "internal_error",
        _INTERNAL,
        500,
        "An unexpected error; the CLI prints one line (--debug for the traceback), the service logs it.",
    )
    NOT_READY = ("not_ready", _INTERNAL, 503, "The service is starting or shutting down; retry in a moment.")
    BUSY = ("busy", _INTERNAL, 503, "Every worker is busy and the queue is full; retry after Retry-After.")
    QUEUE_TIMEOUT = (
        "queue_timeout",
        _INTERNAL,
        503,
        "The request waited for a worker for its whole time budget (serve --time-budget) and did not start "
        "(not logged, as busy is not); retry after Retry-After.",
    )
    TIME_BUDGET_EXCEEDED = (
        "time_budget_exceeded",
        _INTERNAL,
        504,
        "The work did not finish within the route's time budget (serve --time-budget) and was stopped at its next "
        "boundary (no result is logged). The eval routes answer with what they finished instead (meta says what).",
    )


@unique
class Outcome(Enum):
    """The exit status of a command that ran to the end, when it is not an error's (ErrorCode.exit_status)."""

    exit_status: int
    meaning: str

    def __new__(cls, name: str, exit_status: int, meaning: str) -> Outcome:
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
        "check --fail-on escalate: the answer was escalated for review (with --input, a row was and none was "
        "rejected).",
    )
    INTERRUPTED = ("interrupted", 130, "Interrupted (Ctrl-C).")


class InputError(ValueError):
    """The input cannot be checked as given (empty answer, no context, malformed file...).

    The message always says what was wrong and what to do instead; `code` names the error for a program. The CLI
    exits with the code's exit status (2) and the HTTP service answers with its HTTP status (a 4xx, or 503 for
    llm_not_configured), both printing the code with the message.
    """

    def __init__(self, message: str, *, code: ErrorCode = ErrorCode.INVALID_INPUT) -> None:
        super().__init__(message)
        self.code = code
