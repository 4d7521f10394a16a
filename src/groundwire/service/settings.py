"""Service settings: everything `create_app` needs, in one frozen value.

Built by `groundwire serve` from its flags (and groundwire.toml), or directly by tests.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from groundwire.foundation.errors import ErrorCode, InputError

if TYPE_CHECKING:
    from groundwire.config import CheckSettings, Config
    from groundwire.evaluation.review_order import QueueOrder

DEFAULT_SCOPE = "default"


def _default_check() -> CheckSettings:
    # Lazy: `groundwire serve` reads this module's defaults for its --help; the settings (pydantic) load when a
    # ServiceSettings is built.
    from groundwire.config import CheckSettings

    return CheckSettings()


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    db_url: str = "sqlite:///groundwire.db"
    api_keys: dict[str, str] = field(default_factory=dict)
    """API key -> permission scope. Empty means open access in DEFAULT_SCOPE (local use only)."""
    read_only_keys: frozenset[str] = frozenset()
    """Keys of api_keys that may verify, repair, generate and read, but not ingest, give feedback or record an
    eval run (403)."""
    check: CheckSettings = field(default_factory=_default_check)
    """How every request is checked (scorer, thresholds, decomposer, require_citations, pruner): groundwire.toml's
    [verify], with `serve`'s flags over it; built by groundwire.pipeline.build_verifier."""
    profiles: str | None = None
    """A directory of domain profiles, one folder per scope (DIR/<scope>/profile.json, `groundwire adapt`): each
    scope's checks are routed by its own, read at start and again when it changes (service/profiles.py)."""
    learn: bool = False
    """With `profiles` (`serve --learn`): refit a scope's profile from its logged labels after every `learn_every`
    new reviewer verdicts in it, in the background, guarded (service/learning.py, calibration/learn.py)."""
    learn_every: int = 25
    """Verdicts per scope between refits: about a week's reviews of a small deployment, and few enough that a refit (a
    check of every labelled answer by the base model) stays a small share of the service's work."""
    judge_labels: bool = False
    """`serve --judge-labels`: when the LLM judge settles an escalated answer (a request with judge=true whose every
    escalated claim it ruled on), keep its verdict as a label of kind "judge" (data/store/judge_labels.py), apart
    from reviewers' verdicts; with `learn`, a scope's refits then fit on both kinds, a judge's label counting as
    `judge_weight` of a person's, and count judge labels toward `learn_every`. Off: the judge teaches nothing."""
    judge_weight: float = 1.0
    """How much a judge's label counts against a reviewer's in a refit (`--judge-weight`, in (0, 1]); the default is
    calibration.adapt.DEFAULT_JUDGE_WEIGHT's."""
    judge_error: float | Literal["auto"] = 0.0
    """The share of the judge's labels that are wrong (`--judge-error`, in [0, 0.5)), which a refit's thresholds
    correct for (operating.thresholds_for_targets' label_errors); 0 takes them as right. "auto": each refit measures
    it on the scope's answers a reviewer also labelled (calibration.judge_error: at least MIN_OVERLAP of them, else
    0, the reason recorded in the profile's history)."""
    max_body_bytes: int = 1_000_000
    """Requests with a larger body are refused with 413 before they are parsed."""
    body_timeout_s: float = 30.0
    """A request body must arrive within this many seconds of being awaited; else 408 and the connection closes."""
    header_timeout_s: float = 10.0
    """A request's headers must arrive within this many seconds of the connection opening (or of the previous
    response on it); else 408 and the connection closes (`groundwire serve`: service/headertimeout.py)."""
    max_header_bytes: int = 16_384
    """A request line and headers over this many bytes get 431 and the connection closes (`groundwire serve`:
    service/headertimeout.py). h11, which uvicorn uses, bounds only headers that arrive in pieces, at 16 KiB."""
    max_chunks: int = 200
    max_text_chars: int = 100_000
    max_context_chars: int = 400_000
    """Per-request work limits (chunks, answer and context characters): more is a 413 naming the limit."""
    max_claims: int = 100
    max_pairs: int = 1_000
    """Claims in the answer and (claim, window) pairs to score, counted before scoring: more is a 413. What the
    largest accepted request costs at these limits: docs/service.md, "Limits" (bench/request_cost.py)."""
    eval_max_corpus_chars: int = 1_000_000
    eval_max_pairs: int = 5_000
    """The eval loop's routes look the claims of failed requests up in the scope's ingested documents: a call embeds
    all of them (docs/service.md, "Limits", says how fast), so they may hold at most eval_max_corpus_chars
    characters, and its checks of the claims against the nearest ones may score at most eval_max_pairs (claim,
    window) pairs in all, each at most max_pairs. A failure not looked up counts as undetermined, and the response's
    meta.evidence says how many and why."""
    refit_target_far: float = 0.10
    refit_target_frr: float = 0.10
    refit_confidence: float = 0.9
    """The targets of the labels section of /v1/eval and the dashboard (what `groundwire adapt --from-log` would fit
    on a scope's reviews): give the ones adapt is run with, so that the refit shown is the profile it would write.
    The defaults are adapt's (calibration.adapt.Targets)."""
    time_budget_s: float = 30.0
    """Every route that runs on the worker pool (verify, repair, generate, the eval loop's) must answer within this
    many seconds of the request's arrival, waiting for a worker included (service/cancellation.py): a check still
    waiting then gets 503 `queue_timeout`, one still running is stopped at its next boundary and gets 504
    `time_budget_exceeded` (generate's attempts share it), and the eval routes answer with what they finished
    (meta.evidence says what was left out). A request whose client disconnects stops at its next boundary too."""
    workers: int | None = None
    """Checks (verify, repair, generate, and the eval loop's routes) that run at once; None: the usable cores, at
    least 2 (service/workers.py)."""
    max_waiting: int = 32
    """Checks that may wait for a worker; one more is refused at once with 503 `busy` naming the limit."""
    max_waiting_per_scope: int | None = None
    """Checks of one permission scope that may wait; one more of that scope is refused with 503 `busy` naming the
    limit, even with places free, so that one scope's flood cannot take every place and have the other scopes
    refused. None: half of max_waiting (rounded up) when the API keys name two or more scopes, else max_waiting
    (`waiting_places_per_scope`)."""
    refusal_rate: float = 60.0
    """Refusals under load (503 `busy`, 429 `rate_limited`) sent per second at most, over the whole service; past it
    a refusal waits its turn, at most 1 s (never past its Retry-After), and never for a worker (service/workers.py,
    RefusalPace). Clients that send a refused request again at once otherwise keep the event loop answering them,
    on the GIL the checks need (docs/service.md, "Under load", has what each rate measured). 0: no pacing."""
    reserved_workers: int = 1
    """Workers beside `workers` that only small checks may use, when every other worker is busy and one of them with
    a check that is not small, so that a small check is not stuck behind large ones (service/workers.py); 0: none."""
    small_pairs: int = 50
    """A verify or repair is small when its plan scores at most this many (claim, window) pairs (with a cascade, in
    all its stages together), it calls no LLM, and its answer and context hold at most `small_chars` characters
    (what such a check costs: docs/service.md, "Limits")."""
    small_chars: int = 20_000
    """The estimate made before a worker is taken: only a request whose answer and context are at most this long
    may be planned on a reserved worker, so the estimate itself stays cheap (docs/service.md, "Limits")."""
    review_threshold: float | None = None
    """Requests whose answer score falls below this also go to the review queue (reason `low_score`). None (the
    default): the routing decides, as every escalated answer is queued (evaluation/review_order.py)."""
    review_order: QueueOrder = "teach"
    """The review queue's default order: "teach" (the verdicts that would move the routing most first) or
    "arrival" (newest first); `GET /v1/review?order=` picks per request."""
    review_audit_share: float = 0.15
    """The share of accepted and rejected answers also queued for review (by a hash of the request id), so that
    reviewers' labels can show the routing's own false accepts (evaluation/review_order.py says why 15%: its
    DEFAULT_AUDIT_SHARE, written out here so that `groundwire --help` loads no evaluation module; a test keeps the
    two equal)."""
    review_window: int = 2000
    """The newest unreviewed requests of a scope the review queue is drawn from (its work is bounded)."""
    high_risk_patterns: tuple[str, ...] = ()
    """Regexes (case-insensitive); a request whose question or answer matches one goes to the review queue."""
    release: str = "dev"
    """Release tag written on every request-log row, so the eval loop can compare releases."""
    config: Config | None = None
    """LLM endpoint, repair and generation settings; None uses load_config()'s defaults."""
    use_llm: bool = False
    """Use the configured LLM endpoint: /v1/generate, and minimal edits in /v1/repair (else the band is dropped)."""
    cache_threshold: float = 0.92
    """The semantic cache's cosine threshold (data.cache.DEFAULT_THRESHOLD; its guard decides the rest)."""
    history_limit: int = 200
    rate_limit: str | None = None
    """Requests per API key (or client address without keys), e.g. "60/minute"; None: no limit. Over it: 429."""

    def __post_init__(self) -> None:
        from groundwire.evaluation.review_order import check_audit_share, check_order

        check_audit_share(self.review_audit_share)
        check_order(self.review_order)
        if self.review_window <= 0:
            raise InputError("review_window must be positive", code=ErrorCode.INVALID_SETTINGS)
        if self.max_body_bytes <= 0:
            raise InputError("max_body_bytes must be positive", code=ErrorCode.INVALID_SETTINGS)
        if self.body_timeout_s <= 0:
            raise InputError("body_timeout_s must be positive", code=ErrorCode.INVALID_SETTINGS)
        if self.header_timeout_s <= 0:
            raise InputError("header_timeout_s must be positive", code=ErrorCode.INVALID_SETTINGS)
        if not 0 < self.time_budget_s < math.inf:
            raise InputError("time_budget_s must be a positive number of seconds", code=ErrorCode.INVALID_SETTINGS)
        if not 0 < self.judge_weight <= 1:
            raise InputError(f"judge_weight must be in (0, 1] (how much a judge's label counts against a reviewer's), "
                             f"got {self.judge_weight:g}", code=ErrorCode.INVALID_SETTINGS)
        if self.judge_error != "auto" and not (isinstance(self.judge_error, int | float)
                                                and not isinstance(self.judge_error, bool)
                                                and 0 <= self.judge_error < 0.5):
            raise InputError(f"judge_error must be in [0, 0.5) (the share of the judge's labels that are wrong) or "
                             f"\"auto\" (measured on answers a reviewer also labelled), got {self.judge_error!r}",
                             code=ErrorCode.INVALID_SETTINGS)
        if not (0 < self.refit_target_far < 1 and 0 < self.refit_target_frr < 1 and 0.5 <= self.refit_confidence < 1):
            raise InputError("refit_target_far and refit_target_frr must be strictly between 0 and 1, and "
                             "refit_confidence in [0.5, 1)", code=ErrorCode.INVALID_SETTINGS)
        if self.max_header_bytes <= 0:
            raise InputError("max_header_bytes must be positive", code=ErrorCode.INVALID_SETTINGS)
        if min(self.eval_max_pairs, self.eval_max_corpus_chars) < 0:
            raise InputError("eval_max_pairs and eval_max_corpus_chars must be at least 0",
                             code=ErrorCode.INVALID_SETTINGS)
        if (self.workers is not None and self.workers < 1) or self.max_waiting < 0:
            raise InputError("workers must be at least 1 and max_waiting at least 0", code=ErrorCode.INVALID_SETTINGS)
        if self.max_waiting_per_scope is not None and not 0 <= self.max_waiting_per_scope <= self.max_waiting:
            raise InputError(f"max_waiting_per_scope must be between 0 and max_waiting ({self.max_waiting})",
                             code=ErrorCode.INVALID_SETTINGS)
        if not 0 <= self.refusal_rate < math.inf:
            raise InputError("refusal_rate must be a number of refusals a second, at least 0 (0: no pacing)",
                             code=ErrorCode.INVALID_SETTINGS)
        if min(self.reserved_workers, self.small_pairs, self.small_chars) < 0:
            raise InputError("reserved_workers, small_pairs and small_chars must be at least 0",
                             code=ErrorCode.INVALID_SETTINGS)
        for key, scope in self.api_keys.items():
            if not key or not scope:
                raise InputError("API keys and scopes must be non-empty strings", code=ErrorCode.INVALID_SETTINGS)
        if not self.read_only_keys <= self.api_keys.keys():
            raise InputError("every read-only key must also be one of api_keys", code=ErrorCode.INVALID_SETTINGS)
        for pattern in self.high_risk_patterns:
            _validate_pattern(pattern)  # fail at start-up, not on the first request
        if self.rate_limit is not None:  # the limiter (and FastAPI, for its 429) loads only when a limit is set
            from groundwire.service.ratelimit import validate_rate_limit

            validate_rate_limit(self.rate_limit)

    @property
    def open_access(self) -> bool:
        return not self.api_keys

    @property
    def waiting_places_per_scope(self) -> int:
        """max_waiting_per_scope, or its default: half of max_waiting (rounded up) once two or more scopes share
        the service (one scope's flood then leaves the other half to the rest), else all of it."""
        if self.max_waiting_per_scope is not None:
            return self.max_waiting_per_scope
        return (self.max_waiting + 1) // 2 if len(set(self.api_keys.values())) > 1 else self.max_waiting


ACCESS = {"rw": False, "ro": True}
"""The optional third part of a key on the command line: read-write (the default) or read-only."""


def parse_api_keys(pairs: list[str] | tuple[str, ...]) -> tuple[dict[str, str], frozenset[str]]:
    """Parse `KEY:SCOPE` or `KEY:SCOPE:ro` (from the command line) into api_keys and read_only_keys."""
    keys: dict[str, str] = {}
    read_only: set[str] = set()
    for pair in pairs:
        key, sep, scope = pair.partition(":")
        access = "rw"
        head, colon, tail = scope.rpartition(":")
        if colon and tail in ACCESS:
            scope, access = head, tail
        if not sep or not key or not scope:
            raise InputError(f"an API key must look like KEY:SCOPE or KEY:SCOPE:ro (got one starting {pair[:4]!r}...)",
                             code=ErrorCode.INVALID_SETTINGS)
        if key in keys:
            raise InputError(f"API key given twice: {key[:4]}...", code=ErrorCode.INVALID_SETTINGS)
        keys[key] = scope
        if ACCESS[access]:
            read_only.add(key)
    return keys, frozenset(read_only)


def api_key_file_entries(text: str) -> list[str]:
    """The `KEY:SCOPE[:ro]` entries of an API key file (`serve --api-key-file`): one a line, as --api-key takes
    them; blank lines and lines starting with # are skipped."""
    lines = (line.strip() for line in text.removeprefix("\ufeff").splitlines())  # a BOM is not part of a key
    return [line for line in lines if line and not line.startswith("#")]


def _validate_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise InputError(f"high-risk pattern {pattern!r} is not a valid regex: {error}",
                         code=ErrorCode.INVALID_SETTINGS) from error
