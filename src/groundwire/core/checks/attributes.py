"""Yes/no attributes of a JSON record against what a claim says of them.

A business record says `"OutdoorSeating": false` and `"Ambience": {"trendy": false, ...}`; an answer that
calls the place "trendy" or says it "offers outdoor seating" contradicts it, and one that mentions an
attribute the record leaves `null` ("not given") asserts what the record does not say. Rendered statements
("Attributes ambience trendy: no.") lose where one key ends and the next begins, so the attributes are
read from the record itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from groundwire.core.structured import humanize, parse_json
from groundwire.foundation.textutil import NEGATION_WORDS, stem
from groundwire.foundation.types import Finding, Verdict

# Words of a key that name the record's kind, not the attribute ("RestaurantsTakeOut" is "take out").
_GENERIC_KEY_WORDS = frozenset({"restaurants", "restaurant", "business"})
# Groups whose leaves are checked, and what a claim must mention for a leaf of the group to be about it:
# "casual" is an ambience beside a word for a place or its feel ("casual atmosphere", "romantic dinners"),
# never in a claim about dress ("casual attire").
_GROUPS: dict[str, re.Pattern[str]] = {
    "ambience": re.compile(
        r"\b(?:ambi[ae]nce|atmosphere|vibes?|setting|decor|feel|environment|dining|dinners?|"
        r"experience|spot|place|restaurant|bar|cafe|venue)\b",
        re.IGNORECASE,
    ),
    "business parking": re.compile(r"\bpark", re.IGNORECASE),
}
_NOT_ABOUT: dict[str, re.Pattern[str]] = {"ambience": re.compile(r"\b(?:attire|dress)", re.IGNORECASE)}
_TRUE_STRINGS = frozenset({"yes", "true", "free", "paid"})
_FALSE_STRINGS = frozenset({"no", "false", "none"})
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CLAUSE_BREAK = frozenset({"but", "while", "whereas", "however", "although", "though", "yet"})
_BE = frozenset({"is", "are", "was", "were"})
_NEGATED_BE = frozenset({"isn't", "aren't", "wasn't", "weren't"})
_POSTPOSED_REACH = 6
_NEGATION_REACH = 5
"""A negation word up to this many words before the attribute negates it: "no valet, garage or lot parking"."""


@dataclass(frozen=True, slots=True)
class RecordAttribute:
    key: tuple[str, ...]
    """The words a claim must contain, in order, joined or not ("take out" matches "takeout")."""
    group: str | None
    value: bool | None
    """None: the record has the key with no value ("not given")."""

    @property
    def name(self) -> str:
        """The attribute as a reader says it: "outdoor seating", "trendy"."""
        return " ".join(self.key)


@dataclass(frozen=True, slots=True)
class AttributeMismatch:
    attribute: RecordAttribute
    claimed: bool
    """What the claim says: True for "offers outdoor seating", False for "has no outdoor seating"."""


def record_attributes(texts: Iterable[str]) -> tuple[RecordAttribute, ...]:
    """The yes/no/not-given attributes of every JSON object among the texts (top-level keys and the groups
    in _GROUPS), or () when none is a record."""
    found: list[RecordAttribute] = []
    for text in texts:
        record = parse_json(text)
        if isinstance(record, dict):
            nested = record.get("attributes")
            found.extend(_walk(nested if isinstance(nested, dict) else record, None))
    return tuple(found)


def attribute_mismatches(claim: str, attributes: Iterable[RecordAttribute]) -> list[AttributeMismatch]:
    """Attributes the claim asserts against the record's yes/no, or asserts where the record gives none."""
    tokens = _TOKEN_RE.findall(claim.lower().replace("-", " "))
    out: list[AttributeMismatch] = []
    for attribute in attributes:
        if attribute.group in _GROUPS and (
            not _GROUPS[attribute.group].search(claim)
            or (attribute.group in _NOT_ABOUT and _NOT_ABOUT[attribute.group].search(claim))
        ):
            continue
        for start, end in _mentions(tokens, attribute.key):
            claimed = not (_negated(tokens, start) or _negated_after(tokens, end))
            if attribute.value is None or claimed != attribute.value:
                out.append(AttributeMismatch(attribute, claimed))
                break
    return out


def _walk(node: dict[str, Any], group: str | None) -> Iterator[RecordAttribute]:
    for raw_key, value in node.items():
        name = humanize(str(raw_key))
        if name == "attributes":
            continue  # a record's own attribute block, when it is empty or not an object
        if isinstance(value, dict):
            if group is None and name in _GROUPS:
                yield from _walk(value, name)
            continue
        parsed = _truth(value)
        if parsed is _UNKNOWN:
            continue
        key = tuple(w for w in name.split() if w not in _GENERIC_KEY_WORDS)
        if key and len("".join(key)) >= 3:
            yield RecordAttribute(key, group, parsed)  # type: ignore[arg-type]


_UNKNOWN = object()


def _truth(value: Any) -> bool | None | object:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower().removeprefix("u'").strip("'\"")
        if word in _TRUE_STRINGS:
            return True
        if word in _FALSE_STRINGS:
            return False
    return _UNKNOWN


def _mentions(tokens: list[str], key: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """(start, end) token positions of the key's words, written apart or joined ("wi fi", "wifi",
    "takeout"), with any ending ("caters", "catering")."""
    joined = "".join(key)
    forms, stemmed = (joined, joined + "s"), stem(joined)
    for i in range(len(tokens)):
        for width in (1, 2, 3):
            text = "".join(tokens[i : i + width])
            if (text in forms or stem(text) == stemmed) and not _idiom(tokens, i):
                yield i, i + width
                break


def _idiom(tokens: list[str], position: int) -> bool:
    """ "a lot of" is no parking lot."""
    return (
        tokens[position] == "lot"
        and 0 < position < len(tokens) - 1
        and tokens[position - 1] == "a"
        and tokens[position + 1] == "of"
    )


def _negated_after(tokens: list[str], end: int) -> bool:
    """The verb after the attribute is negated: "garage and valet parking are not", "WiFi is not available".
    A bare "not" first belongs to what follows it ("casual, not trendy")."""
    following = tokens[end : end + _POSTPOSED_REACH]
    for i, token in enumerate(following):
        if token in _CLAUSE_BREAK or token == "not":
            return False
        if token in _NEGATED_BE:
            return True
        if token in _BE:
            return i + 1 < len(following) and following[i + 1] in ("not", "unavailable")
    return False


def _negated(tokens: list[str], position: int) -> bool:
    for token in reversed(tokens[max(0, position - _NEGATION_REACH) : position]):
        if token in _CLAUSE_BREAK:
            return False
        if token in NEGATION_WORDS or token.endswith("n't") or token == "lacks":
            return True
    return False


def attribute_findings(claim: str, attributes: Sequence[RecordAttribute]) -> list[Finding]:
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
