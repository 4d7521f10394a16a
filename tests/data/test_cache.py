"""The semantic cache serves only the same question, in the same scope, over the same document set."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundwire.data.cache import SemanticCache
from groundwire.data.provenance import Document
from groundwire.data.question_guard import CONTRASTIVE_WORDS, opposed
from groundwire.data.store import Store
from groundwire.foundation.errors import InputError
from groundwire.foundation.textutil import STOPWORDS, stem, words
from groundwire.scoring.embedder import default_embedder


@pytest.fixture()
def cache() -> SemanticCache:
    return SemanticCache(default_embedder())


def test_start_never_gets_the_cached_answer_to_stop(cache: SemanticCache) -> None:
    cache.put("how do I stop the cluster", "Run stop.sh.", scope="ops", doc_version=1)
    assert cache.get("how do I start the cluster", scope="ops", doc_version=1) is None
    # ...while a rewording of the cached question is served (so the miss above is not a broken cache).
    hit = cache.get("How do I stop the cluster?", scope="ops", doc_version=1)
    assert hit is not None and hit.response == "Run stop.sh." and hit.similarity >= 0.97
    cache.put("how do I start the cluster", "Run start.sh.", scope="ops", doc_version=1)
    assert cache.get("how do I start the cluster?", scope="ops", doc_version=1).response == "Run start.sh."
    assert cache.get("how do I stop the cluster?", scope="ops", doc_version=1).response == "Run stop.sh."


def test_user_a_answer_never_reaches_user_b(cache: SemanticCache) -> None:
    cache.put("what is my salary", "Alice earns 100k.", scope="user-a", doc_version=1)
    assert cache.get("what is my salary", scope="user-b", doc_version=1) is None  # identical query, other scope
    assert cache.get("what is my salary", scope="user-a", doc_version=1).response == "Alice earns 100k."
    cache.put("what is my salary", "Bob earns 90k.", scope="user-b", doc_version=1)
    assert cache.get("what is my salary", scope="user-a", doc_version=1).response == "Alice earns 100k."
    assert cache.get("what is my salary", scope="user-b", doc_version=1).response == "Bob earns 90k."


def test_document_set_version_must_match(cache: SemanticCache) -> None:
    cache.put("what is the refund window", "30 days.", scope="s", doc_version=3)
    assert cache.get("what is the refund window", scope="s", doc_version=4) is None
    assert cache.stats.stale_version_misses == 1
    assert cache.get("what is the refund window", scope="s", doc_version=3) is not None


def test_threshold_is_configurable() -> None:
    # Two wordings of one question (start/stop, used here before, is refused by the guard; so is a one-word swap
    # such as restart/reboot: a rewording that changes the wording, not one word, is what the threshold decides).
    embedder = default_embedder()
    cached, asked = "how do I reboot the cluster", "how can the cluster be rebooted"
    a, b = embedder.embed([asked, cached])
    similarity = float(a @ b)
    loose = SemanticCache(embedder, threshold=similarity - 0.01)
    loose.put(cached, "Run reboot.sh.", scope="s", doc_version=1)
    assert loose.get(asked, scope="s", doc_version=1) is not None
    strict = SemanticCache(embedder, threshold=similarity + 0.01)
    strict.put(cached, "Run reboot.sh.", scope="s", doc_version=1)
    assert strict.get(asked, scope="s", doc_version=1) is None
    with pytest.raises(InputError):
        SemanticCache(embedder, threshold=1.5)


def test_ingest_invalidates_exactly_the_affected_entries(cache: SemanticCache, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    store.ingest(
        [Document("manual", "Manual", "Run start.sh."), Document("pricing", "Pricing", "Pro costs $10.")], scope="s"
    )
    version = store.doc_version(scope="s")
    cache.put("how do I start the cluster", "Run start.sh.", scope="s", doc_version=version, doc_ids=["manual"])
    cache.put("how much is the pro plan", "$10.", scope="s", doc_version=version, doc_ids=["pricing"])
    cache.put("how much is the pro plan", "$10.", scope="other", doc_version=version, doc_ids=["pricing"])

    result = store.ingest([Document("pricing", "Pricing", "Pro costs $12.")], scope="s")
    removed = cache.invalidate(scope="s", doc_ids=result.changed_doc_ids)
    assert removed == 1
    assert cache.stats.invalidations == 1
    # The untouched entry is still there (under the version it was stored with) and the other scope is untouched.
    assert cache.get("how do I start the cluster", scope="s", doc_version=version) is not None
    assert cache.get("how much is the pro plan", scope="s", doc_version=version) is None
    assert cache.get("how much is the pro plan", scope="other", doc_version=version) is not None
    # An unchanged re-ingest affects nothing.
    assert (
        cache.invalidate(
            scope="s", doc_ids=store.ingest([Document("manual", "Manual", "Run start.sh.")], scope="s").changed_doc_ids
        )
        == 0
    )
    store.close()


def test_counters_and_eviction() -> None:
    cache = SemanticCache(default_embedder(), max_entries=2)
    cache.put("alpha question about billing", 1, scope="s", doc_version=1)
    cache.put("beta question about storage quotas", 2, scope="s", doc_version=1)
    assert cache.get("alpha question about billing", scope="s", doc_version=1) is not None  # alpha now most recent
    cache.put("gamma question about network ports", 3, scope="s", doc_version=1)  # evicts beta
    assert cache.get("beta question about storage quotas", scope="s", doc_version=1) is None
    assert cache.get("alpha question about billing", scope="s", doc_version=1) is not None
    stats = cache.stats
    assert (stats.hits, stats.misses, stats.evictions, stats.entries) == (2, 1, 1, 2)
    assert stats.hit_rate == pytest.approx(2 / 3)
    assert stats.to_dict()["lookups"] == 3


def test_bad_input(cache: SemanticCache) -> None:
    with pytest.raises(InputError, match="scope"):
        cache.get("a question", scope="", doc_version=1)
    with pytest.raises(InputError, match="query"):
        cache.put("   ", "x", scope="s", doc_version=1)


def test_doc_set_fingerprint_keeps_unrelated_entries_servable(cache: SemanticCache, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'v.db'}")
    store.ingest(
        [Document("manual", "Manual", "Run start.sh."), Document("pricing", "Pricing", "Pro costs $10.")], scope="s"
    )
    before = store.doc_set_version(scope="s", doc_ids=["manual"])
    cache.put("how do I start the cluster", "Run start.sh.", scope="s", doc_version=before, doc_ids=["manual"])
    store.ingest([Document("pricing", "Pricing", "Pro costs $12.")], scope="s")  # another document changes
    assert store.doc_set_version(scope="s", doc_ids=["manual"]) == before
    assert cache.get("how do I start the cluster", scope="s", doc_version=before) is not None
    store.ingest([Document("manual", "Manual", "Run launch.sh.")], scope="s")  # this one changes
    after = store.doc_set_version(scope="s", doc_ids=["manual"])
    assert after != before
    assert cache.get("how do I start the cluster", scope="s", doc_version=after) is None
    # The scope-wide version moves with every content change.
    assert store.doc_set_version(scope="s") == "scope:3"
    assert store.doc_set_version(scope="other", doc_ids=["manual"]) != before  # another scope has no such docs
    store.close()


def test_versions_coexist_and_a_repeat_put_replaces(cache: SemanticCache) -> None:
    cache.put("what does the pro plan cost", "$10", scope="s", doc_version="docs:a")
    cache.put("what does the pro plan cost", "$12", scope="s", doc_version="docs:b")  # another document selection
    assert cache.get("what does the pro plan cost", scope="s", doc_version="docs:a").response == "$10"
    assert cache.get("what does the pro plan cost", scope="s", doc_version="docs:b").response == "$12"
    cache.put("What does the Pro plan cost?", "$11", scope="s", doc_version="docs:a")
    assert cache.get("what does the pro plan cost", scope="s", doc_version="docs:a").response == "$11"
    assert cache.stats.entries == 2


@pytest.mark.parametrize(
    ("cached", "asked"),
    [
        ("Can I get a refund after 30 days?", "Can I get a refund before 30 days?"),
        ("Is smoking allowed in the rooms?", "Is smoking not allowed in the rooms?"),
        ("Is smoking allowed in the rooms?", "Isn't smoking allowed in the rooms?"),
        ("Can I get a refund within 30 days?", "Can I get a refund within 60 days?"),
        ("Can I check in with a dog?", "Can I check in without a dog?"),
        ("Do orders over $50 ship free?", "Do orders under $50 ship free?"),
    ],
)
def test_similar_questions_with_another_meaning_are_misses(cache: SemanticCache, cached: str, asked: str) -> None:
    # These pairs embed at >= 0.97 or close to it: the threshold alone would serve one's answer to the other.
    cache.put(cached, "the cached answer", scope="s", doc_version=1)
    assert cache.get(asked, scope="s", doc_version=1) is None
    assert cache.get(cached.rstrip("?"), scope="s", doc_version=1) is not None  # a rewording is still a hit
    cache.put(asked, "its own answer", scope="s", doc_version=1)  # stored beside, not over, the first
    assert cache.get(cached, scope="s", doc_version=1).response == "the cached answer"
    assert cache.get(asked, scope="s", doc_version=1).response == "its own answer"


def test_the_issue_pairs_are_above_the_threshold() -> None:
    # The reason for the guard: without it, these would be hits (issue 14 measured 0.976 and 0.989).
    embedder = default_embedder()
    for a, b in [("Can I get a refund before 30 days?", "Can I get a refund after 30 days?"),
                 ("Is smoking not allowed in the rooms?", "Is smoking allowed in the rooms?")]:
        first, second = embedder.embed([a, b])
        assert float(first @ second) >= 0.97
    cache = SemanticCache(embedder)
    cache.put("Is smoking allowed in the rooms?", "Yes.", scope="s", doc_version=1)
    assert cache.get("Is smoking not allowed in the rooms?", scope="s", doc_version=1) is None
    assert cache.stats.guarded_misses == 1


# Issue 20, item 4: opposite meanings through an antonymous prefix (un-, in-, il-, im-, ir-, non-, dis-) or an
# antonym pair. Most embed below 0.97 already, so they are checked at a threshold below every pair's cosine:
# the guard, not the threshold, must refuse them.
OPPOSITE_PAIRS = [
    ("Is the product safe for children?", "Is the product unsafe for children?"),
    ("Is it legal to park here?", "Is it illegal to park here?"),
    ("Is the ticket refundable?", "Is the ticket non-refundable?"),
    ("Is the deposit refundable?", "Is the deposit nonrefundable?"),
    ("Is it possible to change my booking?", "Is it impossible to change my booking?"),
    ("Is the water drinkable?", "Is the water undrinkable?"),
    ("Is the account active?", "Is the account inactive?"),
    ("Is this behaviour regular?", "Is this behaviour irregular?"),
    ("Is the payment method valid?", "Is the payment method invalid?"),
    ("Is the form complete?", "Is the form incomplete?"),
    ("Is the patient conscious?", "Is the patient unconscious?"),
    ("Are the results correct?", "Are the results incorrect?"),
    ("Is the room available on Friday?", "Is the room unavailable on Friday?"),
    ("Do the members agree with the change?", "Do the members disagree with the change?"),
    ("Is the user eligible for the discount?", "Is the user ineligible for the discount?"),
    ("Is the stock liquid?", "Is the stock illiquid?"),
    ("Is the warranty transferable?", "Is the warranty non-transferable?"),
    ("Is the connection secure?", "Is the connection insecure?"),
    ("Is the method reversible?", "Is the method irreversible?"),
    ("Is the seller honest?", "Is the seller dishonest?"),
    ("Is this offer limited?", "Is this offer unlimited?"),
    ("Is the fee taxable?", "Is the fee non-taxable?"),
    ("Is the plugin compatible with version 3?", "Is the plugin incompatible with version 3?"),
    ("Is the claim relevant to the case?", "Is the claim irrelevant to the case?"),
    ("Is the task mandatory for new staff?", "Is the task optional for new staff?"),
    ("Is the product safe for children?", "Is the product dangerous for children?"),
    ("Is the statement true?", "Is the statement false?"),
    ("Why was my application accepted?", "Why was my application rejected?"),
    ("How do I upload a file?", "How do I download a file?"),
    ("Can I buy shares after hours?", "Can I sell shares after hours?"),
    ("Is the parking free on Sundays?", "Is the parking paid on Sundays?"),
    ("Is the repository public?", "Is the repository private?"),
    ("What is the arrival time of flight 20?", "What is the departure time of flight 20?"),
    ("Is the tank full?", "Is the tank empty?"),
    ("Which ports are used for inbound traffic?", "Which ports are used for outbound traffic?"),
    ("How do I check in at the hotel?", "How do I check out at the hotel?"),
    ("Is the old plan cheaper?", "Is the new plan cheaper?"),
    ("Is the test result positive?", "Is the test result negative?"),
    ("How do I attach a file to the ticket?", "How do I detach a file from the ticket?"),
    ("Is the change temporary?", "Is the change permanent?"),
    ("Is the data stored in internal drives?", "Is the data stored in external drives?"),
    ("Did the transaction pass?", "Did the transaction fail?"),
]
# Issue 38: opposite verbs no list named, served from the cache at cosine 0.98 (cause/prevent); each in both orders,
# and a swapped entity or an added qualifier, which a one-word edit makes another question as well.
OPPOSITE_VERB_PAIRS = [
    ("Does aspirin cause stomach bleeding?", "Does aspirin prevent stomach bleeding?"),
    ("Does vitamin D promote bone growth?", "Does vitamin D inhibit bone growth?"),
    ("Does ibuprofen relieve joint pain?", "Does ibuprofen worsen joint pain?"),
    ("Can this drug cure the infection?", "Can this drug cause the infection?"),
    ("Is the head office in Paris?", "Is the head office in Lyon?"),
    ("Is smoking allowed in the rooms?", "Is smoking allowed in the rooms at night?"),
]
OPPOSITE_PAIRS += OPPOSITE_VERB_PAIRS + [(asked, cached) for cached, asked in OPPOSITE_VERB_PAIRS]
SAME_MEANING_PAIRS = [
    ("Is the product safe for children?", "is the product safe for children"),
    ("Is it legal to park here?", "Is it legal to park here"),
    ("Is the ticket refundable?", "Is the ticket refundable ?"),
    ("Is the account active?", "Is the account active??"),
    ("Is the payment method valid?", "IS THE PAYMENT METHOD VALID?"),
    ("Is the form complete?", "Is the form complete? "),
    ("Is the connection secure?", "Is the  connection secure?"),
    ("Is the warranty transferable?", "is the warranty transferable?"),
    ("Is the statement true?", "is the statement true?"),
    ("Why was my application accepted?", "why was my application accepted"),
    ("How do I upload a file?", "How do I upload a file"),
    ("Is the repository public?", "is the repository public?"),
    ("Is the tank full?", "Is the tank full"),
    ("How do I check in at the hotel?", "how do I check in at the hotel?"),
    ("Is the change temporary?", "Is the change temporary"),
    ("Is the room available on Friday?", "Is the room available on Friday"),
    ("Is the seller honest?", "is the seller honest"),
    ("Is the plugin compatible with version 3?", "Is the plugin compatible with version 3"),
    ("Is the test result positive?", "is the test result positive?"),
    ("Is the data stored in internal drives?", "Is the data stored on internal drives?"),
    ("Can I buy shares after hours?", "Can I buy shares after hours"),
    ("Do the members agree with the change?", "do the members agree with the change?"),
    ("Is the product safe for children?", "Is this product safe for children?"),
    ("Is the water drinkable?", "Is the water drinkable"),
]  # a passive rewording ("Can stomach bleeding be caused by aspirin?") needs the parse: tests/data/test_cache_guard.py
_LOOSE = 0.6
"""Below the cosine of every pair in both tables (the lowest opposite pair is 0.66)."""


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


@pytest.mark.parametrize(("cached", "asked"), OPPOSITE_PAIRS)
def test_an_opposite_word_is_never_served_the_cached_answer(embedder, cached: str, asked: str) -> None:
    first, second = embedder.embed([cached, asked])
    assert float(first @ second) >= _LOOSE  # the threshold alone would serve it
    for threshold in (_LOOSE, 0.97):
        cache = SemanticCache(embedder, threshold=threshold)
        cache.put(cached, "the cached answer", scope="s", doc_version=1)
        assert cache.get(asked, scope="s", doc_version=1) is None
        if threshold == _LOOSE:
            assert cache.stats.guarded_misses == 1  # refused by the meaning guard, not by cosine
        cache.put(asked, "the opposite answer", scope="s", doc_version=1)  # stored beside, not over, the first
        assert cache.get(cached, scope="s", doc_version=1).response == "the cached answer"


@pytest.mark.parametrize(("cached", "asked"), SAME_MEANING_PAIRS)
def test_a_same_meaning_rewording_still_hits(embedder, cached: str, asked: str) -> None:
    for threshold in (_LOOSE, 0.97):
        cache = SemanticCache(embedder, threshold=threshold)
        cache.put(cached, "the cached answer", scope="s", doc_version=1)
        hit = cache.get(asked, scope="s", doc_version=1)
        assert hit is not None and hit.response == "the cached answer", threshold


def test_the_issue_prefix_pairs_embed_above_the_threshold(embedder) -> None:
    # Why prefixes need the guard: these pass the default threshold on cosine alone (issue 20).
    pairs = [p for p in OPPOSITE_PAIRS if p[1].endswith(("unsafe for children?", "illegal to park here?"))]
    assert len(pairs) == 2
    for cached, asked in pairs:
        first, second = embedder.embed([cached, asked])
        assert float(first @ second) >= 0.97


def test_a_miss_then_a_put_embeds_the_question_once() -> None:
    class Counting:
        model_id, dim = "counting", 2

        def __init__(self) -> None:
            self.texts: list[str] = []

        def embed(self, texts):
            import numpy as np

            self.texts.extend(texts)
            return np.array([[1.0, 0.0] if "refund" in t else [0.0, 1.0] for t in texts], dtype=np.float32)

    embedder = Counting()
    cache = SemanticCache(embedder)  # type: ignore[arg-type]
    assert cache.get("What is the  refund window?", scope="a", doc_version=1) is None
    cache.put("What is the refund window?", "30 days", scope="a", doc_version=1)
    hit = cache.get("What is the refund window?", scope="a", doc_version=1)
    assert hit is not None and hit.response == "30 days"
    assert embedder.texts == ["What is the refund window?"]  # whitespace-normalised, embedded once
    # Another question is embedded, and a remembered vector is the embedder's own.
    assert cache.get("How long does shipping take?", scope="a", doc_version=1) is None
    assert embedder.texts[-1] == "How long does shipping take?" and len(embedder.texts) == 2


# Issue 33: opposites the lexicon (WordNet) finds where more than one content word differs, so neither the
# one-content-word rule nor a contrastive word refuses them; the old rules served one's answer to the other.
LEXICON_OPPOSITE_PAIRS = [
    ("Is the pool open in winter?", "Is the swimming pool shut during the winter months?"),
    ("Did the company gain customers in 2020?", "Did the company lose many customers in 2020?"),
    ("Do prices rise in summer?", "Do hotel prices fall during the summer?"),
    ("Did sales rise in March?", "Did sales fall sharply in March?"),
    ("Is the river narrow near the bridge?", "Is the river wide close to the bridge?"),
    ("Was the exam easy for most students?", "Was the final exam difficult for most students?"),
    ("Does the hotel accept cash?", "Does the hotel refuse cash payments?"),
]
# Rewordings in which words differ and none is the opposite of another, each word kept or swapped for a WordNet
# synonym: still served.
REWORDED_PAIRS = [
    ("When was the company founded?", "When was the company established?"),
    ("How do I buy a ticket?", "How do I purchase a ticket?"),
    ("What is the price of a single room?", "What is the cost of a single room?"),
    ("Is the shop near the station?", "Is the store near the station?"),
]
# Issue 47: rewordings that add or change content words without a like on the other side, or reorder them where no
# parse vouches for the roles, are misses now (a miss costs one generation, a wrong hit a wrong answer): the guard
# cannot tell them from another question ("In what year" adds a word as "at night" does).
NOW_MISSED_REWORDINGS = [
    ("How long does shipping take to Germany?", "How many days does delivery to Germany take?"),
    ("Is breakfast included in the price?", "Does the price include breakfast?"),
    ("When was the company founded?", "In what year was the company established?"),
    ("What is the price of a single room?", "How much does a single room cost?"),
]


def _content_stems(question: str) -> set[str]:
    return {stem(word) for word in words(question) if word not in STOPWORDS}


@pytest.mark.parametrize(("cached", "asked"), LEXICON_OPPOSITE_PAIRS)
def test_an_opposite_the_lexicon_knows_is_refused_however_many_words_differ(embedder, cached: str, asked: str) -> None:
    # Not the one-word rule: more than one content word on one side; the lexicon's opposite pair refuses it.
    assert len(_content_stems(asked) - _content_stems(cached)) > 1
    assert opposed(frozenset(words(cached)), frozenset(words(asked)))
    first, second = embedder.embed([cached, asked])
    assert float(first @ second) >= _LOOSE
    for one, other in ((cached, asked), (asked, cached)):
        cache = SemanticCache(embedder, threshold=_LOOSE)
        cache.put(one, "the cached answer", scope="s", doc_version=1)
        assert cache.get(other, scope="s", doc_version=1) is None
        assert cache.stats.guarded_misses == 1


def test_the_brief_pool_pair_is_refused_by_the_lexicon(embedder) -> None:
    # WordNet's antonymy refuses the pair, whatever else differs.
    cache = SemanticCache(embedder, threshold=_LOOSE)
    cache.put("Is the pool open in winter?", "Yes, from 9 to 5.", scope="s", doc_version=1)
    assert cache.get("Is the pool closed during winter?", scope="s", doc_version=1) is None
    assert cache.stats.guarded_misses == 1


@pytest.mark.parametrize(("cached", "asked"), REWORDED_PAIRS)
def test_a_rewording_without_an_opposite_is_still_served(embedder, cached: str, asked: str) -> None:
    cache = SemanticCache(embedder, threshold=_LOOSE)
    cache.put(cached, "the cached answer", scope="s", doc_version=1)
    hit = cache.get(asked, scope="s", doc_version=1)
    assert hit is not None and hit.response == "the cached answer"


def test_a_question_that_only_adds_a_bounding_word_is_another_question(embedder) -> None:
    assert "except" in CONTRASTIVE_WORDS
    cache = SemanticCache(embedder, threshold=_LOOSE)
    cache.put("Is the gym open every day?", "Yes.", scope="s", doc_version=1)
    assert cache.get("Is the gym open every day except Monday?", scope="s", doc_version=1) is None



@pytest.mark.parametrize(("cached", "asked"), NOW_MISSED_REWORDINGS)
def test_a_rewording_that_changes_content_words_is_a_miss(embedder, cached: str, asked: str) -> None:
    cache = SemanticCache(embedder, threshold=_LOOSE)
    cache.put(cached, "the cached answer", scope="s", doc_version=1)
    assert cache.get(asked, scope="s", doc_version=1) is None
    assert cache.stats.guarded_misses == 1
