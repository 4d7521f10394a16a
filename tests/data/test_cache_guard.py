"""Issue 47: the cache's guard reads who does what to whom, which figure goes with which noun, from and to, and
the order of a sequence; plain rewordings still hit. Each behaviour with the core guard (word order, no spaCy) and
with spaCy's dependency parse where both paths exist."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from groundwire.data import question_guard
from groundwire.data.cache import DEFAULT_THRESHOLD, SemanticCache
from groundwire.data.question_guard import parser_available, read_question, same_question, same_word
from groundwire.foundation.errors import InputError
from groundwire.scoring.embedder import default_embedder

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "cache_pairs.jsonl"
needs_parser = pytest.mark.skipif(not parser_available(), reason="needs the [entities] extra (spaCy)")
GUARDS = [pytest.param(False, id="core"), pytest.param(True, id="parse", marks=needs_parser)]

# One to three of each kind (tests/fixtures/cache_pairs.jsonl has the rest). Tried at a threshold below every pair's
# cosine, so that the guard, not the cosine, decides.
_LOOSE = 0.6
OTHER_QUESTIONS = {
    "role": [
        ("Did GitHub acquire Microsoft?", "Did Microsoft acquire GitHub?"),
        ("Who defeated Alice?", "Who did Alice defeat?"),
        ("Did Bob defeat Alice?", "Was Bob defeated by Alice?"),
    ],
    "value": [
        ("Is the dose 10 mg for children and 5 mg for adults?", "Is the dose 5 mg for children and 10 mg for adults?"),
        ("Is the shop closed on Mondays and open on Tuesdays?", "Is the shop closed on Tuesdays and open on Mondays?"),
        ("Does a child ticket cost $3 and an adult ticket $7?", "Does a child ticket cost $7 and an adult ticket $3?"),
    ],
    "direction": [
        ("How do I convert dollars to euros?", "How do I convert euros to dollars?"),
        ("Does the redirect go from HTTP to HTTPS?", "Does the redirect go from HTTPS to HTTP?"),
    ],
    "sequence": [
        ("Does the shift run 9 am -> 11 am?", "Does the shift run 11 am -> 9 am?"),
        ("Is the correct order authenticate then authorise?", "Is the correct order authorise then authenticate?"),
    ],
    "opposite": [
        ("Does aspirin cause stomach bleeding?", "Does aspirin prevent stomach bleeding?"),
        ("Is the pool open in winter?", "Is the pool closed in winter?"),
    ],
    "other entity or figure": [
        ("Is the head office in Paris?", "Is the head office in Lyon?"),
        ("Who trained the coach?", "Who did the coach train?"),  # "coach" is a synonym of "train" in WordNet too
        ("Is gate 12 near security?", "Is gate 21 near security?"),
    ],
}
REWORDINGS = {
    "contraction": [("What is the refund policy?", "What's the refund policy?"),
                    ("Why is my order not shipped yet?", "Why isn't my order shipped yet?")],
    "can / do": [("How do I reset my password?", "How can I reset my password?")],
    "abbreviation": [("What is the max upload size?", "What is the maximum upload size?"),
                     ("Where is the config file?", "Where is the configuration file?")],
    "singular / plural": [("How do I cancel my subscription?", "How do I cancel my subscriptions?"),
                          ("Can children use the pool?", "Can a child use the pool?")],
    "added adverb": [("How long does shipping take?", "How long does shipping usually take?")],
    "synonym": [("How do I buy a ticket?", "How do I purchase a ticket?")],
    "all capitals": [("Is the payment method valid?", "IS THE PAYMENT METHOD VALID?")],
}


def _cases(table: dict[str, list[tuple[str, str]]]) -> list[object]:
    return [pytest.param(a, b, id=f"{kind}: {a}") for kind, pairs in table.items() for a, b in pairs]


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


def _served(embedder, stored: str, asked: str, *, parse: bool, threshold: float = DEFAULT_THRESHOLD) -> bool:
    cache = SemanticCache(embedder, threshold=threshold, parse=parse)
    cache.put(stored, "the stored answer", scope="s", doc_version=1)
    return cache.get(asked, scope="s", doc_version=1) is not None


@pytest.mark.parametrize("parse", GUARDS)
@pytest.mark.parametrize(("first", "second"), _cases(OTHER_QUESTIONS))
def test_another_question_is_never_served_the_stored_answer(embedder, parse: bool, first: str, second: str) -> None:
    a, b = embedder.embed([first, second])
    assert float(a @ b) >= _LOOSE  # the cosine alone would serve it: the guard must refuse
    for stored, asked in ((first, second), (second, first)):
        assert not _served(embedder, stored, asked, parse=parse, threshold=_LOOSE), (stored, asked)


@pytest.mark.parametrize("parse", GUARDS)
@pytest.mark.parametrize(("first", "second"), _cases(REWORDINGS))
def test_a_plain_rewording_is_served(embedder, parse: bool, first: str, second: str) -> None:
    for stored, asked in ((first, second), (second, first)):
        assert _served(embedder, stored, asked, parse=parse), (stored, asked)


PASSIVES = [
    ("Did Microsoft acquire GitHub?", "Was GitHub acquired by Microsoft?"),
    ("Does aspirin cause stomach bleeding?", "Can stomach bleeding be caused by aspirin?"),
]


@pytest.mark.parametrize(("first", "second"), PASSIVES)
def test_a_reordering_is_served_only_where_the_parse_vouches_for_the_roles(embedder, first: str, second: str) -> None:
    # The core cannot tell a passive from a swap ("Was Microsoft acquired by GitHub?"): it misses, which costs one
    # generation. The parse reads the same subject and object in both.
    for stored, asked in ((first, second), (second, first)):
        assert not _served(embedder, stored, asked, parse=False, threshold=_LOOSE)
        if parser_available():
            assert _served(embedder, stored, asked, parse=True, threshold=_LOOSE)


@needs_parser
def test_the_parse_refuses_a_reordering_whose_roles_differ(embedder) -> None:
    # Same words reordered, and the parse reads the subject and object the other way round.
    assert not _served(embedder, "Did Microsoft acquire GitHub?", "Was Microsoft acquired by GitHub?", parse=True,
                       threshold=_LOOSE)
    # Two objects of one verb: the parse cannot say which figure goes with which ticket, so no vouching.
    assert not _served(embedder, "Does the pro plan cost $25 and the basic plan $10?",
                       "Does the basic plan cost $25 and the pro plan $10?", parse=True, threshold=_LOOSE)


def test_the_core_guard_reads_order_and_role_prepositions() -> None:
    def same(a: str, b: str) -> bool:
        return same_question(read_question(a, parse=False), read_question(b, parse=False))

    assert same("Is the dose 10 mg for children?", "is the dose 10 mg for children")
    assert not same("Did Bob defeat Alice?", "Was Bob defeated by Alice?")  # same order; "by" governs Alice
    assert not same("Did the bank lend the city money?", "Did the city lend the bank money?")
    assert same("What's the max dose?", "What is the maximum dose?")
    assert not same("Is the car clean?", "Is the carpet clean?")  # three letters more is no abbreviation of "car"
    assert same("Where is the config file?", "Where is the configuration file?")


def test_same_word() -> None:
    assert same_word("children", "child") and same_word("max", "maximum") and same_word("buy", "purchase")
    assert not same_word("buy", "purchase", synonyms=False)
    assert not same_word("paris", "lyon") and not same_word("figure:10", "figure:20")
    assert not same_word("acronym:http", "acronym:https")


def test_parse_true_without_spacy_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(question_guard.entities, "available", lambda: False)
    with pytest.raises(InputError, match=r"groundwire\[entities\]"):
        SemanticCache(default_embedder(), parse=True)
    assert SemanticCache(default_embedder()).parse is False  # the default falls back to the core guard


class _Remembered:
    """The cache's embedder, with every fixture question embedded in one batch (the decisions are the same)."""

    model_id, dim = "remembered", 384

    def __init__(self, texts: list[str]) -> None:
        unique = sorted({" ".join(text.split()) for text in texts})
        self.vectors = dict(zip(unique, default_embedder().embed(unique), strict=True))

    def embed(self, texts):
        return np.stack([self.vectors[text] for text in texts])


@pytest.mark.parametrize("parse", GUARDS)
def test_the_labelled_pairs_meet_the_issue_targets(parse: bool) -> None:
    # bench/cache_pairs.py prints the table per kind and split; here only the targets: 0 wrong hits on swaps and
    # opposites, >= 75% of plain rewordings served, each pair in both directions.
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines()]
    embedder = _Remembered([text for pair in pairs for text in (pair["a"], pair["b"])])
    wrong_hits, plain_hits, plain = [], 0, 0
    for pair in pairs:
        for stored, asked in ((pair["a"], pair["b"]), (pair["b"], pair["a"])):
            hit = _served(embedder, stored, asked, parse=parse)
            if not pair["same"] and hit:
                wrong_hits.append((pair["id"], stored, asked))
            if pair["kind"] in ("contraction", "modal", "abbreviation", "number", "adverb"):
                plain += 1
                plain_hits += hit
    assert wrong_hits == []
    assert plain_hits / plain >= 0.75
