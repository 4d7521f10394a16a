"""Figures in text: every number, amount, percentage, date, time and version read into one key per value
(`extract_figures`, `claim_figures`), and text rewritten with each figure in one spelling (`canonical_text`).

Reading: "3,600", "3600" and "three thousand six hundred" have one key; a date or a time that cannot be real
("2010-13-45", "June 31", "25:70") is no figure but text (`unreadable_figures` names it, for the claim's note).
The figure check (checks/figures.py), the context index, canonical figures, novelty and the cache all read
figures here: one parser.

Canonical figures: a cross-encoder sees "3,600" and "3600" as different tokens and can call a claim that
restates a figure in another format a contradiction. `canonical_text` rewrites every figure the parser finds in
one spelling per value, in premise and hypothesis alike:
- numbers without thousands separators ("3,600" -> "3600"), written numbers as digits ("five" -> "5"),
  large round amounts with their scale word ("5,000,000" and "5m" -> "5 million");
- money with its currency sign ("49 dollars", "USD 49" -> "$49");
- percentages with the sign ("50 percent" -> "50%");
- dates as "March 5, 2024" ("2024-03-05", "5th of March 2024"), times on the 24-hour clock ("5 PM" -> "17:00");
- units in one spelling ("5 kilometres" -> "5 km", units.py).

"one" and "zero" stay words ("one of the best" is no figure), as the figure check leaves them out of claims.
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation, localcontext
from functools import lru_cache

from groundwire.core.cancel import checkpoint
from groundwire.core.units import UNIT_SPELLINGS, canonical_unit

_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
# A decimal comma ("99,9%", "2,5 percent") only before a percent: "99,9" is no thousands group, and elsewhere "1,2"
# may be a list.
_DECIMAL_COMMA = r"(?P<decimal_comma>\d+,\d{1,2}(?=\s?(?:%|percent\b|per cent\b)))"
_NUM = rf"{_DECIMAL_COMMA}|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALES = {
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "k": 10**3,
    "m": 10**6,
    "bn": 10**9,
    "b": 10**9,
}
_WORD_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
}

_VERSION_RE = re.compile(r"\bv?(?P<v>\d+\.\d+\.\d+(?:[.-][0-9A-Za-z]+)*|(?<=v)\d+(?:\.\d+)?)\b", re.IGNORECASE)
_ISO_DATE_RE = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")
# "Apr. 18-26": both ends are dates.
_MDY_RANGE_RE = re.compile(
    rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s*[-\u2013]\s*(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b",
    re.IGNORECASE,
)
_MDY_RE = re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b", re.IGNORECASE)
_DMY_RE = re.compile(
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(?P<y>\d{{4}}))?\b", re.IGNORECASE
)
_MY_RE = re.compile(rf"\b{_MONTH}\s+(?:of\s+)?(?P<y>\d{{4}})\b", re.IGNORECASE)
_TIME_RE = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<min>\d{1,2}))?\s*(?P<ampm>[ap]\.?m\.?)(?![a-z])|\b(?P<h24>\d{1,2}):(?P<min24>\d{1,2})\b",
    re.IGNORECASE,
)
# "the 2018-19 season": the second year is 2019, not 19.
_SHORT_YEAR_RANGE_RE = re.compile(
    r"\b(?P<century>1[5-9]|20)(?P<y1>\d{2})\s?[-\u2013/]\s?(?P<y2>\d{2})\b(?![-\u2013/.:]?\d)"
)
# "9 or 10 PM", "9-10 pm": the first hour shares the second one's meridiem.
_SHARED_MERIDIEM_RE = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<min>\d{2}))?(?=\s*(?:or|to|-|\u2013)\s*\d{1,2}(?::\d{2})?\s*(?P<ampm>[ap])\.?m\b)",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(
    rf"(?P<cur>[$€£¥])?\s?(?P<num>{_NUM})(?:\s?(?P<scale>thousand|million|billion|trillion|bn|b|k|m)\b)?"
    r"(?:\s?(?P<pct>%|percent\b|per cent\b))?",
    re.IGNORECASE,
)
_WORD_NUMBER_RE = re.compile(
    r"\b(?P<word>" + "|".join(_WORD_NUMBERS) + r")(?:\s+(?P<scale>thousand|million|billion|trillion))?\b", re.IGNORECASE
)
_CURRENCY_UNITS = frozenset({"dollars", "dollar", "usd", "euros", "euro", "eur", "pounds", "gbp", "yen", "cents"})
_UNIT_RE = re.compile(r"\s?(?P<unit>[a-zA-Z%]+)")
# Word numbers such as "one" are too often not figures ("one of the best"); only claims' larger ones count.
_CLAIM_WORD_NUMBER_MIN = 2
# Numbers that name a passage ("According to passage 2", "(Passage 1:4)", "sources 1 and 3"), a rating
# scale ("3.5 out of 5 stars") or an idiom for "always" ("seven days a week", "24/7") are not facts the
# context must spell out: a claim's figure check skips them (the model still checks the claim).
_NOT_A_FIGURE_RE = re.compile(
    r"\b(?:passage|source|document|doc|chunk|snippet|excerpt|context)s?\s*(?:#|no\.\s*)?\d+(?::\d+)?"
    r"(?:\s*(?:,|and|&|-|\u2013|to|or)\s*\d+(?::\d+)?)*"
    r"|\bout\s+of\s+(?:5|five|10|ten)\s+stars?\b"
    r"|\b(?:seven|7)\s+days\s+a\s+week\b|\b24\s*/\s*7\b|\b24\s+hours\s+a\s+day\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Figure:
    kind: str  # number | money | percent | date | time | version
    key: str  # normalised value compared against the context
    text: str  # as written
    start: int
    unit: str = ""


def extract_figures(text: str, *, include_word_numbers: bool = True) -> list[Figure]:
    """All figures in the text, each once, with overlapping matches resolved in favour of the most specific.

    A date or a time that cannot be real ("2010-13-45", "June 31", "25:70") is no figure: it is text, and its
    numbers are read as numbers (`unreadable_figures` names it, for the claim's note)."""
    return _scan(text, include_word_numbers=include_word_numbers)[0]


def unreadable_figures(text: str) -> tuple[str, ...]:
    """The dates and times in the text that cannot be real, as written: groundwire reads them as text."""
    return _scan(text, include_word_numbers=False)[1]


def _real_date(year: str, month: int, day: int) -> bool:
    """`day` 0: a month without a day ("June 2010"); `year` "*": not given (February 29 may be real)."""
    if not 1 <= month <= 12:
        return False
    # Year 2000 is a leap year: with no year given, February 29 may be real.
    return 0 <= day <= calendar.monthrange(2000 if year == "*" else 2000 + int(year) % 400, month)[1]


def _real_time(hour: int, minute: int, *, meridiem: bool) -> bool:
    return (1 <= hour <= 12 if meridiem else 0 <= hour <= 24) and 0 <= minute <= 59


LONG_TEXT = 10_000
"""Characters from which reading a text's figures is long work, that stops at its time budget (core.cancel)."""


def _no_pause() -> None:
    return None


def _pause_for(text: str) -> Callable[[], None]:
    """A checkpoint for each step of reading a long text's figures; nothing for a short one (a sentence, a window),
    read thousands of times a check."""
    return checkpoint if len(text) >= LONG_TEXT else _no_pause


def _scan(text: str, *, include_word_numbers: bool) -> tuple[list[Figure], tuple[str, ...]]:
    pause = _pause_for(text)
    found: list[Figure] = []
    unreal: list[tuple[int, int, str]] = []
    # Spans taken so far, disjoint and kept sorted, so an overlap check is one bisect (a scan of every taken
    # span made a long run of integers quadratic). Of disjoint spans, the last one starting before `end` is
    # the only one that can reach past `figure.start`.
    starts: list[int] = []
    ends: list[int] = []

    def add(figure: Figure, end: int) -> None:
        at = bisect.bisect_left(starts, end)
        if at and ends[at - 1] > figure.start:
            return
        starts.insert(at, figure.start)
        ends.insert(at, end)
        found.append(figure)

    pause()
    for m in _MDY_RANGE_RE.finditer(text):
        pause()
        month, year = _MONTHS[m.group("month").lower()], m.group("y") or "*"
        first, last = int(m.group("d")), int(m.group("d2"))
        if not (_real_date(year, month, first) and _real_date(year, month, last)) or 0 in (first, last):
            unreal.append((m.start(), m.end(), m.group(0)))
            continue
        add(
            Figure("date", f"{year}-{month:02d}-{first:02d}", m.group(0)[: m.end("d") - m.start()], m.start()),
            m.end("d"),
        )
        add(Figure("date", f"{year}-{month:02d}-{last:02d}", m.group("d2"), m.start("d2")), m.end())
    for regex in (_ISO_DATE_RE, _MDY_RE, _DMY_RE, _MY_RE):
        pause()
        for m in regex.finditer(text):
            pause()
            groups = m.groupdict()
            month = _MONTHS[groups["month"].lower()] if groups.get("month") else int(groups["m"])
            year, day = groups.get("y") or "*", int(groups["d"]) if groups.get("d") else 0
            if not _real_date(year, month, day) or (day == 0 and regex is not _MY_RE):
                unreal.append((m.start(), m.end(), m.group(0)))
                continue
            add(Figure("date", f"{year}-{month:02d}-{day:02d}", m.group(0), m.start()), m.end())
    pause()
    for m in _SHORT_YEAR_RANGE_RE.finditer(text):
        pause()
        add(Figure("number", m.group("century") + m.group("y1"), m.group(0)[:4], m.start()), m.start() + 4)
        first = int(m.group("century") + m.group("y1"))
        second = first - first % 100 + int(m.group("y2")) + (100 if m.group("y2") < m.group("y1") else 0)
        add(Figure("number", str(second), m.group("y2"), m.start("y2")), m.end())
    pause()
    for m in _SHARED_MERIDIEM_RE.finditer(text):
        pause()
        hour, minute = int(m.group("h")), int(m.group("min") or 0)
        if not _real_time(hour, minute, meridiem=True):
            continue  # the hour after it is read on its own
        hour = hour % 12 + (12 if m.group("ampm").lower() == "p" else 0)
        add(Figure("time", f"{hour:02d}:{minute:02d}", m.group(0), m.start()), m.end())
    pause()
    for m in _TIME_RE.finditer(text):
        pause()
        hour = int(m.group("h") or m.group("h24"))
        minute = int(m.group("min") or m.group("min24") or 0)
        ampm = (m.group("ampm") or "").lower().replace(".", "")
        if not _real_time(hour, minute, meridiem=bool(ampm)):
            unreal.append((m.start(), m.end(), m.group(0)))
            continue
        hour = hour % 12 + (12 if ampm == "pm" else 0) if ampm else hour
        add(Figure("time", f"{hour:02d}:{minute:02d}", m.group(0), m.start()), m.end())
    pause()
    for m in _VERSION_RE.finditer(text):
        pause()
        add(Figure("version", m.group("v").lower(), m.group(0), m.start()), m.end())
    pause()
    for m in _NUMBER_RE.finditer(text):
        pause()
        if _inside_word(text, m.start("num"), m.end("num")):
            continue
        value = _to_decimal(m.group("num"), decimal_comma=m.group("decimal_comma") is not None)
        if value is None:
            continue
        scale = (m.group("scale") or "").lower()
        if scale == "b" and not m.group("cur"):
            continue  # "5b" is a label ("Form 5b"); only "$1.6b" is an amount
        exact = _exact_context(len(m.group("num")))
        if scale:
            value = exact.multiply(value, _SCALES[scale])
        kind = "money" if m.group("cur") else "percent" if m.group("pct") else "number"
        unit_match = _UNIT_RE.match(text, m.end())
        unit = canonical_unit(unit_match.group("unit")) if unit_match and kind == "number" else ""
        if unit in _CURRENCY_UNITS:
            kind, unit = "money", ""
        add(Figure(kind, _canonical(value, exact), m.group(0).strip(), m.start(), unit), m.end())
    if include_word_numbers:
        pause()
        for m in _WORD_NUMBER_RE.finditer(text):
            pause()
            count = _WORD_NUMBERS[m.group("word").lower()] * (
                _SCALES[m.group("scale").lower()] if m.group("scale") else 1
            )
            add(Figure("number", str(count), m.group(0), m.start()), m.end())
    # An unreal date that a real one overlaps ("5 June 31": "5 June" is real) is no reading of it.
    read = [(f.start, f.start + len(f.text)) for f in found if f.kind in ("date", "time")]
    unreadable: dict[str, None] = {}
    reach = -1
    for start, end, written in sorted(unreal, key=lambda span: (span[0], -span[1])):
        if end > reach and not any(s < end and start < e for s, e in read):  # not inside a longer unreal one
            unreadable[written] = None
            reach = end
    return sorted(found, key=lambda f: f.start), tuple(unreadable)


def claim_figures(claim: str) -> tuple[Figure, ...]:
    """The figures a claim states (a check reads them once per claim: ClaimState.read_figures)."""
    skipped = [m.span() for m in _NOT_A_FIGURE_RE.finditer(claim)]
    return tuple(
        f
        for f in extract_figures(claim)
        if not (f.text.isalpha() and int(f.key) < _CLAIM_WORD_NUMBER_MIN)
        and not any(start <= claim.find(f.text, f.start) < end for start, end in skipped)
    )


def _to_decimal(raw: str, *, decimal_comma: bool = False) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ".") if decimal_comma else raw.replace(",", ""))
    except InvalidOperation:
        return None


@lru_cache(maxsize=64)
def _exact_context(digits: int) -> Context:
    """Decimal arithmetic with room for every digit written: the default 28 rounded a 32-digit order number,
    so two different ones read alike."""
    return Context(prec=digits + 16)


def _canonical(value: Decimal, exact: Context) -> str:
    normalized = value.normalize(exact)
    return format(normalized, "f") if normalized == normalized.to_integral() else format(normalized, "f").rstrip("0")


def _inside_word(text: str, start: int, end: int) -> bool:
    """Digits glued to letters (COVID-19 is fine, but "MP3", "B2B", "x86") are names, not figures."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    hyphenated_name = before == "-" and start > 1 and text[start - 2].isalpha()
    return before.isalpha() or hyphenated_name or (after.isalpha() and after.lower() not in "kmb")


# ------------------------------------------------------------------ canonical figures
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
    pause = _pause_for(text)
    pause()
    text = _COMPOUND_RE.sub(_compound, text)
    pieces: list[str] = []
    at = 0
    for figure in extract_figures(text):
        pause()
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
