import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundwire import (
    REFUSAL_TOKEN,
    CheckSettings,
    Chunk,
    InputError,
    Route,
    RoutedThresholds,
    Verdict,
    Verifier,
    verify,
)
from groundwire.scoring import get_scorer
from groundwire.scoring.base import Calibration, PairScores
from groundwire.scoring.lexical import LexicalScorer
from groundwire.scoring.onnx import bundled_path

WORDS = ["river", "bridge", "museum", "library", "garden", "tower", "market", "station", "castle", "harbor",
         "opens", "closes", "hosts", "borders", "faces", "early", "daily", "north", "south", "green"]
sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=8).map(lambda ws: " ".join(ws).capitalize() + ".")
passage = st.lists(sentence, min_size=1, max_size=4).map(" ".join)


@pytest.fixture(scope="module")
def verifier():
    return Verifier(get_scorer("lexical"))


def _untimed(report):
    return {key: value for key, value in report.to_dict().items() if key != "timings"}


_DEPRECATED_ANSWER = "The plan costs $10 a month. Roaming is free in Japan. The museum is not open on Mondays."
_DEPRECATED_CONTEXT = [Chunk("S1", "The plan costs $10 a month; roaming costs extra."),
                       Chunk("S2", "The museum is open on Mondays.")]


@pytest.mark.parametrize("name", ["lexical", pytest.param(None, marks=pytest.mark.skipif(
    not (bundled_path() / "config.json").is_file(), reason="no bundled model"))])
def test_a_scorer_name_is_deprecated_and_still_checks_alike(name):
    """Issue 36: the verifier receives a scorer. `Verifier(name)` and `Verifier()` still work, warn (at the caller's
    line) with what to write instead, and resolve the name as get_scorer does: the same report."""
    written = "get_scorer()" if name is None else f"get_scorer({name!r})"
    with pytest.warns(DeprecationWarning, match=re.escape(f"Verifier({written})")) as caught:
        old = Verifier() if name is None else Verifier(name)
    assert [w.filename for w in caught if issubclass(w.category, DeprecationWarning)] == [__file__]
    new = Verifier(get_scorer(name))
    assert old.model_id == new.model_id == get_scorer(name).model_id
    before = old.verify(_DEPRECATED_ANSWER, _DEPRECATED_CONTEXT, question="What does it cost?")
    after = new.verify(_DEPRECATED_ANSWER, _DEPRECATED_CONTEXT, question="What does it cost?")
    assert before.claims and [c.route for c in before.claims] != [Route.ACCEPT] * len(before.claims)
    assert _untimed(before) == _untimed(after)


def test_a_scorer_object_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        Verifier(LexicalScorer())


def test_the_settings_are_one_value_and_the_old_keywords_say_where_they_went():
    """Issue 46: `Verifier(scorer, settings)`; release 0.1's settings keywords are refused with what to write."""
    verifier = Verifier(LexicalScorer(), CheckSettings(accept_at=0.9, reject_at=0.3, require_citations=True))
    assert (verifier.accept_at, verifier.reject_at, verifier.require_citations) == (0.9, 0.3, True)
    assert verifier.settings == CheckSettings(accept_at=0.9, reject_at=0.3, require_citations=True)
    with pytest.raises(TypeError, match=re.escape("Verifier(accept_at=, route_mode=) moved into the settings")):
        Verifier(LexicalScorer(), accept_at=0.9, route_mode="decide")  # type: ignore[arg-type]


@pytest.mark.parametrize("named", [{"pruner": "lexical"}, {"decomposer": "llm"}, {"cascade": "lexical"}])
def test_a_name_the_verifier_was_not_given_an_object_for_is_refused(named):
    """The verifier resolves no names: settings that name a pruner, an LLM decomposer or a cascade it was not handed
    are refused (build_verifier resolves them), never dropped silently."""
    with pytest.raises(ValueError, match="build_verifier"):
        Verifier(LexicalScorer(), CheckSettings(**named))


def test_threshold_order_is_one_rule_for_given_and_calibrated_thresholds():
    """Explicit thresholds are checked by the settings; one given against a calibrated other by the verifier; both
    with the one rule (foundation.types.ordered, which a profile's thresholds also meet) and its one message."""
    with pytest.raises(ValueError, match=re.escape("reject_at (0.5) must be below accept_at (0.4)")):
        CheckSettings(accept_at=0.4, reject_at=0.5)
    with pytest.raises(ValueError, match=re.escape("reject_at (0.2) must be below accept_at (0.1)")):
        Verifier(LexicalScorer(), CheckSettings(accept_at=0.1))  # the lexical scorer's default reject_at is 0.2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(claims=st.lists(sentence, min_size=1, max_size=4), chunks=st.lists(passage, min_size=1, max_size=3),
       extra=passage)
def test_adding_a_chunk_never_lowers_a_claim_score(verifier, claims, chunks, extra):
    answer = " ".join(claims)
    before = verifier.verify(answer, chunks)
    after = verifier.verify(answer, [*chunks, extra])
    assert len(before.claims) == len(after.claims)
    for old, new in zip(before.claims, after.claims):
        assert new.support >= old.support - 1e-9
        assert new.score >= old.score - 1e-9
    assert after.score >= before.score - 1e-9


# Counterexamples to the property above, found before each window was capped by its own findings: the added chunk's
# window becomes the claim's best, a check doubts it ("closes" against "opens"), and the cap at that window used to
# lower the claim below what the other chunk already gave it.
_FOUND = [
    (["The old harbor museum opens early on Mondays."], ["The old harbor museum opens on Sundays."],
     "The old harbor museum closes early on Mondays."),
    (["River hosts castle early borders north museum green.", "Market station library hosts borders closes.",
      "Market museum north castle river closes."],
     ["Daily castle daily castle museum market. Early south faces green closes opens north.",
      "Daily harbor market library market station river.", "Station hosts harbor green north closes station harbor."],
     "Station hosts harbor green north closes station harbor. Daily castle daily castle museum market. South market "
     "museum station. Castle hosts museum early river market south station."),
]


@pytest.mark.parametrize(("claims", "chunks", "extra"), _FOUND)
def test_a_check_at_an_added_window_never_lowers_a_claim(verifier, claims, chunks, extra):
    test_adding_a_chunk_never_lowers_a_claim_score.hypothesis.inner_test(verifier, claims, chunks, extra)


def test_a_claim_cites_the_best_window_no_check_doubts_and_keeps_the_doubted_one():
    """Each window's score is capped by that window's own findings, then the max is taken: a window the opposites
    check doubts ("closes" against "opens") no longer caps a claim another window supports; the claim cites that
    window, reports no finding, and keeps the doubted window's features (with its finding) in other_windows."""
    verifier = Verifier(LexicalScorer())
    claim = "The old harbor museum opens early on Mondays."
    chunks = [Chunk("S1", "The old harbor museum opens on Sundays."),
              Chunk("S2", "The old harbor museum closes early on Mondays.")]
    alone = verifier.verify(claim, chunks[:1]).claims[0]
    both = verifier.verify(claim, chunks).claims[0]
    assert both.support > alone.support  # S2 is the model's best window
    assert (both.score, both.chunk_id, both.checks) == (alone.score, "S1", ())
    assert both.features["support"] == pytest.approx(alone.support)  # the features of the cited window
    assert both.features["opposites"] == both.features["negation_flip"] == 0.0
    [doubted] = both.other_windows
    assert doubted["opposites"] == 1.0 and doubted["negation_flip"] == 1.0
    assert doubted["support"] == pytest.approx(both.support)
    # With S2 alone, the doubt stands: capped mid-band, the finding reported.
    only = verifier.verify(claim, chunks[1:]).claims[0]
    assert [f.check for f in only.checks] == ["opposite"] and only.score < only.support
    assert only.other_windows == ()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(claims=st.lists(sentence, min_size=1, max_size=4), chunks=st.lists(passage, min_size=1, max_size=3),
       extra=sentence)
def test_adding_a_claim_never_raises_the_answer_score(verifier, claims, chunks, extra):
    before = verifier.verify(" ".join(claims), chunks)
    after = verifier.verify(" ".join([*claims, extra]), chunks)
    assert after.score <= before.score + 1e-9
    assert after.score == pytest.approx(min(c.score for c in after.claims))


class RecordingScorer:
    """A real scorer (lexical) that records every call, to show the matrix is scored in one batch."""

    model_id = "recording"
    max_tokens = 40

    def __init__(self):
        self.inner = LexicalScorer()
        self.calls: list[list[tuple[str, str]]] = []

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def score(self, pairs):
        self.calls.append(list(pairs))
        return self.inner.score(pairs)


def test_whole_matrix_is_one_batched_call_and_argmax_is_the_citation():
    scorer = RecordingScorer()
    chunks = [Chunk("a", "The museum opens at nine."), Chunk("b", "The castle faces the harbor."),
              Chunk("c", "The garden hosts a market.")]
    report = Verifier(scorer).verify("The castle faces the harbor. The garden hosts a market.", chunks)
    assert len(scorer.calls) == 1
    assert len(scorer.calls[0]) == 2 * 3
    assert [c.chunk_id for c in report.claims] == ["b", "c"]
    assert all(c.verdict is Verdict.SUPPORTED for c in report.claims)


def test_long_chunk_is_windowed_never_truncated():
    scorer = RecordingScorer()  # 40-token window
    before = " ".join(f"The tower number {i} is tall." for i in range(60))
    after = " ".join(f"The garden number {i} is green." for i in range(60))
    text = before + " The harbor bridge closes daily at midnight. " + after
    report = Verifier(scorer).verify("The harbor bridge closes daily at midnight.", [text])
    windows = [premise for premise, _ in scorer.calls[0]]
    assert len(windows) > 5
    assert all(len(w.split()) + 8 <= 40 for w in windows)  # every window fits beside the claim
    covered = set()
    for w in windows:  # every character of the chunk is inside some window
        start = text.index(w)
        covered.update(range(start, start + len(w)))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    claim = report.claims[0]
    assert claim.scored and claim.verdict is Verdict.SUPPORTED
    assert text[slice(*claim.evidence_span)] == "The harbor bridge closes daily at midnight."


def test_claim_too_long_for_the_model_is_reported_unscored():
    scorer = RecordingScorer()
    long_claim = "The museum " + " ".join(["opens"] * 30) + " early."
    report = Verifier(scorer).verify(f"The castle faces the harbor. {long_claim}", ["The castle faces the harbor."])
    unscored = [c for c in report.claims if not c.scored]
    assert len(unscored) == 1 and "not scored" in unscored[0].note and unscored[0].support is None
    assert report.route is Route.ESCALATE
    assert any("could not be scored" in w for w in report.warnings)


LONG_ANSWER = "The plan costs " + "very " * 300 + "much money."


@pytest.mark.parametrize("scorer", ["lexical", "bundled"])
def test_an_answer_whose_only_claim_is_too_long_is_unscored_and_escalated(scorer):
    """No claim fits the model window, so there is no window at all: the claim is reported, never an IndexError."""
    from groundwire.scoring.onnx import bundled_path

    if scorer == "bundled" and not (bundled_path() / "config.json").is_file():
        pytest.skip("no bundled model")
    verifier = Verifier(get_scorer(scorer))
    assert verifier.scorer.max_tokens is not None  # the window is what makes the claim too long
    report = verifier.verify(LONG_ANSWER, [Chunk("S1", "The plan costs 19 dollars.")])
    assert len(report.claims) == 1
    claim = report.claims[0]
    assert not claim.scored and claim.support is None and "not scored" in claim.note
    assert claim.route is Route.ESCALATE and claim.chunk_id is None and claim.evidence is None
    assert report.route is Route.ESCALATE


def test_a_too_long_claim_beside_a_scored_one_reports_no_contradiction():
    """Its row of the pair matrix was never scored: the contradiction is unknown (None), not 0.0."""
    from groundwire.scoring.onnx import bundled_path

    if not (bundled_path() / "config.json").is_file():
        pytest.skip("no bundled model")
    verifier = Verifier(get_scorer("bundled"))
    report = verifier.verify("The plan costs 19 dollars. " + LONG_ANSWER, [Chunk("S1", "The plan costs 19 dollars.")])
    scored = [claim for claim in report.claims if claim.scored]
    unscored = [claim for claim in report.claims if not claim.scored]
    assert scored and unscored
    assert all(claim.contradiction is not None for claim in scored)  # the bundled scorer has a contradiction head
    assert all(claim.contradiction is None and claim.support is None for claim in unscored)


def test_contradiction_head_is_used_when_present():
    class Contradicting(RecordingScorer):
        def score(self, pairs):
            n = len(pairs)
            return PairScores(support=np.full(n, 0.1, np.float32), contradiction=np.full(n, 0.9, np.float32))

    report = Verifier(Contradicting()).verify("The castle faces the harbor.", ["The castle faces the river."])
    assert report.claims[0].verdict is Verdict.CONTRADICTED and report.claims[0].contradiction == pytest.approx(0.9)
    assert report.route is Route.REJECT


def test_routing_thresholds_are_configurable():
    answer, chunks = "The castle faces the north harbor.", ["The castle faces the harbor."]
    score = verify(answer, chunks, scorer="lexical").score
    assert 0.2 < score < 1.0
    assert verify(answer, chunks, scorer="lexical", accept_at=score - 0.01, reject_at=0.1).route is Route.ACCEPT
    assert verify(answer, chunks, scorer="lexical", accept_at=0.99, reject_at=score + 0.01).route is Route.REJECT
    assert verify(answer, chunks, scorer="lexical", accept_at=0.99, reject_at=0.01).route is Route.ESCALATE
    with pytest.raises(ValueError):
        Verifier(get_scorer("lexical"), CheckSettings(accept_at=0.2, reject_at=0.8))


def test_abstention_and_answers_without_claims_have_a_defined_score():
    abstained = verify(REFUSAL_TOKEN, ["The castle faces the harbor."], scorer="lexical")
    assert abstained.abstained and abstained.score == 1.0 and abstained.claims == ()
    empty = verify("Thanks! I hope this helps.", ["The castle faces the harbor."], scorer="lexical")
    assert empty.claims == () and empty.score == 1.0 and not np.isnan(empty.score)
    assert any("no checkable claims" in w for w in empty.warnings)
    assert {s.reason for s in empty.meta.skipped or ()} == {"greeting_or_too_short", "filler"}


def test_a_claimless_answer_is_accepted_only_when_it_declines_to_answer():
    """Issue 56: chit-chat with no checkable claim was accepted (90 of BEGIN dev's 676 hallucinated answers); a
    refusal is an abstention and stays accepted."""
    chunks = ["The castle faces the harbor."]
    chat = verify("Thanks! I hope this helps.", chunks, scorer="lexical")
    assert chat.route is Route.ESCALATE and chat.score == 1.0
    assert any("not accepted outright" in w for w in chat.warnings)
    refusal = verify("The context does not mention the opening hours.", chunks, scorer="lexical")
    assert refusal.claims == () and refusal.route is Route.ACCEPT
    assert any("declines to answer" in w for w in refusal.warnings)
    decided = verify("Thanks! I hope this helps.", chunks, scorer="lexical", route="decide", decide_at=0.5)
    assert decided.route is Route.REJECT  # decided verdicts never accept what three-way would escalate


@pytest.mark.parametrize("answer, chunks, message", [
    ("", ["text"], "answer is empty"),
    ("   \n", ["text"], "answer is empty"),
    ("The castle faces the harbor.", [], "context is empty"),
    ("The castle faces the harbor.", ["  ", ""], "context is empty"),
    ("The castle faces the harbor.", "a plain string", "list of passages"),
    ("The castle faces the harbor.", [Chunk("x", "a"), Chunk("x", "b")], "unique"),
])
def test_bad_input_raises_a_clear_error(answer, chunks, message):
    with pytest.raises(InputError, match=message):
        verify(answer, chunks, scorer="lexical")


def test_one_megabyte_context_is_checked_in_full():
    paragraph = "The market hosts traders from the north every morning. " * 20
    text = paragraph * 910 + "The lighthouse keeper counts 417 ships each winter."
    assert len(text) > 1_000_000
    report = verify("The lighthouse keeper counts 417 ships each winter.", [text], scorer="lexical")
    claim = report.claims[0]
    assert claim.verdict is Verdict.SUPPORTED and claim.scored
    assert text[slice(*claim.evidence_span)].startswith("The lighthouse keeper counts 417")
    assert (report.meta.windows or 0) > 1000


def test_non_english_input_gets_a_clear_warning():
    report = verify("Der Hafen öffnet täglich um neun Uhr und die Brücke schließt.",
                    ["Der Hafen öffnet täglich um neun Uhr. Die Brücke schließt abends."], scorer="lexical")
    assert any("English" in w for w in report.warnings)
    assert report.claims  # still checked
    english = verify("The castle faces the harbor.", ["The castle faces the harbor."], scorer="lexical")
    assert english.warnings == ()


def test_fabricated_citation_is_flagged_and_never_accepted():
    report = verify("The castle faces the harbor [S4].", ["The castle faces the harbor."], scorer="lexical")
    assert [f.check for f in report.findings] == ["fabricated_citation"]
    assert report.route is not Route.ACCEPT
    assert "fabricated_citation" in [f.check for f in report.claims[0].checks]


def test_report_is_json_serialisable():
    import json

    report = verify("The castle faces the harbor. It costs $5.", ["The castle faces the harbor."], scorer="lexical")
    data = json.loads(json.dumps(report.to_dict()))
    assert data["route"] == "reject"
    assert data["claims"][1]["verdict"] == "NOT_FOUND" and data["claims"][1]["checks"][0]["check"] == "figure_not_in_context"


class _CalibratedLexical(LexicalScorer):
    """The lexical baseline with per-task thresholds, as a calibrated bundle carries them."""

    calibration = Calibration(task_thresholds={"qa": (0.95, 0.9)})


_HALF = "The plan costs $10 a month and includes free international roaming for every customer."


def test_task_thresholds_apply_only_to_their_task():
    verifier = Verifier(_CalibratedLexical())
    chunks = ["The plan costs $10 a month and includes roaming in the EU."]
    pooled = verifier.verify(_HALF, chunks)
    qa = verifier.verify(_HALF, chunks, task="qa")
    assert pooled.score == pytest.approx(qa.score)  # thresholds route; they do not change the score
    assert 0.2 < qa.score < 0.8
    assert pooled.route is Route.ESCALATE and qa.route is Route.REJECT
    assert qa.meta.task == "qa" and pooled.meta.task is None
    # Thresholds the caller sets win over every calibrated one.
    explicit = Verifier(_CalibratedLexical(), CheckSettings(accept_at=0.3, reject_at=0.1)).verify(_HALF, chunks, task="qa")
    assert explicit.route is Route.ACCEPT


class _LongFormCalibrated(LexicalScorer):
    calibration = Calibration(task_thresholds={"qa": (0.3, 0.1), "qa/long": (0.95, 0.9)})


def test_a_long_form_answer_gets_its_own_calibration():
    chunk = "The plan costs $10 a month and includes roaming in the EU."
    verifier = Verifier(_LongFormCalibrated())
    short = verifier.verify(_HALF, [chunk], task="qa")
    long_answer = " ".join([_HALF] * 4)  # four claims: long-form
    long = verifier.verify(long_answer, [chunk], task="qa")
    assert short.meta.calibration == "qa" and long.meta.calibration == "qa/long"
    assert long.meta.task == "qa"
    # The report names the pair it was routed by.
    assert short.meta.thresholds == RoutedThresholds(accept_at=0.3, reject_at=0.1)
    assert long.meta.thresholds == RoutedThresholds(accept_at=0.95, reject_at=0.9)
    assert short.score == pytest.approx(long.score)
    assert short.route is Route.ACCEPT and long.route is Route.REJECT
    # No task: no key, the pooled thresholds.
    pooled = verifier.verify(long_answer, [chunk]).meta
    assert pooled.calibration is None
    assert pooled.thresholds == RoutedThresholds(accept_at=verifier.accept_at, reject_at=verifier.reject_at)


def test_a_figure_check_caps_the_claim_at_the_reject_threshold():
    from groundwire.core.verdicts import capped_score

    assert capped_score(0.9, (0.8, 0.2), hard=True, negation=False) == 0.2
    assert capped_score(0.1, (0.8, 0.2), hard=True, negation=False) == 0.1
    assert capped_score(0.9, (0.8, 0.2), hard=False, negation=True) == pytest.approx(0.5)
    assert capped_score(0.9, (0.8, 0.2), hard=False, negation=False) == 0.9


def test_a_negation_flip_the_model_reads_as_contradiction_is_rejected():
    from groundwire.core.verdicts import NEGATED_CONTRADICTION_AT, capped_score

    strong, weak = NEGATED_CONTRADICTION_AT, NEGATED_CONTRADICTION_AT - 0.01
    assert capped_score(0.9, (0.8, 0.2), hard=False, negation=True, contradiction=strong) == 0.2
    assert capped_score(0.9, (0.8, 0.2), hard=False, negation=True, contradiction=weak) == pytest.approx(0.5)
    # Without the negation check's flag the model's contradiction alone moves nothing here.
    assert capped_score(0.9, (0.8, 0.2), hard=False, negation=False, contradiction=0.99) == 0.9


@pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")
def test_a_negated_claim_the_model_contradicts_is_routed_reject_not_to_the_judge():
    verifier = Verifier(get_scorer())
    result = verifier.verify("The library is open on Sundays.", ["The library is not open on Sundays."]).claims[0]
    assert "negation_mismatch" in [finding.check for finding in result.checks]
    assert result.contradiction is not None and result.contradiction >= 0.9
    assert (result.route, result.verdict) == (Route.REJECT, Verdict.CONTRADICTED)


def test_a_negation_flip_is_recorded_as_a_feature_and_never_accepted():
    report = Verifier(get_scorer("lexical")).verify("The museum is not open on Mondays.", ["The museum is open on Mondays."])
    claim = report.claims[0]
    assert claim.features["negation_flip"] == 1.0
    assert [f.check for f in claim.checks] == ["negation_mismatch"]
    assert claim.route is not Route.ACCEPT and claim.score <= 0.5
    plain = Verifier(get_scorer("lexical")).verify("The museum is open on Mondays.", ["The museum is open on Mondays."])
    assert plain.claims[0].features["negation_flip"] == 0.0 and plain.route is Route.ACCEPT


def test_a_json_record_context_is_verified_as_data2text():
    record = '{"name": "Pizza Mizza", "city": "Santa Barbara", "attributes": {"WiFi": "free", "Music": null}}'
    report = Verifier(get_scorer("lexical")).verify("Pizza Mizza is in Santa Barbara.", [record])
    assert report.meta.task == "data2text"
    assert Verifier(get_scorer("lexical")).verify("It is in Santa Barbara.", ["It is in Santa Barbara."]).meta.task is None


def test_claims_carry_the_lexical_baseline_as_a_feature():
    from groundwire.foundation.textutil import content_words
    from groundwire.scoring.lexical import weighted_recall

    chunks = ["The plan costs $10 a month.", "Roaming is included in the EU."]
    report = Verifier(get_scorer("lexical")).verify("The plan costs $10 a month. Roaming is free in Japan.", chunks)
    for claim in report.claims:
        expected = max(weighted_recall(claim.claim.text, frozenset(content_words(c))) for c in chunks)
        assert claim.features["lexical_support"] == pytest.approx(expected)
    assert report.claims[0].features["lexical_support"] == pytest.approx(1.0)
    assert report.claims[1].features["lexical_support"] < 0.7


def test_a_per_task_combiner_is_chosen_by_the_task():
    from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner

    trusting = LogisticCombiner(names=("support",), mean=(0.0,), scale=(1.0,), coef=(8.0,), intercept=-4.0)
    doubting = LogisticCombiner(names=("support",), mean=(0.0,), scale=(1.0,), coef=(8.0,), intercept=-7.0)
    verifier = Verifier(get_scorer("lexical"), combiner=TaskCombiner(default=trusting, by_task={"data2text": doubting}))
    chunks = ["The plan costs $10 a month."]
    # Every word in the context, but no copy of it (a copy is SUPPORTED at 1.0 whatever the combiner says).
    default, record = (verifier.verify("The plan costs $10 for a month.", chunks, task=t) for t in (None, "data2text"))
    assert default.claims[0].score == pytest.approx(1 / (1 + np.exp(-4.0)))
    assert record.claims[0].score == pytest.approx(1 / (1 + np.exp(-1.0)))


def test_flagged_claims_say_which_words_are_unsupported():
    chunks = ["Refunds are issued within 14 days of the return. Shipping is free on orders over 50 euros."]
    answer = "Refunds are issued within 14 days [S1]. Express shipping costs 25 euros on weekends."
    report = Verifier(get_scorer("lexical")).verify(answer, chunks)
    supported, flagged = report.claims
    assert supported.verdict is Verdict.SUPPORTED and supported.unsupported_spans == ()
    assert flagged.verdict is not Verdict.SUPPORTED
    words = [answer[a:b] for a, b in flagged.unsupported_spans]
    assert words == ["Express", "costs 25", "weekends"]  # "shipping", "euros" and stopwords occur in the context


def test_a_flagged_claim_with_no_novel_word_is_flagged_whole():
    from groundwire.core.spans import unsupported_spans
    from groundwire.foundation.textutil import content_words

    answer = "Shipping is not free."
    context_words = frozenset(content_words("Shipping is free."))
    assert unsupported_spans(answer, (0, len(answer)), context_words) == ((0, len(answer)),)
    only_shipping = frozenset(content_words("shipping"))
    assert unsupported_spans("  Shipping is free.  ", (0, 21), only_shipping) == ((14, 18),)
