import json

from groundwire import Verdict, verify
from groundwire.core.checks.negation import negation_finding
from groundwire.core.structured import humanize, render_structured

RECORD = json.dumps({
    "name": "Tinker's Burgers", "city": "Summerland",
    "hours": {"Monday": "11:0-17:0", "Sunday": "11:0-17:0"},
    "attributes": {"OutdoorSeating": True, "WiFi": "no", "BusinessParking": {"valet": False, "street": True}},
    "business_stars": 4.0,
    "review_info": [{"review_stars": 5.0, "review_text": "Best burgers we've ever had!!"}],
})


def test_json_record_renders_one_statement_per_leaf():
    lines = render_structured(RECORD).splitlines()
    assert "Name: Tinker's Burgers." in lines
    assert "Hours monday: 11:0-17:0." in lines
    assert "Attributes outdoor seating: yes." in lines
    assert "Attributes wifi: no." in lines
    assert "Attributes business parking valet: no." in lines
    assert "Review info 1 review text: Best burgers we've ever had!!" in lines
    assert humanize("RestaurantsTakeOut") == "restaurants take out"
    assert render_structured("Plain prose { with a brace.") is None
    assert render_structured("{not json") is None


def test_claims_are_checked_against_the_rendered_record():
    report = verify("The shop is open from 11 AM to 5 PM on Monday. It is open until 7 PM on Sunday.",
                    [RECORD], scorer="lexical")
    first, second = report.claims
    assert not [f for f in first.checks if f.verdict]  # 5 PM == 17:0 in the record
    assert second.verdict in (Verdict.NOT_FOUND, Verdict.CONTRADICTED)
    assert any("7 PM" in f.detail for f in second.checks)
    rendered = report.meta.rendered_chunks or {}
    assert rendered["S1"].startswith("Name: Tinker's Burgers.")
    assert "Hours" in rendered["S1"][slice(*first.evidence_span)]


def test_negation_signal_needs_a_near_restatement():
    assert negation_finding("The shop does not sell bread.", "The shop sells bread and milk.") is not None
    # a negated evidence sentence about something else is not a signal
    assert negation_finding("The shop sells bread.", "Nobody could find parking near the station yesterday.") is None
