from __future__ import annotations

import pytest

from groundwire.foundation.types import REFUSAL_TOKEN, Chunk
from groundwire.llm import prompts
from groundwire.llm.prompts import Strength

CHUNKS = [
    Chunk("S1", "## Refunds\nRefunds take 14 days.", doc_id="policy.md", page=3),
    Chunk("S2", "| plan | price |\n| basic | $10 |", doc_id="prices.csv", type="table"),
    Chunk("S3", "Invoice total: 1,200 EUR", doc_id="scan.png", type="image_transcript"),
    Chunk("S4", "No metadata here."),
]


def test_context_headers_are_derived_from_metadata() -> None:
    headers = [prompts.context_header(c) for c in CHUNKS]
    assert headers[0] == '[S1] (policy.md, page 3, section "Refunds")'
    assert headers[1] == "[S2] (prices.csv, table)"
    assert headers[2].startswith("[S3] (scan.png, transcribed from an image")
    assert headers[3] == "[S4]"
    block = prompts.context_block(CHUNKS)
    assert block.index("[S1]") < block.index("Refunds take 14 days.") < block.index("[S2]")


@pytest.mark.parametrize("strength", list(Strength))
def test_every_strength_keeps_grounding_and_the_refusal_token(strength: Strength) -> None:
    system, user = (m["content"] for m in prompts.generation_messages("How long?", CHUNKS, strength=strength))
    assert f"reply with exactly {REFUSAL_TOKEN}" in system and "cite the passage" in system
    assert "[S4]" in user and user.endswith("Question: How long?")


def test_strengths_differ() -> None:
    systems = {s: prompts.generation_messages("q", CHUNKS, strength=s)[0]["content"] for s in Strength}
    assert len(set(systems.values())) == len(Strength)
    assert "<evidence>" in systems[Strength.CHAIN_OF_THOUGHT]


def test_chain_of_thought_extraction() -> None:
    assert (
        prompts.extract_cot_answer("<evidence>[S1] x</evidence>\nAnswer: Refunds take 14 days [S1].")
        == "Refunds take 14 days [S1]."
    )
    assert prompts.extract_cot_answer("<evidence>[S1] x</evidence> Refunds take 14 days.") == "Refunds take 14 days."


def test_judge_edit_and_decompose_prompts_carry_their_inputs() -> None:
    judge = prompts.judge_messages("Refunds take 14 days.", CHUNKS)
    assert "quote" in judge[0]["content"] and "Claim: Refunds take 14 days." in judge[1]["content"]
    edit = prompts.edit_messages("Refunds take 30 days.", CHUNKS[0])
    assert "Never add" in edit[0]["content"] and "[S1]" in edit[1]["content"] and "[S2]" not in edit[1]["content"]
    decompose = prompts.decompose_messages("A. B.", question="Why?")
    assert decompose[1]["content"] == "Question: Why?\n\nAnswer: A. B."
