import json

import pytest

from groundwire.core.checks.context import ContextIndex
from groundwire.core.checks.figures import figure_findings
from groundwire.core.checks.hours import context_schedule, hours_mismatches
from groundwire.core.structured import rendered_chunk
from groundwire.foundation.types import Chunk

RECORD = {"name": "Hollister Brewing", "hours": {
    "Monday": "11:30-19:30", "Tuesday": "11:30-19:30", "Wednesday": "11:30-19:30", "Thursday": "11:30-19:30",
    "Friday": "11:30-20:0", "Saturday": "11:30-20:0", "Sunday": "10:0-1:0"}}


@pytest.fixture
def schedule():
    return context_schedule([rendered_chunk(Chunk("R1", json.dumps(RECORD))).text])


def test_the_schedule_is_read_from_rendered_and_raw_records(schedule):
    assert schedule["friday"] == (11 * 60 + 30, 20 * 60)
    assert schedule["sunday"] == (10 * 60, 60)
    assert context_schedule([json.dumps(RECORD)]) == schedule
    assert context_schedule(["The shop opens Monday: 9:00-17:00 for returns."]) == {}  # one day is no schedule


@pytest.mark.parametrize("claim", [
    "It is open Monday to Thursday from 11:30 AM to 7:30 PM, and Friday and Saturday from 11:30 am to 8 pm.",
    "On Sundays it is open from 10 am to 1 am.",
    "Weekday hours: Mon-Thu 11:30-19:30.",
    "It opens at 11:30 am every day.",  # no range: the figure checks cover it
    "It is open from 5 to 9 on Mondays.",  # am or pm? not guessed
    "It is open 11:30 to 19:30 from Monday to Thursday, with hours until 20:00 on Fridays and Saturdays.",
    "It is open every day from 11:30 am to 7:30 or 8 pm.",  # approximate
])
def test_hours_that_match_the_listed_days_pass(schedule, claim):
    assert hours_mismatches(claim, schedule) == []


def test_times_claimed_for_the_wrong_days_are_caught(schedule):
    claim = "The business operates from 11:30 am to 7:30 pm on weekdays and from 11:30 am to 8:00 pm on weekends."
    found = {(m.day, m.listed) for m in hours_mismatches(claim, schedule)}
    assert found == {("friday", "11:30-20:00"), ("sunday", "10:00-01:00")}
    assert {m.day for m in hours_mismatches("It is open daily from 11:30 am to 7:30 pm.", schedule)} == {
        "friday", "saturday", "sunday"}


def test_hours_mismatches_are_figure_findings():
    context = ContextIndex.build([rendered_chunk(Chunk("R1", json.dumps(RECORD)))])
    findings = figure_findings("It is open from 11:30 am to 7:30 pm on weekdays.", context)
    assert [f.check for f in findings] == ["figure_conflict"]
    assert "Friday 11:30-20:00" in findings[0].detail
    closed = ContextIndex.build([Chunk("R2", json.dumps({"hours": {"Monday": "9:0-17:0", "Tuesday": "9:0-17:0"}}))])
    assert [f.check for f in figure_findings("It is open 9 am to 5 pm on weekdays.", closed)] == ["figure_not_in_context"]
    prose = ContextIndex.build([Chunk("P1", "The store is open from 9 am to 5 pm on weekdays.")])
    assert figure_findings("It is open 9 am to 5 pm on weekdays.", prose) == []
