"""Opening hours: a claim's days and times against a schedule the context lists day by day.

"Open 11:30 am to 7:30 pm on weekdays" passes the figure checks when 11:30 and 19:30 appear anywhere in the
record, even though Friday closes at 20:00. Business records (and their rendered statements, "Hours friday:
11:30-20:0.") give a schedule per day; this module reads it, reads the (days, time range) pairs a claim
states, and reports every claimed day whose hours differ or are not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from groundwire.foundation.types import Finding, Verdict

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|"
    r"sun(?:day)?)"
)
# "Monday: 11:30-19:30" in a rendered record, "\"Monday\": \"11:30-19:30\"" in raw JSON.
_SCHEDULE_RE = re.compile(
    rf"\b(?P<day>{'|'.join(DAYS)})\"?\s*:\s*\"?(?P<open>\d{{1,2}}:\d{{1,2}})\s*-\s*(?P<close>\d{{1,2}}:\d{{1,2}})\b",
    re.IGNORECASE,
)
_TIME = r"(?:\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\b\.?)?|noon|midnight)"
_TIME_RANGE_RE = re.compile(rf"(?P<t1>{_TIME})\s*(?:to|until|till|through|-|\u2013)\s*(?P<t2>{_TIME})", re.IGNORECASE)
_DAY_SPEC_RE = re.compile(
    rf"\b(?:(?P<all>every\s*day|daily|(?:seven|7) days a week|all week)"
    rf"|(?P<weekdays>weekdays|weeknights|weekday)|(?P<weekends>weekends?)"
    rf"|(?P<d1>{_DAY})s?\.?\s*(?:to|through|thru|-|\u2013|until)\s*(?P<d2>{_DAY})s?\b"
    rf"|(?P<day>{_DAY})s?)\b",
    re.IGNORECASE,
)
_ALTERNATIVE_RE = re.compile(r"\s*or\s+\d", re.IGNORECASE)  # "4 PM to 9 or 10 PM" is approximate
_DAY_JOIN_RE = re.compile(r"^\s*(?:,|and|&|or|,\s*and)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HoursMismatch:
    day: str
    claimed: str
    listed: str | None
    """The context's hours for that day, or None when it lists none."""


def context_schedule(texts: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Day -> (open, close) in minutes after midnight, from every "Day: H:M-H:M" in the texts. A schedule
    needs at least two days, so one stray "Monday: 9:00-17:00" in prose does not make a record."""
    schedule: dict[str, tuple[int, int]] = {}
    for text in texts:
        for m in _SCHEDULE_RE.finditer(text):
            schedule.setdefault(m.group("day").lower(), (_clock(m.group("open")), _clock(m.group("close"))))
    return schedule if len(schedule) >= 2 else {}


def hours_mismatches(claim: str, schedule: Mapping[str, tuple[int, int]]) -> list[HoursMismatch]:
    """Every day the claim gives hours for that the schedule lists otherwise, or not at all."""
    if not schedule:
        return []
    out: list[HoursMismatch] = []
    for days, (opens, closes), text in _claimed_hours(claim):
        for day in days:
            listed = schedule.get(day)
            if listed is not None and listed[0] == listed[1] == 0:
                continue  # "0:0-0:0": the record does not know (or open around the clock)
            if listed is None or (listed[0] % 1440, listed[1] % 1440) != (opens % 1440, closes % 1440):
                out.append(HoursMismatch(day, text.rstrip(". "), _span(listed) if listed else None))
    return out


def _claimed_hours(claim: str) -> list[tuple[tuple[str, ...], tuple[int, int], str]]:
    """(days, (open, close), time text) pairs: each time range goes with the day group that follows it when
    the sentence starts with a time ("11 am to 9 pm on weekdays and ... on weekends"), else with the day group
    before it ("Monday to Thursday from 5 to 9 pm")."""
    ranges = [
        (m.start(), m.end(), parsed, m.group(0))
        for m in _TIME_RANGE_RE.finditer(claim)
        if (parsed := _parse_range(m.group("t1"), m.group("t2"))) is not None
        and not _ALTERNATIVE_RE.match(claim, m.end())
    ]
    groups = _day_groups(
        claim, [m for m in _DAY_SPEC_RE.finditer(claim) if not any(s <= m.start() < e for s, e, _, _ in ranges)]
    )
    if not ranges or not groups:
        return []
    time_first = ranges[0][0] < groups[0][0]
    pairs = []
    for start, end, parsed, text in ranges:
        if time_first:
            days = next((g for g in groups if g[0] >= end), None)
        else:
            days = next((g for g in reversed(groups) if g[1] <= start), None)
        if days is not None:
            # "daily, with extended hours on Fridays": a day named in a narrower group is an exception.
            narrower = {d for g in groups if len(g[2]) < len(days[2]) for d in g[2]}
            pairs.append((tuple(d for d in days[2] if d not in narrower), parsed, text))
    return pairs


def _day_groups(claim: str, matches: list[re.Match[str]]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Day specs joined by "and", "," or "&" ("Friday and Saturday") merged into one group of days."""
    groups: list[tuple[int, int, tuple[str, ...]]] = []
    for m in matches:
        days = _days(m)
        if groups and _DAY_JOIN_RE.match(claim[groups[-1][1] : m.start()]):
            start, _, previous = groups.pop()
            groups.append((start, m.end(), tuple(dict.fromkeys((*previous, *days)))))
        else:
            groups.append((m.start(), m.end(), days))
    return groups


def _days(m: re.Match[str]) -> tuple[str, ...]:
    if m.group("all"):
        return DAYS
    if m.group("weekdays"):
        return DAYS[:5]
    if m.group("weekends"):
        return DAYS[5:]
    if m.group("d1"):
        first, last = _day_index(m.group("d1")), _day_index(m.group("d2"))
        return tuple(DAYS[(first + i) % 7] for i in range((last - first) % 7 + 1))
    return (DAYS[_day_index(m.group("day"))],)


def _day_index(text: str) -> int:
    return next(i for i, day in enumerate(DAYS) if day.startswith(text.lower()[:3]))


def _parse_range(first: str, second: str) -> tuple[int, int] | None:
    """Minutes after midnight for "11:30 to 7:30 pm" (the first time takes the second's am/pm unless that
    would put it after the second: 11:30 am), or None when neither side says am/pm and the hours could be
    either ("5 to 9")."""
    t1, m1 = _time(first)
    t2, m2 = _time(second)
    if m1 is None and m2 is None:
        if ":" in first and ":" in second and (t1 >= 13 * 60 or t2 >= 13 * 60):
            return t1, t2  # 24-hour clock
        return None
    if m2 is None:
        m2 = m1 if _with_meridiem(t2, m1) > _with_meridiem(t1, m1) else ("am" if m1 == "pm" else "pm")
    if m1 is None:
        m1 = m2 if _with_meridiem(t1, m2) <= _with_meridiem(t2, m2) else ("am" if m2 == "pm" else "pm")
    return _with_meridiem(t1, m1), _with_meridiem(t2, m2)


def _time(text: str) -> tuple[int, str | None]:
    text = text.strip().lower()
    if text == "noon":
        return 12 * 60, "pm"
    if text == "midnight":
        return 0, "am"
    meridiem = "pm" if "p" in text else "am" if "a" in text else None
    digits = re.match(r"(\d{1,2})(?::(\d{2}))?", text)
    assert digits is not None  # _TIME guarantees the digits
    return int(digits.group(1)) * 60 + int(digits.group(2) or 0), meridiem


def _with_meridiem(minutes: int, meridiem: str | None) -> int:
    hour, minute = divmod(minutes, 60)
    if meridiem is None or hour > 12:
        return minutes
    return (hour % 12 + (12 if meridiem == "pm" else 0)) * 60 + minute


def _clock(text: str) -> int:
    hour, _, minute = text.partition(":")
    return int(hour) * 60 + int(minute or 0)


def _span(listed: tuple[int, int]) -> str:
    return "-".join(f"{t // 60 % 24:02d}:{t % 60:02d}" for t in listed)


def hours_findings(claim: str, schedule: Mapping[str, tuple[int, int]]) -> list[Finding]:
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
