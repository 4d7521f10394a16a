"""Row parsing and the streaming line reader: every bad row becomes a RowError with an id, never an exception."""

from __future__ import annotations

import io
import json

import pytest

from groundwire.batch.sources import count_rows, input_format, iter_lines, iter_rows
from groundwire.data.rows import EvalRow, RowError, parse_line, parse_record
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import Chunk
from groundwire.scoring import get_scorer


def test_good_line_becomes_an_item_with_s_ids_and_object_chunks():
    item = parse_line(json.dumps({"id": 7, "question": None, "answer": "A.",
                                  "context": ["first", {"id": "doc-9", "text": "second", "page": 2}]}))
    assert isinstance(item, EvalRow)
    assert item.id == "7"
    assert item.chunks == (Chunk(id="S1", text="first", doc_id="7"), Chunk(id="doc-9", text="second", page=2))


@pytest.mark.parametrize(
    ("line", "expected_id", "message"),
    [
        ('{"id": "a", "context": ["x"], "answer": 3}', "a", "'answer' must be a string"),
        ('{"id": "b", "context": [], "answer": "y"}', "b", "'context' must be a non-empty list"),
        ('{"id": "c", "context": ["ok", "  "], "answer": "y"}', "c", "context[1]"),
        ('{"id": "d", "context": ["x"], "answer": "y", "question": 5}', "d", "'question'"),
        ('{"id": "e", "context": [{"text": "x", "page": "two"}], "answer": "y"}', "e", "context[0].page must be an integer"),
        ('{"id": "p0", "context": [{"text": "x", "page": 0}], "answer": "y"}', "p0", "context[0].page must be 1 or more"),
        ('{"id": "pt", "context": [{"text": "x", "page": true}], "answer": "y"}', "pt", "context[0].page must be 1 or more"),
        ('{"id": "", "context": ["x"], "answer": "y"}', "f.jsonl:3", "missing or empty 'id'"),
        ('{"id": "torn", "context": ["x', "torn", "invalid JSON"),
        ("[1, 2]", "f.jsonl:3", "not an object"),
    ],
)
def test_bad_lines_become_row_errors_named_by_id_or_position(line, expected_id, message):
    error = parse_line(line, where="f.jsonl:3", require_id=True)
    assert isinstance(error, RowError)
    assert error.id == expected_id
    assert message in error.error
    assert error.raw == line  # nothing is lost


def test_row_without_id_or_position_gets_a_stable_content_hash():
    first = parse_record({"answer": "x", "context": ["y"]}, require_id=True)
    second = parse_record({"answer": "x", "context": ["y"]}, require_id=True)
    assert isinstance(first, RowError) and first.id.startswith("sha1:")
    assert first.id == second.id
    assert parse_record({"answer": "z", "context": ["y"]}, require_id=True).id != first.id


def test_lines_split_on_newline_only_and_blank_lines_are_not_rows():
    data = '{"a": "one\u2028still one"}\r\n\n   \n{"b": 2}\n{"c": 3}'.encode()  # no final newline
    rows = list(iter_lines(io.BytesIO(data), "x.jsonl"))
    assert [r["where"] for r in rows] == ["x.jsonl:1", "x.jsonl:4", "x.jsonl:5"]
    assert rows[0]["line"] == '{"a": "one\u2028still one"}'  # \r dropped, U+2028 kept inside the line
    assert all(r["utf8"] for r in rows)


def test_invalid_utf8_marks_one_row_not_the_file():
    data = b'{"id": "ok", "answer": "a", "context": ["b"]}\n{"id": "bad\xff", "answer": "a", "context": ["b"]}\n'
    rows = list(iter_lines(io.BytesIO(data), "x.jsonl"))
    assert [r["utf8"] for r in rows] == [True, False]
    parsed = [parse_line(r["line"], where=r["where"], utf8=r["utf8"]) for r in rows]
    assert isinstance(parsed[0], EvalRow)
    assert isinstance(parsed[1], RowError) and "UTF-8" in parsed[1].error


def test_lines_longer_than_the_read_buffer_stay_whole():
    long_line = json.dumps({"id": "long", "answer": "a", "context": ["word " * 400_000]})
    rows = list(iter_lines(io.BytesIO((long_line + "\n" + long_line).encode()), "x.jsonl"))
    assert [r["line"] for r in rows] == [long_line, long_line]


def test_count_rows_matches_what_the_reader_yields(mixed_jsonl):
    assert count_rows(mixed_jsonl) == sum(len(b) for b in iter_rows(mixed_jsonl, batch_size=3))


def test_input_errors_are_clear(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        input_format(tmp_path / "missing.jsonl")
    (tmp_path / "logs.csv").write_text("a,b\n")
    with pytest.raises(InputError, match=".jsonl or .parquet"):
        input_format(tmp_path / "logs.csv")
    with pytest.raises(InputError, match="no .jsonl or .parquet"):
        input_format(tmp_path)


def test_result_row_counts_every_claim_state_once():
    from groundwire import Verifier
    from groundwire.data.results import RESULT_FIELDS, result_row
    from groundwire.foundation.types import Verdict

    report = Verifier(get_scorer("lexical")).verify(
        "The plan costs 19 dollars. It includes support. Delivery takes 40 days. Staff sometimes help.",
        ["The plan costs 19 dollars and includes email support. Delivery takes 3 days."])
    row = result_row("r1", report)
    counts = {v: sum(c.verdict is v for c in report.claims) for v in Verdict}
    assert (row["n_supported"], row["n_contradicted"], row["n_not_found"], row["n_unresolved"]) == (
        counts[Verdict.SUPPORTED], counts[Verdict.CONTRADICTED], counts[Verdict.NOT_FOUND], counts[Verdict.UNRESOLVED])
    assert sum(row[f"n_{v.value.lower()}"] for v in Verdict) == row["n_claims"] == len(report.claims)
    assert [name for name, _ in RESULT_FIELDS] == list(row)
