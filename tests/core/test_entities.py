"""The entity check (core.checks.entities): names the context never mentions, and agent and patient swapped for
any verb, read by spaCy's small English pipeline (the [entities] extra, installed in the dev environment)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import pytest

pytest.importorskip("spacy")

from groundwire.core.checks import (
    CLAIM_CHECKS,
    CheckEffect,
    ClaimCheckInput,
    entities,
    validate_opt_ins,
)
from groundwire.core.checks.context import ContextIndex
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.foundation.extras import MissingExtraError
from groundwire.foundation.types import Chunk, Claim, Finding, Route, Verdict
from groundwire.scoring import get_scorer

CRITICISED = "The mayor criticised the committee."


def run(claim: str, chunks: Sequence[str], evidence: str | None = None) -> list[Finding]:
    context = ContextIndex.build([Chunk(f"S{i}", text) for i, text in enumerate(chunks, 1)])
    item = ClaimCheckInput(Claim(claim, (0, len(claim)), claim), context, [], evidence)
    return list(entities.CHECK.run(item))


def checks(findings: Sequence[Finding]) -> list[str]:
    # A signal's findings carry no verdict of their own (types.Finding); the check's effect decides.
    assert all(finding.verdict is None for finding in findings)
    return [finding.check for finding in findings]


@pytest.mark.parametrize(
    ("claim", "name"),
    [
        ("Tom Becker opened the conference.", "Tom Becker"),
        ("The conference was organised by Northwind Analytics.", "Northwind Analytics"),
        ("The conference took place in Reykjavik.", "Reykjavik"),
    ],
)
def test_an_invented_person_organisation_or_place_is_not_in_the_context(claim: str, name: str) -> None:
    chunks = ["The keynote at the conference was given by Priya Nair, the company's chief scientist."]
    findings = run(claim, chunks, chunks[0])
    assert checks(findings) == ["entity_not_in_context"]
    assert name in findings[0].detail


def test_every_word_of_a_name_must_be_in_the_context() -> None:
    # "Becker" alone does not vouch for "Tom Becker".
    findings = run("Tom Becker spoke first.", ["Anna Becker spoke first."])
    assert checks(findings) == ["entity_not_in_context"]
    assert "(tom)" in findings[0].detail


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The committee criticised the mayor.", CRITICISED),
        ("The mayor was criticised by the committee.", CRITICISED),
        ("The committee criticised the mayor.", "The committee was criticised by the mayor."),
        ("The mayor was praised by the committee.", "The committee was praised by the mayor on Monday."),
        ("The committee met on Monday and criticised the mayor.", CRITICISED),
    ],
)
def test_agent_and_patient_swapped_for_a_verb_roles_does_not_list(claim: str, evidence: str) -> None:
    findings = run(claim, [evidence], evidence)
    assert checks(findings) == ["role_swap"]


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # Faithful restatements, active or passive.
        (CRITICISED, CRITICISED),
        ("The committee was criticised by the mayor.", CRITICISED),
        ("The mayor criticized the committee on Monday.", "On Monday the mayor criticised the committee."),
        # Negated relations are the negation check's; symmetric verbs say the same either way round.
        ("The committee did not criticise the mayor.", CRITICISED),
        ("The committee met the mayor.", "The mayor met the committee."),
        # No evidence sentence, no swap.
        ("The committee criticised the mayor.", None),
    ],
)
def test_no_swap_where_the_roles_agree(claim: str, evidence: str | None) -> None:
    assert run(claim, [CRITICISED], evidence) == []


def test_a_name_in_another_chunk_is_in_the_context() -> None:
    chunks = ["The keynote was given by the chief scientist.", "Priya Nair joined Northwind Analytics in Oslo."]
    assert run("Priya Nair of Northwind Analytics gave the keynote in Oslo.", chunks, chunks[0]) == []


@pytest.mark.parametrize(
    "claim",
    [
        "The keynote was given on 14 March 2021 to 3,000 people.",  # dates and numbers: the figure checks'
        "The keynote lasted 45 minutes and cost $5,000.",
    ],
)
def test_dates_and_numbers_are_left_to_the_figure_checks(claim: str) -> None:
    chunks = ["The keynote was given by Priya Nair."]
    assert run(claim, chunks, chunks[0]) == []


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The museum is in the US.", "The museum is in the United States."),
        ("The parade crossed NY.", "The parade crossed New York City."),
        ("The ruling came from the International Court of Justice.", "The ICJ ruled on the case."),
        ("British troops landed first.", "Troops from Britain landed first."),
        ("F. C. S. Schiller wrote it.", "Schiller wrote it."),  # initials
        ("The Grammys went to Adele.", "Adele won a Grammy."),
        ("The board uses interrupt-on-change (IOC) pins.", "The board uses interrupt-on-change pins."),
    ],
)
def test_a_name_the_context_writes_in_another_form(claim: str, context: str) -> None:
    assert run(claim, [context]) == []


def test_a_swap_roles_already_found_is_not_counted_again() -> None:
    evidence = "The audit report was written by Alice Moreno and reviewed by Bob Chen."
    # roles.py reads "written by" itself and names the stranger: the entity check adds nothing.
    assert run("The audit report was written by Carol Diaz.", [evidence], evidence) == []


def test_without_spacy_or_its_model_the_check_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    loader = entities.pipeline
    monkeypatch.setattr(entities, "pipeline", lambda: None)
    assert run("Tom Becker criticised the mayor.", [CRITICISED], CRITICISED) == []
    # And the loader says None, never raises, when spacy cannot be found.
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "spacy" else real_find_spec(name, *a)
    )
    assert loader.__wrapped__() is None


def test_the_check_is_registered_after_roles_and_signals_in_verify() -> None:
    names = [check.name for check in CLAIM_CHECKS]
    assert names.index("entities") == names.index("roles") + 1
    assert entities.CHECK.needs_evidence and entities.CHECK.effect is CheckEffect.SIGNAL
    assert entities.CHECK.opt_in  # spaCy loads only for a verifier that asks for it
    off = Verifier(get_scorer("lexical")).verify("The committee criticised the mayor.", [CRITICISED]).claims[0]
    assert "role_swap" not in [finding.check for finding in off.checks]
    verifier = Verifier(get_scorer("lexical"), CheckSettings(entities=True))
    # Every word of the claim is in the evidence: the lexical scorer alone would accept it.
    swapped = verifier.verify("The committee criticised the mayor.", [CRITICISED]).claims[0]
    assert [finding.check for finding in swapped.checks] == ["role_swap"]
    assert swapped.verdict is not Verdict.SUPPORTED and swapped.route is Route.ESCALATE
    stranger = verifier.verify("Tom Becker criticised the committee.", [CRITICISED]).claims[0]
    assert [finding.check for finding in stranger.checks] == ["entity_not_in_context"]
    assert stranger.route is not Route.ACCEPT
    faithful = verifier.verify("The mayor criticised the committee.", [CRITICISED]).claims[0]
    assert faithful.checks == () and faithful.route is Route.ACCEPT


def test_an_unknown_or_uninstalled_opt_in_check_is_refused_clearly(monkeypatch) -> None:
    with pytest.raises(ValueError, match="unknown opt-in check"):
        validate_opt_ins(frozenset({"entitys"}))
    # spaCy's pipeline not installed: a MissingExtraError (a ValueError, as InputError is) that names the extra
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == entities.MODEL else real(name, *a))
    with pytest.raises(MissingExtraError, match=rf"""the "entities" check needs {entities.MODEL}: pip install 'groundwire\[entities\]'"""):
        Verifier(get_scorer("lexical"), CheckSettings(entities=True))


def test_the_setting_turns_the_check_on() -> None:
    from groundwire.config import CheckSettings
    from groundwire.pipeline import build_verifier

    assert build_verifier(CheckSettings(scorer="lexical")).checks_on == frozenset()
    assert build_verifier(CheckSettings(scorer="lexical", entities=True)).checks_on == {"entities"}
