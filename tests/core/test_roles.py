"""The role-swap check (core.checks.roles): an explicit relation given to the wrong named entity is CONTRADICTED."""

from __future__ import annotations

import pytest

from groundwire.core.checks import CLAIM_CHECKS, CheckEffect
from groundwire.core.checks.roles import Relation, relations, role_findings
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Verdict
from groundwire.scoring import get_scorer

WRITTEN = "The audit report was written by Alice Moreno and reviewed by Bob Chen."
ACQUIRED = "In 2018, Microsoft acquired GitHub for $7.5 billion."


def test_relations_read_active_and_passive_voice() -> None:
    assert relations(WRITTEN) == [Relation("write", "Alice Moreno", None), Relation("review", "Bob Chen", None)]
    assert relations(ACQUIRED) == [Relation("acquire", "Microsoft", "GitHub")]
    assert relations("GitHub was bought by Microsoft.") == [Relation("acquire", "Microsoft", "GitHub")]
    assert relations("It was not written by Alice.") == [Relation("write", "Alice", None, negated=True)]


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The audit report was written by Bob Chen.", WRITTEN),
        ("Alice Moreno reviewed the audit report.", WRITTEN),
        ("GitHub acquired Microsoft in 2018.", ACQUIRED),
        ("Microsoft was acquired by GitHub.", ACQUIRED),
        ("The Lakers beat the Celtics.", "The Celtics beat the Lakers 102-99 on Friday."),
        ("Smith sued Jones in 2020.", "In 2020, Jones sued Smith over the patent."),
    ],
)
def test_a_swapped_role_is_a_contradiction(claim: str, evidence: str) -> None:
    findings = role_findings(claim, evidence)
    assert [f.verdict for f in findings] == [Verdict.CONTRADICTED]
    assert findings[0].check == "role_conflict"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The audit report was written by Alice Moreno.", WRITTEN),
        ("Bob Chen reviewed the audit report.", WRITTEN),
        ("Microsoft bought GitHub.", ACQUIRED),
        ("GitHub was acquired by Microsoft in 2018.", ACQUIRED),
        # Without the whole context, a name the evidence does not mention is not known to be a stranger.
        ("The audit report was written by Carol Diaz.", WRITTEN),
        # One of several founders, and a relation the context does not state at all.
        ("Apple was founded by Steve Wozniak.", "Steve Jobs, Steve Wozniak and Ronald Wayne founded Apple."),
        ("Bob Chen edited the audit report.", WRITTEN),
        # Negated claims are the negation check's.
        ("The audit report was not written by Bob Chen.", WRITTEN),
        ("The Lakers beat the Knicks.", "The Celtics beat the Lakers on Friday."),
        # Named in passing, in no role (a dev answer this check once flagged wrongly).
        (
            "The first theory, developed by British naturalist Alfred Russel Wallace, concerns habitat.",
            "The first one was developed by Alfred Russel Wallace, a British naturalist.",
        ),
    ],
)
def test_what_is_no_swap_finds_nothing(claim: str, evidence: str) -> None:
    assert role_findings(claim, evidence) == []


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The audit report was written by Carol Diaz.", WRITTEN),
        ("Apple was founded by Bill Gates.", "Steve Jobs, Steve Wozniak and Ronald Wayne founded Apple."),
        ("The keynote was given by Tom Becker.", "The keynote was given by Priya Nair, the chief scientist."),
    ],
)
def test_a_role_given_to_someone_the_context_never_names_is_a_contradiction(claim: str, evidence: str) -> None:
    findings = role_findings(claim, evidence, context=["Minutes of the meeting.", evidence])
    assert [(f.check, f.verdict) for f in findings] == [("role_conflict", Verdict.CONTRADICTED)]
    # Named elsewhere in the context, in no role the evidence states: no swap, the model decides.
    stranger = claim.split(" by ")[-1].rstrip(".") if " by " in claim else claim.split(" was ")[0]
    assert role_findings(claim, evidence, context=[f"{stranger} attended.", evidence]) == []


def test_the_role_check_is_registered_and_decides_the_verdict() -> None:
    check = next(c for c in CLAIM_CHECKS if c.name == "roles")
    assert check.effect is CheckEffect.VERDICT and check.needs_evidence
    verifier = Verifier(get_scorer("lexical"))
    swapped = verifier.verify("The audit report was written by Bob Chen.", [WRITTEN]).claims[0]
    assert swapped.verdict is Verdict.CONTRADICTED
    assert swapped.decided_by == "checks"
    assert any(f.check == "role_conflict" for f in swapped.checks)
    kept = verifier.verify("The audit report was written by Alice Moreno.", [WRITTEN]).claims[0]
    assert not any(f.check == "role_conflict" for f in kept.checks)


def test_a_name_the_context_mentions_without_a_figure_is_no_stranger() -> None:
    # The verifier's context index keeps only the sentences that hold a figure; the stranger rule must read
    # the whole context, or a name mentioned in a plain sentence would count as never mentioned.
    verifier = Verifier(get_scorer("lexical"))
    claim = "The annual safety report was written by Marsh."
    evidence = "The annual safety report was written by Alice Stone and reviewed by Carol Diaz."
    stranger = verifier.verify(claim, [evidence]).claims[0]
    assert [f.check for f in stranger.checks] == ["role_conflict"]
    named = verifier.verify(claim, ["Thanks go to Marsh.", evidence]).claims[0]
    assert named.evidence == evidence
    assert not any(f.check == "role_conflict" for f in named.checks)
