"""Canonical figures in the text a model scores: "3,600", "3600" and "three thousand six hundred" read alike.

A cross-encoder sees "3,600" and "3600" as different tokens and can call a claim that restates a figure in
another format a contradiction. `canonical_text` rewrites every figure the figure check finds (the same parser,
`checks.extract_figures`: one code path) in one spelling per value, in premise and hypothesis alike:

- numbers without thousands separators ("3,600" -> "3600"), written numbers as digits ("five" -> "5"),
  large round amounts with their scale word ("5,000,000" and "5m" -> "5 million");
- money with its currency sign ("49 dollars", "USD 49" -> "$49");
- percentages with the sign ("50 percent" -> "50%");
- dates as "March 5, 2024" ("2024-03-05", "5th of March 2024"), times on the 24-hour clock ("5 PM" -> "17:00");
- units in one spelling ("5 kilometres" -> "5 km", units.py).

"one" and "zero" stay words ("one of the best" is no figure), as the figure check leaves them out of claims.
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext

from groundwire.core.checks import Figure, extract_figures
from groundwire.core.units import UNIT_SPELLINGS

_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_CURRENCY_WORDS = {
    "dollars": "$",
    "dollar": "$",
    "usd": "$",
    "euros": "€",
    "euro": "€",
    "eur": "€",
    "pounds": "£",
    "gbp": "£",
    "yen": "¥",
}
_AFTER_RE = re.compile(r"\s?(?P<word>[A-Za-z]+)\b")
_CURRENCY_BEFORE_RE = re.compile(r"\b(?P<word>usd|eur|gbp)\s?$", re.IGNORECASE)
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ONES = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# "twenty-five" is one number; the figure parser reads its two words apart.
_COMPOUND_RE = re.compile(rf"\b(?P<tens>{'|'.join(_TENS)})[-\s](?P<ones>{'|'.join(_ONES)})\b", re.IGNORECASE)
_SENTENCE_GOES_ON = re.compile(r"\s*[a-z0-9,;]")
"""After "5 p.m." a lower-case word or a comma means its stop was the abbreviation's, not the sentence's."""
_SCALE_NAMES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"))
_WORD_NUMBER_MIN = 2
"""Word numbers below this ("one", "zero") are too often no figure to rewrite."""


def canonical_text(text: str) -> str:
    """The text with each figure in its one spelling (see the module docstring); the rest left as it is."""
    text = _COMPOUND_RE.sub(_compound, text)
    pieces: list[str] = []
    at = 0
    for figure in extract_figures(text):
        # A figure's start may sit on the blank before it (the number pattern allows one after a currency sign).
        start = text.find(figure.text, figure.start)
        end = start + len(figure.text)
        if start < at or _is_small_word(figure):
            continue
        rendered, start, end = _rendered(figure, text, start, end)
        if rendered is None:
            continue
        pieces.append(text[at:start])
        pieces.append(rendered)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _rendered(figure: Figure, text: str, start: int, end: int) -> tuple[str | None, int, int]:
    """The figure's one spelling, and the span it replaces (a currency or unit word beside it included)."""
    if figure.kind == "date":
        return _date(figure.key), start, end
    if figure.kind == "time":
        # "17:00" stays as written; "5 PM" and "5:00 pm" become "17:00".
        hour, minute = figure.key.split(":")
        if figure.text.endswith(".") and _SENTENCE_GOES_ON.match(text, end) is None:
            end -= 1  # "at 5 p.m." ends the sentence too: keep its full stop
        return (f"{int(hour)}:{minute}" if any(c.isalpha() for c in figure.text) else None), start, end
    if figure.kind == "percent":
        return f"{_number(figure.key)}%", start, end
    if figure.kind not in ("number", "money"):
        return None, start, end  # versions are compared as written
    after = _AFTER_RE.match(text, end)
    word = after.group("word").lower() if after else ""
    sign = next((c for c in figure.text[:1] if c in "$€£¥"), "")
    # Only the few characters before the figure: searching from 0 made a text of many figures quadratic.
    before = None if sign else _CURRENCY_BEFORE_RE.search(text, max(0, start - 8), start)
    if before is not None:
        sign, start = _CURRENCY_WORDS[before.group("word").lower()], before.start()
    elif figure.kind == "money" and not sign:
        if after is not None and word in _CURRENCY_WORDS:
            sign, end = _CURRENCY_WORDS[word], after.end()
        else:
            return None, start, end  # "50 cents": no sign to write
    value = _number(figure.key)
    if not sign and after is not None and word in UNIT_SPELLINGS:
        return f"{value} {UNIT_SPELLINGS[word]}", start, after.end()
    return f"{sign}{value}", start, end


def _compound(match: re.Match[str]) -> str:
    return str(10 * (_TENS.index(match.group("tens").lower()) + 2) + _ONES.index(match.group("ones").lower()) + 1)


def _number(key: str) -> str:
    # Exact arithmetic for any length of number: the default 28 digits made quantize raise on 32-digit order
    # numbers, and rounded longer ones.
    with localcontext(prec=len(key) + 16):
        value = Decimal(key)
        for scale, name in _SCALE_NAMES:
            scaled = value / scale
            if abs(value) >= scale and scaled == scaled.quantize(Decimal("0.001")):
                return f"{_plain(scaled)} {name}"
        return _plain(value)


def _plain(value: Decimal) -> str:
    normalized = value.normalize()  # in _number's exact context
    text = format(normalized, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _date(key: str) -> str:
    year, month, day = key.split("-")
    name = _MONTH_NAMES[int(month) - 1]
    parts = name if day == "00" else f"{name} {int(day)}"
    if year == "*":
        return parts
    return f"{parts}, {year}" if day != "00" else f"{parts} {year}"


def _is_small_word(figure: Figure) -> bool:
    return figure.text.isalpha() and figure.key.isdigit() and int(figure.key) < _WORD_NUMBER_MIN
