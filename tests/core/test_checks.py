import pytest

from groundwire.core.checks.citations import validate_output
from groundwire.core.checks.context import ContextIndex
from groundwire.core.checks.figures import figure_findings
from groundwire.core.checks.negation import negation_finding
from groundwire.core.claims import sentences
from groundwire.core.figures import claim_figures
from groundwire.foundation.types import Chunk, Verdict

CONTEXT = [
    Chunk("S1", "The Pro plan costs 3,600 dollars a year and launched in May 2023. Version v2.3.1 shipped on "
                "5 May 2023. The office is open 11:0-17:0. Five million users joined; 12% churned."),
    Chunk("S2", "The Basic plan costs $19 per month. The appliance weighs 4.5 kg."),
]


@pytest.fixture(scope="module")
def index():
    return ContextIndex.build(CONTEXT)


def checks_of(claim, index):
    return [f.check for f in figure_findings(claim, index)]


@pytest.mark.parametrize("claim", [
    "The Pro plan costs $3600 per year.",           # 3,600 == 3600, "dollars" == "$"
    "Version 2.3.1 shipped on May 5, 2023.",        # date in another format, version without "v"
    "The office opens at 11 AM and closes at 5 PM.",  # 5 PM == 17:00
    "About 5,000,000 users joined.",                # five million == 5,000,000
    "12 percent churned.",                          # 12% == 12 percent
    "The appliance weighs 4.5 kg.",                 # quantity with a unit
    "It launched in May 2023.",                      # month and year
])
def test_figures_present_after_normalisation(claim, index):
    assert checks_of(claim, index) == []


@pytest.mark.parametrize("claim, kind", [
    ("It has 7 million users.", "number"),
    ("The service started in 1999.", "number"),
    ("Version 2.4.0 is planned.", "version"),
    ("The company was founded on June 9, 2023.", "date"),
    ("The appliance costs €70.", "money"),
])
def test_absent_figure_is_not_found(claim, kind, index):
    findings = figure_findings(claim, index)
    assert [f.verdict for f in findings] == [Verdict.NOT_FOUND]
    assert kind in findings[0].detail


def test_different_value_for_the_same_quantity_is_a_contradiction_candidate(index):
    findings = figure_findings("The Basic plan costs $29 per month.", index)
    assert [f.check for f in findings] == ["figure_conflict"]
    assert findings[0].verdict is Verdict.CONTRADICTED and "$19" in findings[0].detail


def test_names_with_digits_are_not_figures():
    assert claim_figures("COVID-19 spread in March 2020 via MP3 files.")[0].kind == "date"
    assert len(claim_figures("COVID-19 spread in March 2020 via MP3 files.")) == 1


def test_passage_references_and_rating_scales_are_not_figures():
    assert claim_figures("According to passage 1, plans cost $20 (Passage 2:4); sources 1 and 3 agree.")[0].text == "$20"
    assert len(claim_figures("According to passage 1, plans cost $20 (Passage 2:4); sources 1 and 3 agree.")) == 1
    assert [f.key for f in claim_figures("It has 3.5 out of 5 stars.")] == ["3.5"]
    assert [f.key for f in claim_figures("4 out of 10 dentists agree.")] == ["4", "10"]  # a real ratio stays
    assert claim_figures("It is open seven days a week, 24/7.") == ()


def test_amounts_with_b_and_day_ranges_match_their_context():
    context = ContextIndex.build([Chunk("S1", "PG&E must pay a record $1.6 billion. Park Week runs April 18 to "
                                              "April 26, with free entry.")])
    assert figure_findings("PG&E must pay a record $1.6b.", context) == []
    assert figure_findings("Park Week runs Apr. 18-26.", context) == []
    assert [f.check for f in figure_findings("Park Week runs Apr. 18-27.", context)] == ["figure_conflict"]
    assert claim_figures("Fill in Form 5b.") == ()  # "b" scales only an amount of money


def test_a_year_matches_a_dated_context_and_hours_share_a_meridiem():
    context = ContextIndex.build([Chunk("S1", "He attacked the photographer in July 2013 at the airport. "
                                              "Open Monday 16:00-21:00, Friday 16:00-22:00.")])
    assert figure_findings("He assaulted the photographer in 2013.", context) == []
    assert [f.check for f in figure_findings("He assaulted the photographer in 2012.", context)] == [
        "figure_not_in_context"]
    assert figure_findings("It is open from 4 PM to 9 or 10 PM.", context) == []
    assert [f.key for f in claim_figures("Open 9-11 pm.")] == ["21:00", "23:00"]
    assert [f.check for f in figure_findings("It is open until 8 or 10 PM.", context)] == ["figure_not_in_context"]
    assert [f.key for f in claim_figures("In the 2018\u201319 and 1999-00 seasons.")] == ["2018", "2019", "1999", "2000"]


def test_a_negation_in_another_clause_of_the_evidence_is_not_a_flip():
    evidence = ("It was not immediately known who else was on the aircraft, which the safety board said was "
                "a Cessna 414.")
    assert negation_finding("The aircraft was a Cessna 414.", evidence) is None
    assert negation_finding("The museum is open on Mondays.",
                            "The museum, which is not far from the station, is open on Mondays.") is None
    assert negation_finding("The museum is open on Mondays.", "The museum is not open on Mondays.") is not None


@pytest.mark.parametrize("claim, evidence", [
    # "not X but Y" contrasts; the claim is about Y
    ("Clinton launched her campaign in an unconventional way.",
     "Clinton surprised the world again, not with the launch of her campaign but for the unconventional way she did it."),
    # idioms with a negation word negate nothing
    ("They praised Luz, the executive chef of the restaurant.", "Can't wait for Luz, executive chef of the restaurant."),
    ("Technicians are paid by commission.", "It depends on how technicians are paid (commission or not)."),
    # "and the ..." starts a new clause
    ("The boba is chewy and sweet.", "They don't use powders and the boba is both chewy and sweet."),
    # both negated, in clauses of different length
    ("An official of the agency stated that they are not aware of any such video.",
     "An official, the BEA, said the agency is not aware of any such video."),
    # "prevent" negates what follows it
    ("Move the hawk to prevent birds from becoming used to it.", "Move the hawk so the birds do not become used to it."),
    # a negated word said with its complement
    ("The library is closed on Sundays.", "The library is not open on Sundays."),
    ("Dogs are not allowed in the library.", "Dogs are banned from the library."),
    ("Entry to the museum is free.", "The museum does not charge an entrance fee."),
])
def test_negation_look_alikes_are_not_flips(claim, evidence):
    assert negation_finding(claim, evidence) is None


def test_real_negation_flips_still_fire():
    assert negation_finding("One passenger was transported to the hospital.",
                            "Fifteen passengers were examined, but no one was transported to the hospital.") is not None
    assert negation_finding("The business offers valet parking.", "Attributes business parking valet: no.") is not None
    assert negation_finding("Birds get used to the hawk.", "Move the hawk to prevent birds getting used to it.") is not None
    # a complement elsewhere in the other text does not excuse a flip of the word itself
    assert negation_finding("The library is open on Sundays.", "The library is not open on Sundays.") is not None
    assert negation_finding("Dogs are not allowed in the library.", "Dogs are allowed in the library.") is not None


def test_negation_mismatch_is_a_signal_without_verdict():
    finding = negation_finding("Refunds are not available for storage.", "Refunds are available for storage.")
    assert finding is not None and finding.check == "negation_mismatch" and finding.verdict is None
    assert negation_finding("Refunds are not available.", "Refunds are not available.") is None


def test_validators():
    chunks = [Chunk("S1", "a"), Chunk("c_8f21ab", "b")]
    assert [f.check for f in validate_output("   ", chunks, sentences("   "))] == ["empty_answer"]
    assert [f.check for f in validate_output("NOT_IN_CONTEXT", chunks, sentences("NOT_IN_CONTEXT"))] == []
    assert [f.check for f in validate_output("Maybe. NOT_IN_CONTEXT", chunks, sentences("Maybe. NOT_IN_CONTEXT"))] == ["refusal_token_not_alone"]
    found = validate_output("It costs $5 [S1]. It ships fast [S7]. It is blue [c_8f21ab].", chunks, sentences("It costs $5 [S1]. It ships fast [S7]. It is blue [c_8f21ab]."))
    assert [(f.check, f.detail) for f in found] == [("fabricated_citation", "cites [S7], which is not among the retrieved chunks")]
    uncited = validate_output("It costs $5 [S1]. It ships within two days.", chunks, sentences("It costs $5 [S1]. It ships within two days."), require_citations=True)
    assert [f.check for f in uncited] == ["uncited_sentence"]
    assert "ships within two days" in uncited[0].detail


def test_a_long_run_of_integers_gives_each_figure_once_in_order():
    # Issue 20, item 2: overlap resolution is a bisect, not a scan of every figure taken (timings: bench).
    from groundwire.core.figures import extract_figures

    numbers = [str(i) for i in range(18_000)]
    text = " ".join(numbers)
    starts, at = [], 0
    for number in numbers:
        starts.append(at)
        at += len(number) + 1
    figures = extract_figures(text)
    # A number's match may begin at the space before it: where it is read is the text found from its start.
    assert [(f.key, text.find(f.text, f.start)) for f in figures] == list(zip(numbers, starts, strict=True))


def test_overlapping_figures_still_resolve_to_the_most_specific():
    from groundwire.core.figures import extract_figures

    figures = extract_figures("On 2024-03-05 at 9:30 am it cost $1.5 million, up 12% from March 4, 2023.")
    assert [(f.kind, f.key) for f in figures] == [
        ("date", "2024-03-05"), ("time", "09:30"), ("money", "1500000"), ("percent", "12"), ("date", "2023-03-04")]


@pytest.mark.parametrize("context, claim", [
    ("If the file is huge, it stays at 99,9% for a long time.", "It stays at 99.9% for a long time."),
    ("Inflation rose by 2,5 percent in May.", "Inflation rose by 2.5% in May."),
])
def test_a_decimal_comma_before_a_percent_is_a_decimal(context, claim):
    # "99,9%" was read as 99 and 9%: a claim of 99.9% was not in the context, and one of 9% was.
    index = ContextIndex.build([Chunk("S1", context)])
    assert figure_findings(claim, index) == []
    assert [f.verdict for f in figure_findings(claim.replace("9%", "8%").replace("2.5%", "5%"), index)] != []


def test_a_comma_between_small_numbers_without_a_percent_stays_a_list():
    assert [f.key for f in claim_figures("Rooms 12,14 and 16 are free.")] == ["12", "14", "16"]
    assert [f.key for f in claim_figures("Rates were 1,5%, 2,25% and 3%.")] == ["1.5", "2.25", "3"]
    assert [f.key for f in claim_figures("About 1,234 users joined.")] == ["1234"]
