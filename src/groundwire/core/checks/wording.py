"""Where a word stands in its sentence, for the checks that read a word against its opposite (negation, opposites).

A word and its opposite in two sentences say opposite things only where they stand in the same place: "Sales rose
5%" against "Sales fell 5%", not "raising its dividend" against "debt to fall" elsewhere in the sentence.
"""

from __future__ import annotations

from groundwire.foundation.textutil import STOPWORDS, WORD_RE, stem

NEAR = 2
"""How many content words on each side of a word make its place."""


def content_sequence(text: str) -> list[str]:
    """The text's content words (figures included) as written, in order."""
    return [word for word in WORD_RE.findall(text) if word.lower() not in STOPWORDS]


def same_place(sequence: list[str], word: str, other_sequence: list[str], other: str) -> bool:
    """Whether one of the content words up to NEAR before `word` is before `other` as well, or one after it after
    `other` (compared as stems, in any case)."""
    before, after = _around(sequence, word)
    other_before, other_after = _around(other_sequence, other)
    return bool(before & other_before or after & other_after)


def swapped_around(sequence: list[str], word: str, other_sequence: list[str], other: str) -> bool:
    """Whether what stands before `word` stands after `other`, and what after it before `other`: the arguments of
    a converse, which says the same with the opposite word ("the library lends laptops to students" / "students
    borrow laptops from the library", "A beat B" / "B lost to A")."""
    before, after = _around(sequence, word)
    other_before, other_after = _around(other_sequence, other)
    return bool(before & other_after and after & other_before)


def in_place(sequence: list[str], word: str, other_sequence: list[str], other: str) -> bool:
    """`other` stands where `word` stands (`same_place`) with the same arguments around it (not `swapped_around`):
    the two sentences say opposite things only then."""
    return same_place(sequence, word, other_sequence, other) and not swapped_around(
        sequence, word, other_sequence, other
    )


def _around(sequence: list[str], word: str) -> tuple[set[str], set[str]]:
    lowered = [w.lower() for w in sequence]
    if word.lower() not in lowered:
        return set(), set()
    at = lowered.index(word.lower())
    return {stem(w) for w in lowered[max(0, at - NEAR) : at]}, {stem(w) for w in lowered[at + 1 : at + 1 + NEAR]}
