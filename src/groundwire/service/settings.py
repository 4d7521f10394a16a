"""Service settings: everything `create_app` needs, in one frozen value.

Built by `groundwire serve` from its flags (and groundwire.toml), or directly by tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from groundwire.config import CheckSettings, Config
from groundwire.core.errors import InputError

DEFAULT_SCOPE = "default"


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    db_url: str = "sqlite:///groundwire.db"
    api_keys: dict[str, str] = field(default_factory=dict)
    """API key -> permission scope. Empty means open access in DEFAULT_SCOPE (local use only)."""
    check: CheckSettings = field(default_factory=CheckSettings)
    """How every request is checked (scorer, thresholds, decomposer, require_citations, pruner): groundwire.toml's
    [verify], with `serve`'s flags over it; built by groundwire.pipeline.build_verifier."""
    max_body_bytes: int = 1_000_000
    """Requests with a larger body are refused with 413 before they are parsed."""
    max_chunks: int = 200
    max_text_chars: int = 100_000
    max_context_chars: int = 400_000
    """Per-request work limits (chunks, answer and context characters): more is a 413 naming the limit."""
    review_threshold: float = 0.5
    """Requests whose answer score falls below this go to the review queue."""
    high_risk_patterns: tuple[str, ...] = ()
    """Regexes (case-insensitive); a request whose question or answer matches one goes to the review queue."""
    release: str = "dev"
    """Release tag written on every request-log row, so the eval loop can compare releases."""
    config: Config | None = None
    """LLM endpoint, repair and generation settings; None uses load_config()'s defaults."""
    use_llm: bool = False
    """Use the configured LLM endpoint: /v1/generate, and minimal edits in /v1/repair (else the band is dropped)."""
    cache_threshold: float = 0.97
    history_limit: int = 200

    def __post_init__(self) -> None:
        if self.max_body_bytes <= 0:
            raise InputError("max_body_bytes must be positive")
        for key, scope in self.api_keys.items():
            if not key or not scope:
                raise InputError("API keys and scopes must be non-empty strings")
        for pattern in self.high_risk_patterns:
            _check_pattern(pattern)  # fail at start-up, not on the first request

    @property
    def open_access(self) -> bool:
        return not self.api_keys


def parse_api_keys(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Parse `KEY:SCOPE` pairs (from the command line) into the api_keys mapping."""
    keys: dict[str, str] = {}
    for pair in pairs:
        key, sep, scope = pair.partition(":")
        if not sep or not key or not scope:
            raise InputError(f"an API key must look like KEY:SCOPE (got one starting {pair[:4]!r}...)")
        if key in keys:
            raise InputError(f"API key given twice: {key[:4]}...")
        keys[key] = scope
    return keys


def _check_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise InputError(f"high-risk pattern {pattern!r} is not a valid regex: {error}") from error
