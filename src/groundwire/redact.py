"""Redaction of secrets from text that leaves the process: messages, warnings, log lines, request-log rows.

An endpoint that echoes the Authorization header ("Incorrect API key provided: Bearer sk-...") must not have
that text copied into groundwire's own errors. Registered keys (the configured LLM API key, the service's API
keys) are replaced wherever they occur, in any spelling a URL, a JSON document or a header gives them: as they are,
percent-encoded (either case of hex, `+` for a space, a mix of encoded and plain characters), JSON-escaped (`\\u0041`,
`\\/`), and base64 or base64url (padded or not, itself percent-encoded or not). Bearer tokens and OpenAI-style
`sk-...` keys are replaced by pattern. `redact` is for one text, `redact_data` for a value made of texts (a request-log
row, a JSON document): one function, so every place that writes something down redacts it the same way.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import threading
from collections.abc import Mapping
from typing import TypeVar, cast

REDACTED = "[redacted]"
_TOKEN_RES = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
)
_JSON_SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
_secrets: set[str] = set()
_secrets_re: re.Pattern[str] | None = None
_lock = threading.Lock()
T = TypeVar("T")


def register_secret(secret: str | None) -> None:
    """Redact `secret`, in every spelling, from every later call to redact() in this process (keys of 4+
    characters)."""
    global _secrets_re
    if secret and len(secret) >= 4:
        with _lock:
            if secret not in _secrets:
                _secrets.add(secret)
                _secrets_re = _compile(_secrets)


def redact(text: str) -> str:
    with _lock:
        secrets_re = _secrets_re
    if secrets_re is not None:
        text = secrets_re.sub(REDACTED, text)
    for pattern in _TOKEN_RES:
        text = pattern.sub(lambda match: (match.group(1) if match.groups() else "") + REDACTED, text)
    return text


def redact_data(value: T) -> T:
    """`value` with every text in it redacted: strings, and the strings inside mappings, lists, tuples and dataclass
    instances (a copy; `value` is not changed). Other values are returned as they are."""
    if isinstance(value, str):
        return cast(T, redact(value))
    if isinstance(value, Mapping):
        return cast(T, {redact_data(key): redact_data(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        items = [redact_data(item) for item in value]
        return cast(T, items if isinstance(value, list) else tuple(items))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: redact_data(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return cast(T, dataclasses.replace(value, **changes))
    return value


# --- the spellings of a secret ----------------------------------------------------------------------------------


def _compile(secrets: set[str]) -> re.Pattern[str]:
    """One pattern for every spelling of every secret, longest secret first (so that a key inside a longer one is
    not redacted in part)."""
    forms = []
    starts = {"%", "\\", "+"}  # the first character of an escaped spelling
    for secret in sorted(secrets, key=len, reverse=True):
        forms.append(_spelled(secret))
        starts.add(secret[0])
        raw = secret.encode()
        for encoded in {base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()}:
            bare = encoded.rstrip("=")
            padding = len(encoded) - len(bare)
            forms.append(_spelled(bare) + (f"(?:{_char('=')}){{0,{padding}}}" if padding else ""))
            starts.add(bare[0])
    # The lookahead lets the regex engine skip, at C speed, every position no spelling can start at (about 3 times
    # faster on a long context than the alternation alone).
    first = "".join(re.escape(char) for char in sorted(starts))
    return re.compile(f"(?=[{first}])(?:{'|'.join(forms)})")


def _spelled(text: str) -> str:
    """A pattern for `text` with each character as itself, percent-encoded or JSON-escaped."""
    return "".join(f"(?:{_char(char)})" for char in text)


def _char(char: str) -> str:
    """A pattern for one character in any spelling: itself, its UTF-8 bytes percent-encoded (hex in either case),
    `+` for a space, and JSON's escapes (\\uXXXX in either case, and the short ones such as \\/)."""
    spellings = [re.escape(char), "".join(f"%{_any_case(f'{byte:02X}')}" for byte in char.encode())]
    if char == " ":
        spellings.append(r"\+")
    if char in _JSON_SHORT_ESCAPES:
        spellings.append(re.escape("\\" + _JSON_SHORT_ESCAPES[char]))
    units = char.encode("utf-16-be")
    spellings.append("".join(rf"\\u{_any_case(units[at:at + 2].hex().upper())}" for at in range(0, len(units), 2)))
    return "|".join(spellings)


def _any_case(hex_digits: str) -> str:
    return "".join(f"[{digit}{digit.lower()}]" if digit.isalpha() else digit for digit in hex_digits)
