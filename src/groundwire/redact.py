"""Redaction of secrets from text that leaves the process: messages, warnings, log lines, request-log rows.

An endpoint that echoes the Authorization header ("Incorrect API key provided: Bearer sk-...") must not have
that text copied into groundwire's own errors. Registered keys (the configured LLM API key, the service's API
keys) are replaced wherever they occur; bearer tokens and OpenAI-style `sk-...` keys are replaced by pattern.
"""

from __future__ import annotations

import re
import threading

REDACTED = "[redacted]"
_TOKEN_RES = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
)
_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Redact `secret` from every later call to redact() in this process (keys of 4+ characters)."""
    if secret and len(secret) >= 4:
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    for pattern in _TOKEN_RES:
        text = pattern.sub(lambda match: (match.group(1) if match.groups() else "") + REDACTED, text)
    return text
