"""Arbitrary JSON bodies: the service answers 200 or a structured 4xx, never a 500, and logs only what it answered."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from service_common import ALPHA

pytest.importorskip("fastapi")

finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers(-10, 10**6) | finite | st.text(max_size=40)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)
chunk = st.fixed_dictionaries({"id": st.text(max_size=8), "text": st.text(max_size=60)},
                              optional={"page": st.integers(-2, 5) | st.none(), "type": st.sampled_from(["text", "table", "x"]),
                                        "score": finite | st.text(max_size=3)})
near_valid = st.fixed_dictionaries(
    {"answer": st.text(max_size=120) | st.integers()},
    optional={"chunks": st.lists(chunk, max_size=3) | json_values, "question": st.text(max_size=40) | st.none(),
              "doc_ids": st.lists(st.text(max_size=6), max_size=2), "require_citations": st.booleans() | st.text(max_size=2)},
)
endpoints = st.sampled_from(["/v1/verify", "/v1/repair", "/v1/ingest", "/v1/feedback", "/v1/generate"])


@hsettings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=endpoints, body=near_valid | json_values)
def test_any_body_gets_200_or_a_structured_4xx(client, path: str, body: object) -> None:
    before = len(client.get("/v1/requests", params={"limit": 1000}, headers=ALPHA).json()["requests"])
    response = client.post(path, json=body, headers=ALPHA)
    assert response.status_code < 500 or response.status_code == 503, response.text
    payload = response.json()
    if response.status_code >= 400:
        error = payload["error"]
        assert error["status"] == response.status_code and error["code"] and error["message"]
    after = len(client.get("/v1/requests", params={"limit": 1000}, headers=ALPHA).json()["requests"])
    # A row is added for a 200 from verify or repair, and for a failed request (logged as a failure, no report).
    answered = response.status_code == 200 and path in ("/v1/verify", "/v1/repair")
    assert after - before == int(answered) + int(response.status_code >= 400)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_and_logged_only_as_failures(client, literal: str) -> None:
    raw = '{"answer": "The plan costs $10.", "chunks": [{"id": "S1", "text": "The plan costs $10.", "score": %s}]}'
    response = client.post("/v1/verify", content=(raw % literal).encode(),
                           headers={**ALPHA, "Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"
    logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert [(r["endpoint"], r["status"]) for r in logged] == [("error", 422)]
