"""The report's contract in /openapi.json: the response models type the report, so the spec documents its claims,
verdicts, citations and thresholds, and a served report fits the schema the spec declares."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNKS = [{"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase."}]
ANSWER = "The Pro plan costs $10 a month [S1]. Refunds are issued within 90 days of purchase."


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its $ref followed, and an optional field's `anyOf [X, null]` read as X; the field's own
    description kept."""
    described = {"description": schema["description"]} if "description" in schema else {}
    if "$ref" in schema:
        return resolve(spec, spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]) | described
    options = [option for option in schema.get("anyOf", ()) if option.get("type") != "null"]
    return resolve(spec, options[0]) | described if len(options) == 1 else schema


def field(spec: dict[str, Any], schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """The schema of `path` below `schema`, through objects' properties and arrays' items ("[]")."""
    for step in path:
        schema = resolve(spec, schema)
        schema = schema["items"] if step == "[]" else schema["properties"][step]
    return resolve(spec, schema)


def test_the_spec_documents_claims_verdicts_citations_and_thresholds(client) -> None:
    spec = client.get("/openapi.json").json()
    ok = spec["paths"]["/v1/verify"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    report = field(spec, ok, "report")
    assert {"score", "route", "claims", "meta", "supported_share"} <= set(report["required"])
    assert set(field(spec, report, "route")["enum"]) == {"accept", "escalate", "reject"}
    claim = field(spec, report, "claims", "[]")
    assert set(field(spec, claim, "verdict")["enum"]) == {"SUPPORTED", "CONTRADICTED", "NOT_FOUND", "UNRESOLVED"}
    assert set(field(spec, claim, "route")["enum"]) == {"accept", "escalate", "reject"}
    assert "judge" in field(spec, claim, "decided_by")["enum"]
    citation = field(spec, claim, "chunk_id")
    assert citation["type"] == "string" and "citation" in citation["description"]
    assert field(spec, claim, "evidence_span")["type"] == "array"
    assert field(spec, claim, "claim", "text")["type"] == "string"
    thresholds = field(spec, report, "meta", "thresholds")
    assert {name: thresholds["properties"][name].get("type") for name in ("accept_at", "reject_at")} == {
        "accept_at": "number", "reject_at": "number"}
    assert "decide_at" in thresholds["properties"]
    meta = field(spec, report, "meta")
    assert {"task", "calibration", "thresholds", "skipped", "cascade", "judge", "profile"} <= set(meta["properties"])
    assert field(spec, meta, "judge", "outcomes", "[]", "verdict")["enum"] == field(spec, claim, "verdict")["enum"]
    # The repair and generate responses carry the same report.
    for path in ("/v1/repair", "/v1/generate"):
        body = spec["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert field(spec, body, "report")["properties"] == report["properties"], path
    assert field(spec, spec["components"]["schemas"]["RepairResponse"], "repaired", "report")["properties"] == report["properties"]


def test_a_served_report_fits_the_schema_the_spec_declares(client) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    spec = client.get("/openapi.json").json()
    validator = jsonschema.Draft202012Validator({"components": spec["components"],
                                                 "$ref": "#/components/schemas/VerifyResponse"})
    for body in ({"answer": ANSWER, "chunks": CHUNKS, "task": "qa"}, {"answer": "NOT_IN_CONTEXT", "chunks": CHUNKS}):
        response = client.post("/v1/verify", json=body, headers=ALPHA)
        assert response.status_code == 200, response.text
        served = response.json()
        validator.validate(served)
        assert not validator.is_valid({**served, "report": {**served["report"], "route": "maybe"}})
    assert served["report"]["abstained"] and served["report"]["meta"]["skipped"] is None


def test_the_served_report_is_the_report_s_own_json_and_the_schema_names_each_of_its_fields(client) -> None:
    """The response's report is serialised from the Report dataclass itself (no hand-kept copy of its fields): its
    JSON is `Report.to_dict()`, and the spec's report schema has exactly those fields, all required."""
    from groundwire import verify
    from groundwire.foundation.types import Report
    from groundwire.service.models import report_json

    fields = [f.name for f in dataclasses.fields(Report)] + ["supported_share"]
    report = verify("The Pro plan costs $10 a month.", [CHUNKS[0]["text"]], scorer="lexical", task="qa")
    assert list(report.to_dict()) == fields
    assert report_json(report) == report.to_dict()
    spec = client.get("/openapi.json").json()
    ok = spec["paths"]["/v1/verify"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    described = field(spec, ok, "report")
    assert list(described["properties"]) == fields
    assert described["required"] == fields
