"""Ids a request may store or name (chunk ids, document ids, request ids): one with a control character (Unicode Cc,
NUL included) or a bidi control is refused with a 422 that names the field and the character (issue 58 item 2);
such an id stored before is kept as it is and read back exactly."""

from __future__ import annotations

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNK = {"id": "S1", "text": "The Pro plan costs $10 a month."}
ANSWER = "The Pro plan costs $10 a month."

REFUSED = [
    ("\x00", "control character U+0000"),
    ("\n", "control character U+000A"),
    ("\x7f", "control character U+007F"),
    ("\x85", "control character U+0085"),
    ("\u202e", "bidi control U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("\u202a", "bidi control U+202A (LEFT-TO-RIGHT EMBEDDING)"),
    ("\u2066", "bidi control U+2066 (LEFT-TO-RIGHT ISOLATE)"),
    ("\u2069", "bidi control U+2069 (POP DIRECTIONAL ISOLATE)"),
]


def _refused(response, what: str, named: str, where: str) -> None:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    # The message alone names the field, where it is, and the character, by its code point.
    assert f"{where}: {what} contains {named} at index 3" in error["message"], error["message"]
    assert [d["type"] for d in error["details"]] == ["id_character"]


@pytest.mark.parametrize(("char", "named"), REFUSED)
def test_every_id_field_refuses_control_and_bidi_characters(client, char: str, named: str) -> None:
    bad = f"doc{char}1"
    cases = [
        ("/v1/verify", {"answer": ANSWER, "chunks": [{**CHUNK, "id": bad}]}, "chunk id", "chunks[0].id"),
        ("/v1/repair", {"answer": ANSWER, "chunks": [CHUNK, {**CHUNK, "id": "S2", "doc_id": bad}]}, "document id",
         "chunks[1].doc_id"),
        ("/v1/verify", {"answer": ANSWER, "doc_ids": ["fine", bad]}, "document id", "doc_ids[1]"),
        ("/v1/ingest", {"documents": [{"doc_id": bad, "text": "Some text."}]}, "document id", "documents[0].doc_id"),
        ("/v1/feedback", {"request_id": bad, "thumbs": "up"}, "request id", "request_id"),
    ]
    for path, body, what, where in cases:
        _refused(client.post(path, json=body, headers=ALPHA), what, named, where)
    # Nothing was ingested.
    assert client.app.state.runtime.store.passages(scope="alpha") == []


def test_ids_with_other_unicode_are_kept() -> None:
    from groundwire.service.models import ChunkIn, DocumentIn

    # Letters of any script, spaces, zero-width joiners (Cf, not a bidi control) and emoji are ids like any other.
    for kept in ("Straße §3", "مستند-1", "文書 1", "a\u200db", "🙂", "x\u00a0y"):
        assert ChunkIn(id=kept, text="t", doc_id=kept).id == kept
        assert DocumentIn(doc_id=kept, text="t").doc_id == kept


def test_no_id_field_of_a_request_is_left_unchecked() -> None:
    """Every field of a request model named as an id (`id`, `*_id`, `*_ids`) refuses a NUL: a new id field that is a
    bare `str` fails here."""
    from pydantic import BaseModel, ValidationError

    from groundwire.service import models

    valid: dict[type[BaseModel], dict[str, object]] = {
        models.ChunkIn: {"id": "S1", "text": "t", "doc_id": "d"},
        models.VerifyRequest: {"answer": "a", "doc_ids": ["d"]},
        models.RepairRequest: {"answer": "a", "doc_ids": ["d"]},
        models.GenerateRequest: {"question": "q", "doc_ids": ["d"]},
        models.DocumentIn: {"doc_id": "d", "text": "t"},
        models.FeedbackRequest: {"request_id": "r", "thumbs": "up"},
    }
    requests = {cls for cls in _subclasses(models._Body) if not cls.__name__.startswith("_")}
    checked = 0
    for cls in requests:
        for name in cls.model_fields:
            if not (name == "id" or name.endswith(("_id", "_ids"))):
                continue
            assert cls in valid, f"{cls.__name__}.{name} is an id field: add {cls.__name__} to this test's table"
            body = dict(valid[cls])
            body[name] = ["d\x00"] if name.endswith("_ids") else "d\x00"
            with pytest.raises(ValidationError) as refused:
                cls.model_validate(body)
            assert [e["type"] for e in refused.value.errors()] == ["id_character"], (cls.__name__, name)
            checked += 1
    assert checked >= 7


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_ids_stored_before_are_kept_as_they_are_and_read_back_exactly(client) -> None:
    """A row or document written before ids were checked is not rewritten: the log gives its ids back exactly
    (JSON-escaped on the wire), a verdict can still be given on it, and its document, which can no longer be named
    in `doc_ids`, stays stored as it was (ingest its text again under a plain id to check against it)."""
    from groundwire.data.provenance import Document
    from groundwire.data.store import ClaimLog, RequestRecord, RetrievedChunk

    runtime = client.app.state.runtime
    odd = "S\x00\u202e1"
    runtime.store.ingest([Document(doc_id=odd, title="t", text="The Pro plan costs $10 a month.")], scope="alpha")
    request_id = runtime.store.log_request(RequestRecord(
        scope="alpha", response=ANSWER, context=f"[{odd}] The Pro plan costs $10 a month.", answer_score=0.2,
        route="reject", retrieved=(RetrievedChunk(cite_id=odd, score=0.5),),
        claims=(ClaimLog(text=ANSWER, verdict="NOT_FOUND", score=0.2, chunk_id=odd),)))

    response = client.get(f"/v1/requests/{request_id}", headers=ALPHA)
    assert response.status_code == 200, response.text
    assert "\\u0000" in response.text  # JSON escapes a control character; the bidi control is sent as UTF-8
    entry = response.json()
    assert entry["context"].startswith(f"[{odd}]")
    assert odd in {claim.get("chunk_id") for claim in entry["claims"]}
    assert [item["cite_id"] for item in entry["retrieved"]] == [odd]
    assert request_id in {item["request_id"] for item in client.get("/v1/review", headers=ALPHA).json()["items"]}
    assert client.post("/v1/feedback", json={"request_id": request_id, "faithful": False},
                       headers=ALPHA).status_code == 200

    refused = client.post("/v1/verify", json={"answer": ANSWER, "doc_ids": [odd]}, headers=ALPHA)
    assert refused.status_code == 422 and "U+0000" in refused.json()["error"]["message"]
    assert [p.doc_id for p in runtime.store.passages(scope="alpha")] == [odd]
