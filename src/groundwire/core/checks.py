"""Deterministic checks and output validators: no model, no network, exact and cheap, run first.

Figure checks: every number, percentage, amount of money, date, time, version string and quantity in a
claim must appear in the context, compared after normalisation (3,600 == 3600, 5 million == 5,000,000,
50 percent == 50%, 5 PM == 17:00). A figure missing from the context makes the claim NOT_FOUND; when the
context states a figure of the same kind in a sentence about the same thing, the claim is a candidate
for CONTRADICTED. Opening hours claimed for days ("11 am to 9 pm on weekdays") are checked day by day
against a schedule the context lists per day (hours.py), and a JSON record's yes/no attributes against
what a claim says of them (attributes.py).
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal, InvalidOperation
from enum import StrEnum
from functools import lru_cache

from groundwire.core.attributes import RecordAttribute, attribute_mismatches, record_attributes
from groundwire.core.claims import cited_ids, sentences
from groundwire.core.hours import HoursMismatch, context_schedule, hours_mismatches
from groundwire.core.textutil import content_words, has_negation, sentence_spans, stem, word_share
from groundwire.core.types import REFUSAL_TOKEN, Chunk, Claim, Finding, Verdict
from groundwire.core.units import canonical_unit

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
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
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


def _scan(text: str, *, include_word_numbers: bool) -> tuple[list[Figure], tuple[str, ...]]:
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

    for m in _MDY_RANGE_RE.finditer(text):
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
        for m in regex.finditer(text):
            groups = m.groupdict()
            month = _MONTHS[groups["month"].lower()] if groups.get("month") else int(groups["m"])
            year, day = groups.get("y") or "*", int(groups["d"]) if groups.get("d") else 0
            if not _real_date(year, month, day) or (day == 0 and regex is not _MY_RE):
                unreal.append((m.start(), m.end(), m.group(0)))
                continue
            add(Figure("date", f"{year}-{month:02d}-{day:02d}", m.group(0), m.start()), m.end())
    for m in _SHORT_YEAR_RANGE_RE.finditer(text):
        add(Figure("number", m.group("century") + m.group("y1"), m.group(0)[:4], m.start()), m.start() + 4)
        first = int(m.group("century") + m.group("y1"))
        second = first - first % 100 + int(m.group("y2")) + (100 if m.group("y2") < m.group("y1") else 0)
        add(Figure("number", str(second), m.group("y2"), m.start("y2")), m.end())
    for m in _SHARED_MERIDIEM_RE.finditer(text):
        hour, minute = int(m.group("h")), int(m.group("min") or 0)
        if not _real_time(hour, minute, meridiem=True):
            continue  # the hour after it is read on its own
        hour = hour % 12 + (12 if m.group("ampm").lower() == "p" else 0)
        add(Figure("time", f"{hour:02d}:{minute:02d}", m.group(0), m.start()), m.end())
    for m in _TIME_RE.finditer(text):
        hour = int(m.group("h") or m.group("h24"))
        minute = int(m.group("min") or m.group("min24") or 0)
        ampm = (m.group("ampm") or "").lower().replace(".", "")
        if not _real_time(hour, minute, meridiem=bool(ampm)):
            unreal.append((m.start(), m.end(), m.group(0)))
            continue
        hour = hour % 12 + (12 if ampm == "pm" else 0) if ampm else hour
        add(Figure("time", f"{hour:02d}:{minute:02d}", m.group(0), m.start()), m.end())
    for m in _VERSION_RE.finditer(text):
        add(Figure("version", m.group("v").lower(), m.group(0), m.start()), m.end())
    for m in _NUMBER_RE.finditer(text):
        if _inside_word(text, m.start("num"), m.end("num")):
            continue
        value = _to_decimal(m.group("num"))
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
        for m in _WORD_NUMBER_RE.finditer(text):
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


@lru_cache(maxsize=4096)
def claim_figures(claim: str) -> tuple[Figure, ...]:
    """The figures a claim states. Cached: a check asks for them twice per claim (the figure check, and whether
    every figure is in the context)."""
    skipped = [m.span() for m in _NOT_A_FIGURE_RE.finditer(claim)]
    return tuple(
        f
        for f in extract_figures(claim)
        if not (f.text.isalpha() and int(f.key) < _CLAIM_WORD_NUMBER_MIN)
        and not any(start <= claim.find(f.text, f.start) < end for start, end in skipped)
    )


@dataclass(frozen=True, slots=True)
class ContextIndex:
    """The context's figures, precomputed once per request."""

    keys: frozenset[str]
    dates: tuple[Figure, ...]
    years: frozenset[str]
    sentences: tuple[tuple[str, frozenset[str], tuple[Figure, ...]], ...]
    """The sentences that hold a figure, with their content words and figures."""
    schedule: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Opening hours per day, where the context lists them day by day (a business record)."""
    attributes: tuple[RecordAttribute, ...] = ()
    """Yes/no/not-given attributes of the JSON records among the chunks."""
    texts: tuple[str, ...] = ()
    """The chunks' texts as scored, for checks that ask whether the context names something at all."""

    @classmethod
    def build(cls, chunks: Sequence[Chunk], *, sources: Sequence[Chunk] = ()) -> ContextIndex:
        """`sources`: the chunks as retrieved, where `chunks` are their rendered statements (a JSON record's
        attributes are read from the record itself)."""
        keys: set[str] = set()
        dates: list[Figure] = []
        years: set[str] = set()
        rows = []
        for chunk in chunks:
            for start, end in sentence_spans(chunk.text):
                sentence = chunk.text[start:end]
                figures = tuple(extract_figures(sentence))
                for figure in figures:
                    keys.add(_match_key(figure))
                    if figure.kind == "date":
                        dates.append(figure)
                        years.add(figure.key[:4])
                    elif figure.kind == "number" and len(figure.key) == 4:
                        years.add(figure.key)
                if figures:
                    rows.append((sentence, frozenset(content_words(sentence)), figures))
        texts = dict.fromkeys(chunk.text for chunk in (*chunks, *sources))
        return cls(
            frozenset(keys),
            tuple(dates),
            frozenset(years),
            tuple(rows),
            context_schedule(chunk.text for chunk in chunks),
            record_attributes(texts),
            tuple(chunk.text for chunk in chunks),
        )

    def has(self, figure: Figure) -> bool:
        if figure.kind == "date":
            return self._has_date(figure)
        # "in 2013" is supported by "in July 2013": the context's dates count as their years.
        if figure.kind == "number" and figure.key in self.years and _looks_like_year(figure.key):
            return True
        return _match_key(figure) in self.keys

    def _has_date(self, figure: Figure) -> bool:
        year, month, day = figure.key.split("-")
        if year != "*" and year not in self.years:
            return False
        for other in self.dates:
            o_year, o_month, o_day = other.key.split("-")
            if o_month != month:
                continue
            if year != "*" and o_year not in ("*", year):
                continue
            if day != "00" and o_day not in ("00", day):
                continue
            return True
        return False

    def conflicting(self, figure: Figure, claim_words: frozenset[str]) -> str | None:
        """A context figure of the same kind in a sentence about the same thing, if any."""
        best: tuple[int, str] | None = None
        for _sentence, sentence_words, figures in self.sentences:
            overlap = len(claim_words & sentence_words)
            if overlap < 2:
                continue
            for other in figures:
                same_kind = other.kind == figure.kind and other.unit == figure.unit and other.key != figure.key
                if same_kind and (best is None or overlap > best[0]):
                    best = (overlap, other.text)
        return best[1] if best else None


def figure_findings(claim: str, context: ContextIndex) -> list[Finding]:
    """One finding per claim figure that the context does not contain."""
    findings: list[Finding] = []
    claim_words = frozenset(content_words(claim))
    for figure in claim_figures(claim):
        if context.has(figure):
            continue
        conflict = context.conflicting(figure, claim_words)
        if conflict is not None:
            findings.append(
                Finding(
                    "figure_conflict",
                    f"{figure.kind} {figure.text!r} is not in the context, which says {conflict!r} about this",
                    Verdict.CONTRADICTED,
                )
            )
        else:
            findings.append(
                Finding(
                    "figure_not_in_context",
                    f"{figure.kind} {figure.text!r} does not appear in the context",
                    Verdict.NOT_FOUND,
                )
            )
    return findings + _hours_findings(claim, context.schedule) + _attribute_findings(claim, context.attributes)


def _attribute_findings(claim: str, attributes: Sequence[RecordAttribute]) -> list[Finding]:
    findings = []
    for mismatch in attribute_mismatches(claim, attributes):
        attribute = mismatch.attribute
        name = f"{attribute.group} {attribute.name}" if attribute.group else attribute.name
        if attribute.value is None:
            findings.append(
                Finding("attribute_not_given", f"the record does not say whether {name!r}", Verdict.NOT_FOUND)
            )
        else:
            findings.append(
                Finding(
                    "attribute_conflict",
                    f"the record says {name!r} is {'yes' if attribute.value else 'no'}",
                    Verdict.CONTRADICTED,
                )
            )
    return findings


def _hours_findings(claim: str, schedule: Mapping[str, tuple[int, int]]) -> list[Finding]:
    """One finding per claimed time range whose days the context's schedule contradicts or does not list:
    each of its times can appear in the record while the days they are claimed for are wrong."""
    by_range: dict[str, list[HoursMismatch]] = {}
    for mismatch in hours_mismatches(claim, schedule):
        by_range.setdefault(mismatch.claimed, []).append(mismatch)
    findings = []
    for claimed, mismatches in by_range.items():
        listed = [f"{m.day.capitalize()} {m.listed}" for m in mismatches if m.listed]
        unlisted = [m.day.capitalize() for m in mismatches if not m.listed]
        if listed:
            findings.append(
                Finding(
                    "figure_conflict",
                    f"hours {claimed!r} are not what the context lists for those days: {', '.join(listed)}",
                    Verdict.CONTRADICTED,
                )
            )
        else:
            findings.append(
                Finding(
                    "figure_not_in_context",
                    f"hours {claimed!r}: the context lists no hours for {', '.join(unlisted)}",
                    Verdict.NOT_FOUND,
                )
            )
    return findings


_NEGATION_OVERLAP = 0.6
"""Only a near-restatement counts: most of the claim's content words must be in the evidence sentence."""
_NEGATED_CLAUSE_OVERLAP = 0.5
"""A negated clause is about the other text when half its content words occur there, and is matched by a
negated clause of the other text that holds half of them."""
_CLAUSE_BREAK_RE = re.compile(
    r"[,;()\u2014\u2013]|\s-\s|\b(?:but|while|whereas|although|though|which|who|whom)\b"
    r"|\band\s+(?=(?:the|a|an|it|its|they|their|he|his|she|her|we|this|these|those|there)\b)",
    re.IGNORECASE,
)
# Phrases with a negation word that negate nothing in the sentence ("can't wait for", "whether or not").
_NEGATION_IDIOM_RE = re.compile(
    r"\b(?:can(?:no|')t\s+wait|or\s+not|not\s+only|not\s+just|no\s+doubt|no\s+matter|not\s+to\s+mention)\b",
    re.IGNORECASE,
)
# "not with the launch but with the way": the "not" clause is the contrast, not a claim about the launch.
_CONTRASTIVE_NOT_RE = re.compile(r"^\s*(?:(?:and|yet|but)\s+)?not\b", re.IGNORECASE)
# "to prevent birds from becoming used to it" says what "so birds do not become used to it" says.
_IMPLICIT_NEGATION = frozenset(
    {"prevent", "prevents", "prevented", "preventing", "avoid", "avoids", "avoided", "avoiding"}
)

# Complementary words: "not open" says what "closed" says, so a negated clause whose word's complement stands in
# the other text is matched by it ("The library is not open on Sundays" / "The library is closed on Sundays").
_COMPLEMENTS = (
    ("open", "opened"),
    ("closed", "shut"),
    ("allowed", "permitted", "allow", "permit"),
    ("banned", "forbidden", "prohibited", "ban", "forbid", "prohibit"),
    ("available",),
    ("unavailable",),
    ("possible",),
    ("impossible",),
    ("legal",),
    ("illegal",),
    ("able",),
    ("unable",),
    ("present",),
    ("absent",),
    ("alive",),
    ("dead",),
    ("true",),
    ("false",),
    ("included", "include"),
    ("excluded", "exclude"),
    ("required", "mandatory", "compulsory"),
    ("optional", "voluntary"),
    ("charge", "charges", "fee", "fees", "paid"),
    ("free",),
    ("known",),
    ("unknown",),
    ("complete", "completed"),
    ("incomplete", "unfinished"),
    ("pass", "passed"),
    ("fail", "failed"),
)
_COMPLEMENT_OF: dict[str, frozenset[str]] = {
    stem(word): frozenset(stem(w) for w in _COMPLEMENTS[i ^ 1])
    for i, group in enumerate(_COMPLEMENTS)
    for word in group
}


def negation_finding(claim: str, evidence: str | None) -> Finding | None:
    """A signal, not a verdict: the claim restates its best evidence sentence with the negation flipped.

    Negations are compared clause by clause: a negated clause counts when it is about the other text and
    that text has no negated clause to match it. So in "It was not known who was aboard the aircraft,
    which the NTSB said was a Cessna", the "not" says nothing about "The aircraft was a Cessna", and
    "described the video but did not post it" matches itself however the claim words are spread.
    """
    if evidence is None:
        return None
    claim_words, evidence_words = set(content_words(claim)), set(content_words(evidence))
    if word_share(claim_words, evidence_words) < _NEGATION_OVERLAP:
        return None
    claim_negated, evidence_negated = _negated_clauses(claim), _negated_clauses(evidence)
    if _unmatched_negation(claim_negated, evidence_words, evidence_negated):
        return Finding("negation_mismatch", "only the claim is negated", None)
    if _unmatched_negation(evidence_negated, claim_words, claim_negated):
        return Finding("negation_mismatch", "only the evidence is negated", None)
    return None


def _negated_clauses(text: str) -> list[set[str]]:
    text = _NEGATION_IDIOM_RE.sub(" ", text)
    clauses: list[set[str]] = []
    start = 0
    for match in [*_CLAUSE_BREAK_RE.finditer(text), None]:
        clause = text[start : match.start() if match else len(text)]
        contrast = match is not None and match.group(0).lower() == "but" and _CONTRASTIVE_NOT_RE.match(clause)
        negated = has_negation(clause) or not _IMPLICIT_NEGATION.isdisjoint(clause.lower().split())
        if negated and not contrast and (words := set(content_words(clause))):
            clauses.append(words)
        start = match.end() if match else len(text)
    return clauses


def _unmatched_negation(negated: list[set[str]], other_words: set[str], other_negated: list[set[str]]) -> bool:
    """Some negated clause is about the other text (`other_words`) and no negated clause there matches it
    (shares half the content words of the shorter of the two clauses)."""
    for words in negated:
        if word_share(words, other_words) < _NEGATED_CLAUSE_OVERLAP:
            continue
        if any(_COMPLEMENT_OF.get(word, frozenset()) & other_words for word in words):
            continue  # "not open" against "closed": the other text says it with the complement
        if not any(len(words & o) >= _NEGATED_CLAUSE_OVERLAP * min(len(words), len(o)) for o in other_negated):
            return True
    return False


# ---------------------------------------------------------------------------------------------- validators


def resolve_cited_id(raw: str, chunk_ids: Sequence[str]) -> str | None:
    """Map a citation marker's id to a retrieved chunk id ("Source 2" and "2" mean S2), or None."""
    if raw in chunk_ids:
        return raw
    digits = re.fullmatch(r"(?:Source\s*)?(\d+)", raw, re.IGNORECASE)
    if digits and f"S{digits.group(1)}" in chunk_ids:
        return f"S{digits.group(1)}"
    return None


def validate_output(answer: str, chunks: Sequence[Chunk], *, require_citations: bool = False) -> list[Finding]:
    """Answer-level validators: empty answer, misplaced refusal token, fabricated and missing citations."""
    stripped = answer.strip()
    if not stripped:
        return [Finding("empty_answer", "the answer is empty", Verdict.NOT_FOUND)]
    findings: list[Finding] = []
    if REFUSAL_TOKEN in stripped and stripped != REFUSAL_TOKEN:
        findings.append(
            Finding("refusal_token_not_alone", f"{REFUSAL_TOKEN} must be the whole answer, not part of it", None)
        )
    chunk_ids = [chunk.id for chunk in chunks]
    for raw in cited_ids(answer):
        if resolve_cited_id(raw, chunk_ids) is None:
            findings.append(
                Finding(
                    "fabricated_citation", f"cites [{raw}], which is not among the retrieved chunks", Verdict.NOT_FOUND
                )
            )
    if require_citations:
        for sentence in sentences(answer):
            if sentence.skip_reason is None and not cited_ids(sentence.text):
                findings.append(Finding("uncited_sentence", f"no citation: {sentence.text!r}", None))
    return findings


def _match_key(figure: Figure) -> str:
    # Money, percentages and plain numbers compare by value: "$49" in a claim matches "49 dollars".
    kind = "n" if figure.kind in ("number", "money", "percent") else figure.kind
    return f"{kind}:{figure.key}"


def _looks_like_year(key: str) -> bool:
    return len(key) == 4 and key.isdigit() and 1000 <= int(key) <= 2199


def _to_decimal(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ""))
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


# ------------------------------------------------------------------------------------------ the claim checks
# A new deterministic check is one function (ClaimCheckInput -> findings) and one register_claim_check call.
# The verifier runs the registered checks in order and lets each finding act on the claim as its effect says.


class CheckEffect(StrEnum):
    VERDICT = "verdict"
    """A finding with a verdict decides the claim (CONTRADICTED over NOT_FOUND) and caps its score at reject_at."""
    SIGNAL = "signal"
    """Evidence against the claim, not proof: the score is capped mid-band, so it is never accepted outright."""
    NOTE = "note"
    """Recorded on the claim; the score is left alone."""


@dataclass(frozen=True, slots=True)
class ClaimCheckInput:
    claim: Claim
    context: ContextIndex
    chunk_ids: Sequence[str]
    evidence: str | None = None
    """The claim's best evidence sentence; None for checks that run before the pair matrix is scored."""


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    name: str
    run: Callable[[ClaimCheckInput], Sequence[Finding]]
    effect: CheckEffect
    needs_evidence: bool = False
    """Run after scoring, with the evidence sentence (else before scoring, on the context alone)."""


CLAIM_CHECKS: list[ClaimCheck] = []


def register_claim_check(check: ClaimCheck) -> ClaimCheck:
    if any(existing.name == check.name for existing in CLAIM_CHECKS):
        raise ValueError(f"a claim check named {check.name!r} is already registered")
    CLAIM_CHECKS.append(check)
    return check


def _figure_check(item: ClaimCheckInput) -> list[Finding]:
    return figure_findings(item.claim.text, item.context)


def _negation_check(item: ClaimCheckInput) -> list[Finding]:
    finding = negation_finding(item.claim.text, item.evidence)
    return [] if finding is None else [finding]


def _citation_check(item: ClaimCheckInput) -> list[Finding]:
    return [
        Finding("fabricated_citation", f"cites [{raw}], which was never retrieved", None)
        for raw in item.claim.cited_ids
        if resolve_cited_id(raw, item.chunk_ids) is None
    ]


# Figures, dates, hours and record attributes; then the negation signal; then citations (the order of ClaimResult.checks).
register_claim_check(ClaimCheck("figures", _figure_check, CheckEffect.VERDICT))
register_claim_check(ClaimCheck("negation", _negation_check, CheckEffect.SIGNAL, needs_evidence=True))
register_claim_check(ClaimCheck("citations", _citation_check, CheckEffect.NOTE, needs_evidence=True))
