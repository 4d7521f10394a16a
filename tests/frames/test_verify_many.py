"""verify_many over RAGAS- and DeepEval-shaped tables, averify, the supported-claim share, and --columns."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

import groundwire
from groundwire import Chunk, Verdict, Verifier
from groundwire.data.rows import canonical_record, parse_columns, read_eval_jsonl
from groundwire.foundation.errors import InputError
from groundwire.scoring import get_scorer

pd = pytest.importorskip("pandas")

REFUND = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
RAGAS_ROWS = [
    {"user_input": "How long is the refund window?", "retrieved_contexts": [REFUND],
     "response": "You can get a refund within 30 days of purchase."},
    {"user_input": "How long is the refund window?", "retrieved_contexts": [REFUND],
     "response": "Refunds are accepted within 90 days. Shipping takes 5 business days."},
    {"user_input": "Shipping?", "retrieved_contexts": [REFUND], "response": "   "},  # cannot be checked
]


@pytest.fixture(scope="module")
def lexical() -> Verifier:
    return Verifier(get_scorer("lexical"))


def test_verify_many_round_trips_a_ragas_frame(lexical: Verifier) -> None:
    frame = pd.DataFrame(RAGAS_ROWS, index=["a", "b", "c"])
    results = groundwire.verify_many(frame, verifier=lexical)
    assert list(results.index) == ["a", "b", "c"]
    joined = frame.join(results)  # the RAGAS columns and groundwire's side by side
    assert {"response", "retrieved_contexts", "score", "supported_share"} <= set(joined.columns)
    for label, row in zip("ab", RAGAS_ROWS, strict=False):
        report = lexical.verify(row["response"], row["retrieved_contexts"], question=row["user_input"])
        assert results.loc[label, "score"] == pytest.approx(report.score)
        assert results.loc[label, "route"] == report.route.value
        assert results.loc[label, "n_claims"] == len(report.claims)
        assert results.loc[label, "supported_share"] == pytest.approx(report.supported_share)
    assert results.loc["a", "route"] == "accept" and results.loc["b", "route"] != "accept"
    assert results.loc["b", "n_claims"] == 2 and results.loc["b", "n_supported"] == 1
    assert results.loc["b", "supported_share"] == pytest.approx(0.5)  # RAGAS faithfulness would say 0.5 too
    assert "empty" in results.loc["c", "error"] and pd.isna(results.loc["c", "score"])


def test_claims_frame_and_explicit_columns(lexical: Verifier) -> None:
    frame = pd.DataFrame({"q": ["How long?"], "ctx": [REFUND], "out": ["Refunds take 90 days. Shipping takes 5 business days."]})
    results, claims = groundwire.verify_many(frame, answer="out", context="ctx", question="q", claims=True,
                                             verifier=lexical)
    assert len(claims) == results.loc[0, "n_claims"] == 2
    assert claims["row"].tolist() == [0, 0] and claims["claim"].tolist() == [0, 1]
    assert claims.loc[0, "verdict"] != Verdict.SUPPORTED.value and claims.loc[1, "verdict"] == Verdict.SUPPORTED.value
    with pytest.raises(InputError, match="no column 'answer_text'"):
        groundwire.verify_many(frame, answer="answer_text", verifier=lexical)


def test_unrecognised_columns_raise_naming_those_found_and_those_expected(lexical: Verifier) -> None:
    frame = pd.DataFrame({"q": ["How long?"], "passages": [[REFUND]], "generated": ["Refunds take 30 days."]})
    with pytest.raises(InputError) as raised:
        groundwire.verify_many(frame, verifier=lexical)
    message = str(raised.value)
    assert "no answer and no context column" in message
    assert "q, passages, generated" in message  # the columns found
    assert "answer, response, actual_output" in message  # the names recognised
    assert "context, chunks, retrieved_contexts" in message
    with pytest.raises(InputError, match="no context column") as raised:  # the answer named, the context not
        groundwire.verify_many(frame, answer="generated", verifier=lexical)
    assert "no answer" not in str(raised.value)
    named = groundwire.verify_many(frame, answer="generated", context="passages", verifier=lexical)
    assert named["error"].isna().all() and named["route"].tolist() == ["accept"]


def test_verify_many_takes_a_datasets_dataset_with_deepeval_names(lexical: Verifier) -> None:
    datasets = pytest.importorskip("datasets")
    data = datasets.Dataset.from_list([
        {"input": r["user_input"], "retrieval_context": r["retrieved_contexts"], "actual_output": r["response"]}
        for r in RAGAS_ROWS[:2]
    ])
    results = groundwire.verify_many(data, verifier=lexical)
    assert results["route"].tolist()[0] == "accept" and results["route"].tolist()[1] != "accept"
    assert results["error"].isna().all()


def test_supported_share_is_in_the_report(lexical: Verifier) -> None:
    report = lexical.verify("Refunds are accepted within 90 days. Shipping takes 5 business days.", [REFUND])
    verdicts = [c.verdict for c in report.claims]
    assert report.supported_share == verdicts.count(Verdict.SUPPORTED) / len(verdicts) == 0.5
    assert report.to_dict()["supported_share"] == 0.5
    assert report.score < report.supported_share  # the min over claims is stricter than the share
    assert lexical.verify("NOT_IN_CONTEXT", [REFUND]).supported_share == 1.0


def test_averify_runs_in_worker_threads_and_matches_verify() -> None:
    threads: set[int] = set()

    class Recording(Verifier):
        def run(self, *args, **kwargs):  # every check runs its plan here
            threads.add(threading.get_ident())
            return super().run(*args, **kwargs)

    verifier = Recording(get_scorer("lexical"))
    answers = [r["response"] for r in RAGAS_ROWS[:2]] * 4

    async def main() -> list:
        return await asyncio.gather(*(groundwire.averify(a, [Chunk("S1", REFUND)], verifier=verifier) for a in answers))

    reports = asyncio.run(main())
    assert threads and threading.get_ident() not in threads  # never on the event loop's thread
    threads.clear()
    assert [r.score for r in reports] == [verifier.verify(a, [Chunk("S1", REFUND)]).score for a in answers]
    with pytest.raises(InputError):
        asyncio.run(groundwire.averify("", [REFUND], verifier=verifier))


def test_column_aliases_and_mapping() -> None:
    assert parse_columns("answer=response, context=docs,question=q") == {"answer": "response", "context": "docs",
                                                                         "question": "q"}
    for bad in ("answer", "answer=", "colour=red"):
        with pytest.raises(InputError, match="--columns"):
            parse_columns(bad)
    deepeval_row = {"input": "q?", "actual_output": "a.", "retrieval_context": ["c"]}
    got = canonical_record(deepeval_row)
    assert (got["question"], got["answer"], got["context"]) == ("q?", "a.", ["c"])
    own = canonical_record({"answer": "mine", "response": "theirs", "context": ["c"]})
    assert own["answer"] == "mine"  # groundwire's own name wins over an alias
    with pytest.raises(InputError, match="'out'"):
        canonical_record({"answer": "x"}, {"answer": "out"})


def test_check_eval_and_batch_read_ragas_and_mapped_columns(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    ragas = tmp_path / "ragas.jsonl"
    ragas.write_text("".join(json.dumps({**r, "hallucinated": i == 1}) + "\n" for i, r in enumerate(RAGAS_ROWS[:2])))
    custom = tmp_path / "custom.jsonl"
    custom.write_text("".join(json.dumps({"id": f"x{i}", "out": r["response"], "docs": r["retrieved_contexts"],
                                          "hallucinated": i == 1}) + "\n" for i, r in enumerate(RAGAS_ROWS[:2])))
    rows = list(read_eval_jsonl(ragas))
    assert rows[0].answer == RAGAS_ROWS[0]["response"] and rows[0].question == RAGAS_ROWS[0]["user_input"]
    runner = CliRunner()
    checked = runner.invoke(app, ["check", "--input", str(ragas), "--scorer", "lexical", "--fail-on", "never"])
    assert checked.exit_code == 0, checked.output  # every row checked, whatever its decision
    decisions = [json.loads(line)["route"] for line in checked.stdout.splitlines() if line.startswith("{")]
    assert decisions[0] == "accept" and decisions[1] != "accept"
    unmapped = runner.invoke(app, ["check", "--input", str(custom), "--scorer", "lexical"])
    assert unmapped.exit_code != 0
    mapped = runner.invoke(app, ["eval", str(custom), "--scorer", "lexical", "--columns", "answer=out,context=docs"])
    assert mapped.exit_code == 0, mapped.output
    assert "n=2" in mapped.stdout
    out = tmp_path / "results"
    batch = runner.invoke(app, ["batch", "--input", str(custom), "--output", str(out), "--scorer", "lexical",
                                "--columns", "answer=out,context=docs", "--no-progress"])
    assert batch.exit_code == 0, batch.output
    results = pd.read_parquet(out)
    assert sorted(results["id"]) == ["x0", "x1"] and results["supported_share"].notna().all()
