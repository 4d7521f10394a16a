"""Generated business records: reproducible, rendered as the verifier renders them, labels that hold."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

from groundwire.core.structured import render_structured
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL
from groundwire.train.records import make_record, record_pairs


def test_pairs_are_reproducible_and_cover_every_label() -> None:
    first, second = record_pairs(60, 4, random.Random(7)), record_pairs(60, 4, random.Random(7))
    assert first == second
    labels = Counter(p.label for p in first)
    assert set(labels) == {ENTAILMENT, NEUTRAL, CONTRADICTION}
    assert min(labels.values()) >= 0.15 * len(first)
    assert all(p.premise and p.hypothesis for p in first)


def test_premises_are_the_records_as_the_verifier_renders_them() -> None:
    rng = random.Random(3)
    record = make_record(rng)
    public = {**record, "review_info": [{k: v for k, v in r.items() if not k.startswith("_")}
                                        for r in record["review_info"]]}
    rendered = render_structured(json.dumps(public))
    assert rendered and "{" not in rendered and "Business stars:" in rendered
    for pair in record_pairs(40, 3, random.Random(3)):
        for line in pair.premise.split("\n"):
            assert re.match(r"^[A-Z][\w ]*: .+", line), line  # "Key path: value." lines only


def test_the_evidence_for_a_label_is_inside_the_premise() -> None:
    pairs = record_pairs(300, 4, random.Random(11))
    hours = [p for p in pairs if p.kind == "hours"]
    assert hours
    for p in hours:
        day, start, end = re.search(r"from (\d+):\d\d to (\d+):\d\d on (\w+day)s\b", p.hypothesis).group(3, 1, 2)
        assert re.search(rf"Hours {day.lower()}: {int(start)}:0-{int(end)}:", p.premise), (p.hypothesis, p.premise)
    for p in (p for p in pairs if p.kind == "hours_swap"):
        day = re.search(r"on (\w+day)s\b", p.hypothesis).group(1)
        assert f"Hours {day.lower()}:" in p.premise
    for p in (p for p in pairs if p.kind in ("rating", "rating_swap")):
        stars = re.search(r"rating of ([\d.]+) stars", p.hypothesis).group(1)
        assert ("Business stars: " + stars in p.premise) == (p.kind == "rating"), (p.hypothesis, p.premise)
    assert all("not given" in p.premise for p in pairs if p.kind == "null_attribute")
    # A day the record does not list is never in the window as an hours line.
    for p in (p for p in pairs if p.kind == "day_not_listed"):
        day = re.search(r"on (\w+day)s\b", p.hypothesis).group(1)
        assert f"Hours {day.lower()}:" not in p.premise
