import json

import pytest

from groundwire import verify
from groundwire.core.checks.attributes import attribute_mismatches, record_attributes

RECORD = json.dumps({"name": "Hollister Brewing", "attributes": {
    "OutdoorSeating": True, "WiFi": "u'free'", "Caters": False, "RestaurantsReservations": False, "Music": None,
    "RestaurantsTakeOut": "True", "NoiseLevel": "u'average'",
    "Ambience": {"trendy": False, "casual": True, "intimate": False},
    "BusinessParking": {"garage": False, "street": False, "lot": False, "valet": False}}})


@pytest.fixture(scope="module")
def attributes():
    return record_attributes([RECORD])


def test_yes_no_and_not_given_attributes_are_read(attributes):
    values = {(a.group, a.name): a.value for a in attributes}
    assert values[(None, "outdoor seating")] is True
    assert values[(None, "wifi")] is True
    assert values[(None, "reservations")] is False
    assert values[(None, "take out")] is True
    assert values[(None, "music")] is None
    assert values[("ambience", "trendy")] is False
    assert values[("business parking", "valet")] is False
    assert (None, "noise level") not in values  # not a yes/no value
    assert record_attributes(["Open daily. {not json"]) == ()


@pytest.mark.parametrize("claim, expected", [
    ("It accepts reservations.", [("reservations", True)]),
    ("The ambiance is trendy and casual.", [("trendy", True)]),
    ("There is live music on weekends.", [("music", True)]),
    ("It offers valet parking.", [("valet", True)]),
    ("It is a great spot for intimate dinners.", [("intimate", True)]),
    ("The restaurant provides catering services.", [("caters", True)]),
])
def test_claims_against_the_record_are_caught(attributes, claim, expected):
    assert [(m.attribute.name, m.claimed) for m in attribute_mismatches(claim, attributes)] == expected


@pytest.mark.parametrize("claim", [
    "It offers outdoor seating, free Wi-Fi and takeout.",
    "The restaurant does not take reservations.",
    "There is no valet, garage or street parking.",
    "It has a casual, not trendy, atmosphere.",
    "It has a casual dress code.",  # "casual" is an ambience only beside a word for one
    "The restaurant has a casual dress code.",  # and never in a claim about dress
    "Reviewers found a lot of parking nearby.",  # "a lot of" is no parking lot
    "However, reservations are not accepted.",
    "Street, garage and valet parking are not available.",
])
def test_claims_the_record_agrees_with_pass(attributes, claim):
    assert attribute_mismatches(claim, attributes) == []


def test_a_contradicted_attribute_decides_the_claim():
    report = verify("Hollister Brewing accepts reservations.", [RECORD], scorer="lexical")
    (claim,) = report.claims
    assert claim.verdict.value == "CONTRADICTED" and claim.decided_by == "checks"
    assert [f.check for f in claim.checks if f.check.startswith("attribute")] == ["attribute_conflict"]
    assert claim.features["figure_conflicts"] == 1.0
