"""Errors a caller can act on, and the one registry of their codes.

Every error groundwire reports has a code in `ErrorCode` (as spaCy's `Errors` registry does): a stable
snake_case name and what it means. The service sends the name as `error.code`, the CLI prints it before the message
(`error [empty_answer]: ...`), and an `InputError` carries one in `.code`. Clients match on these names: never
rename one. What each surface answers with a code is that surface's: the CLI's exit status is in
`groundwire.cli.exit_status.EXIT_STATUS`, the service's HTTP status in `groundwire.service.http_status.HTTP_STATUS`,
one row per code in each (tests/test_errors.py fails on a code without one). docs/errors.md lists the three together;
`python scripts/errors_doc.py` writes it and tests/test_errors.py fails when it drifts.

This module imports nothing of groundwire: every layer may raise these errors.
"""

from __future__ import annotations

from enum import StrEnum, unique


@unique
class ErrorCode(StrEnum):
    """An error's stable name (the member's value, a str) and its meaning."""

    meaning: str

    def __new__(cls, name: str, meaning: str) -> ErrorCode:
        """A code from its row of the registry: name, what it means."""
        code = str.__new__(cls, name)
        code._value_ = name
        code.meaning = meaning
        return code

    # The input a check, a command or the library was given (InputError). -----------------------------------
    INVALID_INPUT = (
        "invalid_input",
        "The input cannot be used as given; the message says what to change (no more specific code).",
    )
    EMPTY_ANSWER = ("empty_answer", "The answer to check or cite is empty.")
    EMPTY_QUESTION = ("empty_question", "Grounded generation was given an empty question.")
    NO_CONTEXT = ("no_context", "No non-empty retrieved chunk (or --context file) was given.")
    INVALID_CHUNKS = (
        "invalid_chunks",
        "The chunks are malformed: one string instead of a list, or duplicated chunk ids.",
    )
    INVALID_DOCUMENT = (
        "invalid_document",
        "A document to ingest has no doc_id or no text, a page that is not 1-based, or an unknown type.",
    )
    INVALID_FEEDBACK = (
        "invalid_feedback",
        "Feedback has thumbs other than 1 or -1, or none of thumbs, correction, comment and a verdict.",
    )
    INVALID_VERDICT = (
        "invalid_verdict",
        "A reviewer's verdict cannot be recorded: it marks a claim the logged request does not list (an index out "
        "of range, or twice), marks claims of an answer it calls faithful, or is on a request that failed before "
        "its answer was accepted (no answer logged).",
    )
    FILE_NOT_FOUND = ("file_not_found", "A named input file, directory or database does not exist.")
    INVALID_FILE = (
        "invalid_file",
        "A file is not what it should be: binary or not UTF-8 text, not a wheel or zip, a wrong SHA-256, "
        "no config.json, mixed formats.",
    )
    INVALID_ROW = (
        "invalid_row",
        "A row of a JSONL or Parquet input is malformed; the message names the file and line.",
    )
    MISSING_COLUMN = (
        "missing_column",
        "A column the rows or the frame need is missing; name yours (--columns, answer=, context=).",
    )
    NO_ROWS = ("no_rows", "The input holds no rows (or no labelled rows) to work on.")
    INVALID_OPTION = (
        "invalid_option",
        "Command-line options that do not fit together, or a value that is not one of the choices.",
    )
    CONFIG_NOT_FOUND = ("config_not_found", "The config file named by --config or GROUNDWIRE_CONFIG does not exist.")
    INVALID_CONFIG = (
        "invalid_config",
        "groundwire.toml or a GROUNDWIRE_* variable is invalid: not TOML, a wrong type or value.",
    )
    INVALID_SETTINGS = (
        "invalid_settings",
        "A setting given in code or by a flag is invalid: an unknown scorer or pruner, thresholds "
        "out of order, a limit out of range.",
    )
    MISSING_EXTRA = (
        "missing_extra",
        "The command needs an optional dependency: pip install 'groundwire[EXTRA]' as the message says.",
    )
    OUTPUT_EXISTS = (
        "output_exists",
        "The output path is in the way: it exists (pass --force) or is a file where a folder goes.",
    )
    INVALID_PROFILE = (
        "invalid_profile",
        "A domain profile (--profile, [verify] profile) is not a directory holding a readable profile.json.",
    )
    PROFILE_MODEL_MISMATCH = (
        "profile_model_mismatch",
        "The profile was fitted on another base model than the scorer in use; use that scorer or adapt again.",
    )
    TOO_FEW_LABELS = (
        "too_few_labels",
        "adapt: the labels of both classes are too few to meet the target rates with confidence (answers of one "
        "source document count once toward them; with enough of one class, adapt fits that class's threshold "
        "alone; --fine-tune needs both); the message says how many more of each class are needed.",
    )
    PROFILE_MISSES_TARGET = (
        "profile_misses_target",
        "adapt: cross-validated within the labels, the profile's false-accept rate exceeds the target by more "
        "than its interval, so no profile is written.",
    )
    LLM_NOT_CONFIGURED = (
        "llm_not_configured",
        "An LLM endpoint is needed and none is configured ([llm] in groundwire.toml; serve --llm).",
    )

    # The HTTP request (ServiceError). ---------------------------------------------------------------------------
    INVALID_REQUEST = ("invalid_request", "The request body does not match the schema; details lists each field.")
    JUDGE_NOT_AVAILABLE = (
        "judge_not_available",
        "judge=true on a service started without --llm; send the request without judge.",
    )
    MISSING_API_KEY = ("missing_api_key", "The service needs an API key and the request has none.")
    INVALID_API_KEY = ("invalid_api_key", "The API key is not recognised.")
    READ_ONLY_KEY = ("read_only_key", "A read-only API key asked to write.")
    REQUEST_NOT_FOUND = ("request_not_found", "No logged request with this id in the caller's scope.")
    DOCUMENT_NOT_FOUND = (
        "document_not_found",
        "No ingested document with these ids in the caller's scope; details lists them.",
    )
    PROFILE_NOT_FOUND = (
        "profile_not_found",
        "The caller's scope has no domain profile (the service runs without --profiles, or DIR/<scope> is not one).",
    )
    BAD_REQUEST = ("bad_request", "The request body could not be read.")
    MALFORMED_REQUEST = (
        "malformed_request",
        "The request is not valid HTTP/1.1 (a garbage request line, a bad Content-Length or Transfer-Encoding, "
        "invalid chunked framing); the connection is closed.",
    )
    NOT_FOUND = ("not_found", "No such route or static file.")
    METHOD_NOT_ALLOWED = ("method_not_allowed", "The route does not take this HTTP method.")
    HEADER_TIMEOUT = ("header_timeout", "The request headers did not arrive in time; the connection is closed.")
    BODY_TIMEOUT = ("body_timeout", "The request body did not arrive in time; the connection is closed.")
    PAYLOAD_TOO_LARGE = (
        "payload_too_large",
        "The body is over the byte limit; refused before it is parsed, chunked bodies too.",
    )
    TOO_MUCH_WORK = (
        "too_much_work",
        "The request asks for more work than allowed (chunks, characters, claims, pairs); "
        "details.limit names the limit.",
    )
    UNSUPPORTED_CONTENT_ENCODING = (
        "unsupported_content_encoding",
        "The request has a Content-Encoding (gzip, ...) the service does not decode; send the body uncompressed.",
    )
    CLIENT_CLOSED_REQUEST = (
        "client_closed_request",
        "The client disconnected before the answer was ready: its work stopped at its next boundary and nothing was "
        "logged (nginx's 499; no client receives it, /metrics counts it).",
    )
    RATE_LIMITED = ("rate_limited", "Too many requests for this API key; retry after Retry-After.")
    HEADERS_TOO_LARGE = (
        "headers_too_large",
        "The request line and headers are over the byte limit; the connection is closed.",
    )

    # groundwire, the service or the LLM endpoint could not do it. ---------------------------------------------
    LLM_UNAVAILABLE = (
        "llm_unavailable",
        "The LLM endpoint failed after its retries: down, 401, or a reply that is not a chat completion.",
    )
    INTERNAL_ERROR = (
        "internal_error",
        "An unexpected error; the CLI prints one line (--debug for the traceback), the service logs it.",
    )
    NOT_READY = ("not_ready", "The service is starting or shutting down; retry in a moment.")
    BUSY = ("busy", "Every worker is busy and the queue is full; retry after Retry-After.")
    QUEUE_TIMEOUT = (
        "queue_timeout",
        "The request waited for a worker for its whole time budget (serve --time-budget) and did not start "
        "(not logged, as busy is not); retry after Retry-After.",
    )
    TIME_BUDGET_EXCEEDED = (
        "time_budget_exceeded",
        "The work did not finish within the route's time budget (serve --time-budget): answered at the deadline, it "
        "stops at its next boundary (no result is logged). The eval routes answer with what they finished instead "
        "(meta says what).",
    )


class InputError(ValueError):
    """The input cannot be checked as given (empty answer, no context, malformed file...).

    The message always says what was wrong and what to do instead; `code` names the error for a program. The CLI
    exits with the code's exit status (2) and the HTTP service answers with its HTTP status (a 4xx, or 503 for
    llm_not_configured), both printing the code with the message.
    """

    def __init__(self, message: str, *, code: ErrorCode = ErrorCode.INVALID_INPUT) -> None:
        super().__init__(message)
        self.code = code
