from groundwire.core.claims import RuleDecomposer, cited_ids, sentences, strip_citations

ANSWER = (
    "Hello! Sure, the Pro plan costs $49 per month [S1]. Refunds are available within 30 days; "
    "shipping takes 5 business days [Source 2]. The warranty covers parts, which aligns with industry "
    "standards. Is that clear? I hope this helps!\n"
    "- Returns are free, and the customer pays nothing [c_8f21ab].\n"
    "- It ships from Berlin, but the returns go to Munich [1, 3]."
)


def decompose(text: str):
    return RuleDecomposer().decompose(text)


def test_citation_markers_are_stripped_and_collected():
    assert strip_citations("Costs $49 [S1] per month [c_8f21] [Source 2].") == "Costs $49 per month."
    assert cited_ids("A [S1]. B [c_8f21ab, S3]. C [Source 2]. D [1, 3].") == ("S1", "c_8f21ab", "S3", "Source 2", "1", "3")
    # editorial brackets without a digit are not citations
    assert strip_citations("He said [sic] it works.") == "He said [sic] it works."


def test_non_claims_are_skipped_with_a_reason():
    reasons = {s.text: s.skip_reason for s in sentences(ANSWER)}
    assert reasons["Hello!"] == "greeting_or_too_short"
    assert reasons["Is that clear?"] == "question"
    assert reasons["I hope this helps!"] == "filler"
    texts = [c.text for c in decompose(ANSWER)]
    assert not any("hope" in t.lower() or t.endswith("?") or t.lower().startswith("hello") for t in texts)


def test_compound_sentences_split_into_atomic_claims():
    texts = [c.text for c in decompose(ANSWER)]
    assert "The Pro plan costs $49 per month." in texts  # leading "Sure," dropped
    assert "Refunds are available within 30 days." in texts and "Shipping takes 5 business days." in texts
    assert "The warranty covers parts." in texts and "This aligns with industry standards." in texts
    assert "It ships from Berlin." in texts and "The returns go to Munich." in texts


def test_each_claim_keeps_its_span_and_citations():
    for claim in decompose(ANSWER):
        start, end = claim.span
        source = ANSWER[start:end]
        assert claim.sentence in ANSWER
        assert source and source in claim.sentence
        # the claim text comes from its span (modulo citation markers, case and the "This" of a relative clause)
        core = strip_citations(source).rstrip(" .").lower()
        assert core in claim.text.lower()
    by_text = {c.text: c for c in decompose(ANSWER)}
    assert by_text["Shipping takes 5 business days."].cited_ids == ("Source 2",)
    assert by_text["The returns go to Munich."].cited_ids == ("1", "3")


def test_a_which_clause_names_its_antecedent_where_a_rule_can_find_it():
    texts = [c.text for c in decompose("Reporters watched the video, which was not posted online. "
                                       "The warranty covers parts, which aligns with industry standards.")]
    assert texts == ["Reporters watched the video.", "The video was not posted online.",
                     "The warranty covers parts.", "This aligns with industry standards."]


def test_unsafe_splits_are_not_made():
    # a coordinated noun phrase is one claim, not two
    assert [c.text for c in decompose("Berlin and Munich are both in Germany.")] == ["Berlin and Munich are both in Germany."]


def test_no_claims_in_pure_filler():
    assert decompose("Thanks! I hope this helps. Let me know if you have any questions?") == []


def test_a_did_you_know_question_asserts_what_follows():
    answer = ("Yes. Did you know the park closes at 5 pm on Sundays [S2]? "
              "Do you know who coaches the team? Have you heard of the Berlin city marathon?")
    claims = decompose(answer)
    assert [c.text for c in claims] == ["The park closes at 5 pm on Sundays."]
    assert claims[0].cited_ids == ("S2",)
    assert answer[claims[0].span[0]:claims[0].span[1]].startswith("the park closes")
    reasons = [s.skip_reason for s in sentences(answer)]
    assert reasons == ["greeting_or_too_short", None, "question", "question"]


def test_markdown_emphasis_and_bold_citations():
    claims = decompose("**Refunds** are issued within `14` days **[S1]**.\n## Shipping\n- **Express:** ships in 2 days [S2].")
    assert [c.text for c in claims] == ["Refunds are issued within 14 days.", "Express: ships in 2 days."]
    assert [c.cited_ids for c in claims] == [("S1",), ("S2",)]


def test_decomposition_is_thread_safe():
    from concurrent.futures import ThreadPoolExecutor

    # sentences() is cached; its uncached body is what runs pysbd, so that is what the threads share.
    from groundwire.core.claims import _iter_sentences

    def split(answer: str) -> tuple:
        return tuple(_iter_sentences(answer))

    answers = [f"The plan number {i} costs ${i} per month. Refunds take {i} days; shipping is free." for i in range(40)]
    expected = [split(a) for a in answers]
    assert all(len(e) == 2 for e in expected)
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            assert list(pool.map(split, answers)) == expected


def test_a_one_word_assertion_is_a_claim_but_a_remark_is_not():
    texts = [c.text for c in decompose("He was a mathematician. Its a comedy. I agree. Not sure. Great!")]
    assert texts == ["He was a mathematician.", "Its a comedy."]


def test_a_bare_answer_to_a_question_is_checked():
    decomposer = RuleDecomposer()
    claims = decomposer.decompose("Yes, in 1959 [S1].", question="When was the magazine founded?")
    assert [c.text for c in claims] == ["In 1959."]
    assert claims[0].cited_ids == ("S1",)
    assert [c.text for c in decomposer.decompose("ESPN", question="Which network aired it?")] == ["ESPN."]
    # without a question the fragment asserts nothing; "yes", reactions and first-person remarks are no claims
    assert decomposer.decompose("ESPN") == []
    for remark in ("yes", "No.", "Great!", "I am not sure.", "Thanks! I hope this helps."):
        assert decomposer.decompose(remark, question="Is it on Netflix?") == [], remark


def test_a_bare_answer_is_not_listed_as_skipped():
    from groundwire import verify
    from groundwire.foundation.types import Route

    report = verify("1959", ["Arthur's Magazine was founded in 1844."], question="When was it founded?",
                    scorer="lexical")
    assert [r.claim.text for r in report.claims] == ["1959."]
    assert report.meta.skipped == ()
    assert report.route is Route.REJECT  # the year is not in the context


def test_statements_about_the_context_are_refusals_not_claims():
    refusals = ["Unable to answer based on given passages.",
                "Therefore, I cannot answer the question based on the given passages.",
                "It does not provide information about Magellan's status as a provider.",
                "The provided data does not mention any positive aspects."]
    assert [s.skip_reason for s in sentences(" ".join(refusals))] == ["refusal"] * 4
    claims = ["The company was unable to provide refunds in 2020.", "The refund does not include shipping costs."]
    assert [c.text for c in decompose(" ".join(claims))] == claims


def test_a_markdown_mark_inside_a_word_separates_it_as_the_context_does() -> None:
    from groundwire.core.claims import strip_citations

    # Dropping the tick would make "G`E" the word "GE", which no context holds.
    assert strip_citations("The release code is G`E today [S1].") == "The release code is G E today."
    assert strip_citations("Run `pip install x` and pay **$5** [S1].") == "Run pip install x and pay $5."


LONG_PARAGRAPHS = [
    f"Dr. Smith of the U.S. Navy said the ship (hull no. {i}) sails at 9 a.m. on Jan. {i % 28 + 1}, "
    f"and it carries {i * 3} crew, e.g. engineers and cooks [S{i % 7 + 1}]. She called it \"ready. Truly ready.\" "
    f"The budget is $ {i}.5 million; the refit took {i % 12 + 2} months, which delayed the launch. Is it late? "
    "Mr. Jones, Ph.D., disagreed with St. Louis officials at approx. 3 p.m. in the afternoon."
    for i in range(160)
]


def _claims_by_paragraph(paragraphs: list[str], sep: str) -> list[tuple[str, tuple[int, int]]]:
    expected, offset = [], 0
    for paragraph in paragraphs:
        expected += [(c.text, (c.span[0] + offset, c.span[1] + offset)) for c in decompose(paragraph)]
        offset += len(paragraph) + len(sep)
    return expected


def test_a_long_multi_paragraph_answer_splits_as_each_paragraph_alone():
    answer = "\n\n".join(LONG_PARAGRAPHS)
    assert len(answer) > 40_000
    claims = [(c.text, c.span) for c in decompose(answer)]
    assert claims == _claims_by_paragraph(LONG_PARAGRAPHS, "\n\n")
    assert len(claims) > 4 * len(LONG_PARAGRAPHS)


def test_one_long_line_is_segmented_as_pysbd_segments_it_whole():
    """A line longer than the segmentation window is split a window at a time (pysbd is quadratic on one long
    line); the sentences must be the ones pysbd finds in the whole line."""
    import pysbd

    from groundwire.core.claims import _SEGMENT_WINDOW

    line = " ".join(LONG_PARAGRAPHS[:40])
    assert len(line) > 3 * _SEGMENT_WINDOW
    whole = pysbd.Segmenter(language="en", clean=False, char_span=True).segment(line)
    assert [s.text for s in sentences(line)] == [line[p.start:p.end].strip() for p in whole if line[p.start:p.end].strip()]


def test_citation_markers_after_a_long_whitespace_run_are_read_and_stripped():
    # Issue 20, item 2: the marker regex is linear on long whitespace runs (timings: bench, not here).
    run = "\n" * 50_000
    assert cited_ids(run + "x is y.") == ()
    assert cited_ids("The plan costs $10." + run + "[S2] It ships daily " + run + " [S1; S3].") == ("S2", "S1", "S3")
    assert strip_citations("The plan costs $10." + run + "[S2]") == "The plan costs $10."
    assert strip_citations("A" + run + "B [Unverified]") == "A" + run + "B"
