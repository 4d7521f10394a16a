"""The meaning layer (core.meaning): alignment by sentence embedding, coverage with WordNet synonyms, and the
paraphrase gate, which must never SUPPORT a swapped figure, name, role, date or a negated or opposite claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundwire.core.meaning import GATE_SIMILARITY, align, context_sentences, gate_closed_by, paraphrase
from groundwire.core.plan import as_chunks
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Verdict
from groundwire.scoring import get_scorer
from groundwire.scoring.embedder import default_embedder

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "claim_cases.jsonl"


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(get_scorer("lexical"), CheckSettings(meaning=True))


def test_alignment_finds_the_sentence_that_says_it_and_its_chunk() -> None:
    chunks = list(as_chunks([
        "The museum has a cafe. It was founded in 1901 by the city.",
        "Opening hours vary. Adult tickets cost 12 euros, and children enter free.",
    ]))
    (aligned,) = align(["Tickets for adults are 12 euros."], chunks, default_embedder())
    assert aligned is not None
    assert aligned.chunk_index == 1
    assert chunks[1].text[aligned.span[0] : aligned.span[1]] == "Adult tickets cost 12 euros, and children enter free."
    assert aligned.similarity >= GATE_SIMILARITY
    assert aligned.uncovered == ()


def test_coverage_takes_wordnet_synonyms_and_word_forms_but_not_an_added_qualifier() -> None:
    chunks = list(as_chunks(["Our support team answers email within one business day."]))
    covered, qualified = align(
        ["Support replies to emails within a business day.", "Support replies to urgent emails within a day."],
        chunks,
        default_embedder(),
    )
    assert covered is not None and covered.uncovered == ()  # reply ~ answer (WordNet), emails ~ email
    assert qualified is not None and qualified.uncovered == ("urgent",)


def test_names_are_covered_only_by_themselves() -> None:
    chunks = list(as_chunks(["The keynote was given by Anna Becker on Monday."]))
    (aligned,) = align(["The keynote was given by Tom Becker on Mondays."], chunks, default_embedder())
    assert aligned is not None
    assert aligned.uncovered_names == ("Tom",)  # "Mondays" is a form of "Monday"; "Tom" is no form of "Anna"
    assert "a name not in the sentence" in gate_closed_by(aligned, findings=False, figures_ok=True)


def test_the_gate_stays_closed_on_any_finding_or_unmatched_figure() -> None:
    chunks = list(as_chunks(["Adult tickets cost 12 euros."]))
    (aligned,) = align(["Tickets for adults are 12 euros."], chunks, default_embedder())
    assert paraphrase(aligned, findings=False, figures_ok=True)
    assert not paraphrase(aligned, findings=True, figures_ok=True)
    assert not paraphrase(aligned, findings=False, figures_ok=False)
    assert not paraphrase(None, findings=False, figures_ok=True)


def test_a_plain_paraphrase_is_supported_by_the_gate_and_cited_from_the_alignment(verifier: Verifier) -> None:
    context = ["The museum opened in 1901.", "Tickets cost 12 euros for adults."]
    report = verifier.verify("Adult tickets are 12 euros.", context)
    (claim,) = report.claims
    assert claim.verdict is Verdict.SUPPORTED
    assert claim.decided_by == "meaning"
    assert claim.evidence == "Tickets cost 12 euros for adults."
    assert claim.features["paraphrase"] == 1.0
    assert "meaning" in report.timings


def test_without_the_meaning_layer_nothing_is_aligned() -> None:
    report = Verifier(get_scorer("lexical"), CheckSettings(meaning=False)).verify("Adult tickets are 12 euros.", ["Tickets cost 12 euros for adults."])
    (claim,) = report.claims
    assert claim.decided_by != "meaning"
    assert "meaning_similarity" not in claim.features


def test_long_sentences_are_cut_into_pieces_that_cover_all_of_them() -> None:
    text = " ".join(["word"] * 700) + "."
    (chunk,) = as_chunks([text])
    pieces = context_sentences([chunk])
    assert len(pieces) > 1
    assert pieces[0][1] == 0 and pieces[-1][2] == len(text)
    assert all(end - start <= 1000 for _, start, end in pieces)


def _swap_cases() -> list[dict[str, object]]:
    return [case for case in map(json.loads, CASES.read_text().splitlines()) if case["expected"] != "SUPPORTED"]


@pytest.mark.parametrize("case", _swap_cases(), ids=lambda case: str(case["id"]))
def test_the_gate_never_supports_a_claim_the_taxonomy_says_is_not_supported(verifier: Verifier, case: dict) -> None:
    report = verifier.verify(str(case["claim"]), [str(chunk) for chunk in case["chunks"]])
    gated = [claim for claim in report.claims if claim.decided_by == "meaning"]
    assert gated == [], f"the gate supported {case['id']} ({case['kind']})"
