"""Input rows for the batch tests: good rows, malformed lines, and a JSONL writer."""

from __future__ import annotations

import json
from pathlib import Path

GOOD_ROWS = [
    {"id": "r1", "question": "How long is the refund window?",
     "context": ["Refunds are accepted within 30 days of purchase.", "Shipping takes 5 business days."],
     "answer": "You can get a refund within 30 days of purchase."},
    {"id": "r2", "question": "How long is the refund window?",
     "context": ["Refunds are accepted within 30 days of purchase.", "Shipping takes 5 business days."],
     "answer": "Refunds are accepted within 90 days. Shipping is free worldwide."},
    {"id": "r3", "question": None,
     "context": ["The Eiffel Tower is 330 metres tall and stands in Paris. It was completed in 1889."],
     "answer": "The Eiffel Tower, completed in 1889, is 330 metres tall."},
    {"id": "r4", "question": "Who founded the company?",
     "context": [{"id": "doc-a", "text": "Acme was founded in 1999 by Jane Roe and John Doe."},
                 {"id": "doc-b", "text": "Acme sells anvils and rocket skates."}],
     "answer": "Acme was founded in 2005 by Jane Roe. It sells anvils."},
    {"id": 5, "question": "What does the plan cost?",
     "context": ["The basic plan costs $10 a month.", "The pro plan costs $25 a month and adds support."],
     "answer": "The pro plan costs $25 a month."},
    {"id": "r6", "question": None,
     "context": ["Water boils at 100 degrees Celsius at sea level.", "At altitude water boils at lower temperatures."],
     "answer": "Water boils at 100 degrees Celsius at sea level. On mountains it boils at a higher temperature."},
    {"id": "r7", "question": "Capital?", "context": ["Canberra is the capital of Australia."],
     "answer": "NOT_IN_CONTEXT"},
    {"id": "r8", "question": "Hi", "context": ["Our office opens at 9am on weekdays."],
     "answer": "Hello! The office opens at 9am on weekdays, and \u2028 closes at 5pm."},
]

BAD_LINES = [
    ('{"id": "bad-answer", "context": ["x y z"], "answer": 3}', "bad-answer"),
    ('{"id": "no-context", "answer": "Something."}', "no-context"),
    ('{"id": "empty-answer", "context": ["a chunk"], "answer": "   "}', "empty-answer"),
    ('{"context": ["a chunk"], "answer": "No id here."}', None),  # named by its position
    ('{"id": "torn", "context": ["a ch', "torn"),  # broken JSON, id still readable
    ("[1, 2, 3]", None),
]


def write_jsonl(path: Path, rows: list[dict], bad_lines: list[str] = ()) -> Path:
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    # Malformed lines go in the middle and a blank line too, which is not a row at all.
    middle = len(lines) // 2
    lines[middle:middle] = [*bad_lines, ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
