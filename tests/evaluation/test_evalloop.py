"""The eval loop: metrics per release/segment/day, the failure partition, JSON + HTML output, the CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from groundwire import Verifier
from groundwire.cli.prod import register
from groundwire.data.provenance import Document, render_context
from groundwire.data.rows import read_eval_jsonl
from groundwire.data.store import RequestRecord, Store
from groundwire.evaluation.evalloop import render_html, run_eval_loop
from groundwire.evaluation.evalloop.items import GENERATOR_DRIFT, RETRIEVAL_MISS, UNDETERMINED
from groundwire.evaluation.evalloop.summary import is_concrete
from groundwire.foundation.types import REFUSAL_TOKEN
from groundwire.scoring import get_scorer

DAY0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(get_scorer("lexical"))


def _log(
    store: Store, verifier: Verifier, *, answer: str, retrieved: list, day: int, release: str, segment: str, gold=None
) -> str:
    report = verifier.verify(answer, [p.as_chunk() for p in retrieved], question="q")
    record = RequestRecord.from_report(
        report,
        scope="s",
        context=render_context(retrieved),
        retrieved=[(p.cite_id, 0.9) for p in retrieved],
        release=release,
        segment=segment,
        gold_ids=gold,
    )
    return store.log_request(replace(record, created_at=DAY0 + timedelta(days=day)))


@pytest.fixture()
def logged(tmp_path: Path, verifier: Verifier) -> tuple[Store, dict[str, str]]:
    store = Store(f"sqlite:///{tmp_path / 'log.db'}")
    docs = store.ingest(
        [
            Document("manual", "Cluster manual", "Run start.sh to start the cluster.", page=1),
            Document("pricing", "Pricing", "The Pro plan costs $10 per month."),
            Document("warranty", "Warranty", "The warranty on every device lasts two years."),
        ],
        scope="s",
    ).passages
    manual, pricing, warranty = docs
    store.ingest([Document("other", "Other scope", "Secret: the launch code is 1234.")], scope="t")
    ids = {
        "ok": _log(
            store,
            verifier,
            answer="Run start.sh to start the cluster.",
            retrieved=[manual],
            day=0,
            release="v1",
            segment="docs",
        ),
        "miss": _log(
            store,
            verifier,
            answer="The warranty on every device lasts two years.",
            retrieved=[manual],
            day=0,
            release="v1",
            segment="support",
        ),
        "drift": _log(
            store,
            verifier,
            answer="The Pro plan includes free hosting on Mars.",
            retrieved=[pricing],
            day=1,
            release="v1",
            segment="docs",
        ),
        "refused": _log(
            store, verifier, answer=REFUSAL_TOKEN, retrieved=[pricing], day=1, release="v2", segment="docs"
        ),
        "gold_miss": _log(
            store,
            verifier,
            answer="Devices are covered for ten years.",
            retrieved=[manual],
            day=2,
            release="v2",
            segment="support",
            gold=[warranty.cite_id],
        ),
        "gold_hit": _log(
            store,
            verifier,
            answer="Run start.sh to start the cluster.",
            retrieved=[manual],
            day=2,
            release="v2",
            segment="docs",
            gold=[manual.cite_id],
        ),
    }
    yield store, ids
    store.close()


def test_rolling_sample_metrics_and_failure_partition(logged: tuple[Store, dict[str, str]], verifier: Verifier) -> None:
    store, ids = logged
    result = run_eval_loop(verifier=verifier, store=store, scope="s", sample_size=100)
    rolling = result.rolling
    assert rolling is not None
    failures = {e["id"]: e["failure"] for e in rolling["failure_examples"]}
    assert failures == {ids["miss"]: RETRIEVAL_MISS, ids["drift"]: GENERATOR_DRIFT, ids["gold_miss"]: RETRIEVAL_MISS}
    overall = rolling["overall"]
    assert overall["n"] == 6
    assert overall["refusal_rate"] == pytest.approx(1 / 6)
    assert overall["retrieval_hit_rate"] == pytest.approx(0.5) and overall["retrieval_n"] == 2
    assert overall["failures"] == {RETRIEVAL_MISS: 2, GENERATOR_DRIFT: 1, UNDETERMINED: 0}
    assert overall["grounded_rate"] == pytest.approx(2 / 5)  # ok and gold_hit, of five answered
    assert set(rolling["by_release"]) == {"v1", "v2"}
    assert rolling["by_release"]["v2"]["refusal_rate"] == pytest.approx(1 / 3)
    assert rolling["by_release"]["v1"]["refusal_rate"] == 0.0
    assert set(rolling["by_segment"]) == {"docs", "support"}
    assert rolling["by_segment"]["support"]["grounded_rate"] == 0.0
    assert list(rolling["by_day"]) == ["2026-03-01", "2026-03-02", "2026-03-03"]
    assert rolling["by_day"]["2026-03-01"]["faithfulness"] == pytest.approx(0.5)
    assert overall["feedback_n"] == 0 and overall["thumbs_down_rate"] is None
    # The run was recorded, so the next report can plot it over time.
    assert len(result.history) == 1 and result.history[0]["metrics"]["rolling"]["n"] == 6


def test_other_scopes_are_neither_sampled_nor_searched(
    logged: tuple[Store, dict[str, str]], verifier: Verifier
) -> None:
    store, _ = logged
    record = RequestRecord.from_report(
        verifier.verify("The launch code is 1234.", ["Nothing relevant here."]),
        scope="s",
        context="Nothing relevant here.",
    )
    leaked = store.log_request(record)
    result = run_eval_loop(verifier=verifier, store=store, scope="s", save=False)
    # Scope t holds the evidence, but it is not this scope's corpus: a drift, not a retrieval miss.
    assert {e["id"]: e["failure"] for e in result.rolling["failure_examples"]}[leaked] == GENERATOR_DRIFT
    assert run_eval_loop(verifier=verifier, store=store, scope="t", save=False).rolling["overall"]["n"] == 0


def _write_frozen(path: Path) -> None:
    rows = [
        {
            "id": "a1",
            "task": "qa",
            "question": "How do I start it?",
            "context": ["Run start.sh to start the cluster."],
            "answer": "Run start.sh to start the cluster.",
            "hallucinated": False,
            "spans": [],
            "source": "ops",
        },
        {
            "id": "a2",
            "task": "qa",
            "question": "Warranty?",
            "context": ["The warranty on every device lasts two years."],
            "answer": "The warranty on every device lasts two years.",
            "hallucinated": False,
            "spans": [],
            "source": "support",
        },
        {
            "id": "a3",
            "task": "qa",
            "question": "Warranty length?",
            "context": ["Run start.sh to start the cluster."],
            "answer": "The warranty on every device lasts two years.",
            "hallucinated": True,
            "spans": [],
            "source": "support",
        },
        {
            "id": "a4",
            "task": "qa",
            "question": "Hosting?",
            "context": ["The Pro plan costs $10 per month."],
            "answer": "The Pro plan includes free hosting on Mars.",
            "hallucinated": True,
            "spans": [],
            "source": "ops",
        },
        {
            "id": "a5",
            "task": "qa",
            "question": "Anything?",
            "context": ["The Pro plan costs $10 per month."],
            "answer": "It may vary depending on your setup.",
            "hallucinated": False,
            "spans": [],
            "source": "ops",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_frozen_set(tmp_path: Path, verifier: Verifier) -> None:
    _write_frozen(tmp_path / "frozen.jsonl")
    rows = list(read_eval_jsonl(tmp_path / "frozen.jsonl"))
    result = run_eval_loop(verifier=verifier, frozen_rows=rows, release="r7")
    frozen = result.frozen
    assert frozen is not None and result.rolling is None
    # a3's evidence sits in a2's context (a retrieval miss); a4's is nowhere (generator drift).
    assert {e["id"]: e["failure"] for e in frozen["failure_examples"]} == {"a3": RETRIEVAL_MISS, "a4": GENERATOR_DRIFT}
    assert set(frozen["by_segment"]) == {"ops", "support"} and set(frozen["by_release"]) == {"r7"}
    assert frozen["detection"]["n"] == 5 and frozen["detection"]["positives"] == 2
    assert frozen["overall"]["retrieval_hit_rate"] is None  # no gold passages in this format
    # The hedged non-answer carries no concrete claim.
    assert frozen["overall"]["non_answer_rate"] == pytest.approx(1 / 5)
    without = run_eval_loop(verifier=verifier, frozen_rows=rows, corpus_check=False)
    assert without.frozen["overall"]["failures"] == {RETRIEVAL_MISS: 0, GENERATOR_DRIFT: 0, UNDETERMINED: 2}


def test_concrete_claims() -> None:
    assert is_concrete("The Pro plan costs $10 per month.")
    assert is_concrete("Run start.sh to start the cluster.")
    assert not is_concrete("It may vary depending on your setup.")
    assert not is_concrete("Results usually differ.")
    assert is_concrete("Arthur's Magazine.")  # a short answer still commits to something
    assert not is_concrete("It is what it is.")


def test_html_report_has_plots_and_escapes_text(logged: tuple[Store, dict[str, str]], verifier: Verifier) -> None:
    store, _ = logged
    record = RequestRecord.from_report(
        verifier.verify("The <script>alert(1)</script> plan is free.", ["The Pro plan costs $10."]),
        scope="s",
        context="x",
        release="<b>v3</b>",
    )
    store.log_request(record)
    run_eval_loop(verifier=verifier, store=store, scope="s")
    page = render_html(run_eval_loop(verifier=verifier, store=store, scope="s"))
    assert page.count("<svg") >= 3  # by-day metrics, claim density, runs over time
    assert ">faithfulness</text>" in page and ">claim_density</text>" in page  # legends, as searchable text
    assert "<script>" not in page and "&lt;b&gt;v3&lt;/b&gt;" in page


def test_cli_writes_json_and_html(tmp_path: Path, logged: tuple[Store, dict[str, str]]) -> None:
    store, _ = logged
    _write_frozen(tmp_path / "frozen.jsonl")
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # two commands, so typer keeps the subcommand name
    db_path = store.url.removeprefix("sqlite:///")
    out = tmp_path / "report"
    args = [
        "eval-loop",
        "--frozen",
        str(tmp_path / "frozen.jsonl"),
        "--db",
        db_path,
        "--scope",
        "s",
        "--days",
        "0",
        "--scorer",
        "lexical",
        "--release",
        "r9",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads((out / "eval-loop.json").read_text())
    assert data["frozen"]["overall"]["n"] == 5 and data["rolling"]["overall"]["n"] == 6
    assert data["meta"]["release"] == "r9"
    assert "<svg" in (out / "eval-loop.html").read_text()
    assert "frozen: n=5" in result.output
    from groundwire.cli.main import app as main_app

    assert "eval-loop" in {command.name for command in main_app.registered_commands}


def test_cli_rejects_missing_inputs(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["eval-loop", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "frozen" in str(result.exception)
    result = CliRunner().invoke(app, ["eval-loop", "--db", str(tmp_path / "nope.db"), "--out", str(tmp_path)])
    assert result.exit_code != 0 and "no such database" in str(result.exception)


def test_feedback_enters_the_metrics(logged: tuple[Store, dict[str, str]], verifier: Verifier) -> None:
    store, ids = logged
    store.add_feedback(ids["ok"], scope="s", thumbs=1)
    store.add_feedback(ids["drift"], scope="s", thumbs=-1)
    store.add_feedback(ids["gold_hit"], scope="s", correction="It is start.sh, run as root.")
    rolling = run_eval_loop(verifier=verifier, store=store, scope="s", save=False).rolling
    assert rolling["overall"]["feedback_n"] == 3
    assert rolling["overall"]["thumbs_down_rate"] == pytest.approx(2 / 3)
    assert rolling["by_release"]["v1"]["thumbs_down_rate"] == pytest.approx(1 / 2)
    assert rolling["by_release"]["v2"]["thumbs_down_rate"] == 1.0


def test_one_invented_claim_makes_the_failure_drift(verifier: Verifier) -> None:
    from groundwire.evaluation.evalloop.evidence import EvidenceFinder, partition_failures
    from groundwire.evaluation.evalloop.items import EvalItem, LoggedClaim
    from groundwire.foundation.types import Chunk

    corpus = [Chunk("manual", "Run start.sh to start the cluster."), Chunk("warranty", "The warranty lasts two years.")]
    finder = EvidenceFinder(corpus, verifier)
    found = LoggedClaim("The warranty lasts two years.", "NOT_FOUND", 0.1)
    invented = LoggedClaim("The cluster ships with a free pony.", "NOT_FOUND", 0.1)
    items = [
        EvalItem("only-found", "log", "a", (found,), refused=False, escalated=False, retrieved_ids=("manual",)),
        EvalItem("mixed", "log", "a", (found, invented), refused=False, escalated=False, retrieved_ids=("manual",)),
    ]
    assert [i.failure for i in partition_failures(items, finder=finder)] == [RETRIEVAL_MISS, GENERATOR_DRIFT]


def test_frozen_set_rows_are_counted_for_the_progress_bar(verifier: Verifier) -> None:
    from groundwire.data.rows import EvalRow

    rows = [EvalRow(id=str(i), task="qa", question=None, context=("The Pro plan costs $10.",),
                    answer=answer, hallucinated=None, spans=(), source="t", line=i)
            for i, answer in enumerate(["The Pro plan costs $10.", "The Pro plan costs $20.", "It is free."])]
    ticks: list[int] = []
    result = run_eval_loop(verifier=verifier, frozen_rows=rows, corpus_check=False, on_row=lambda: ticks.append(1))
    assert len(ticks) == len(rows) == result.frozen["overall"]["n"]


def test_one_answer_the_check_fails_on_is_undetermined_and_the_rest_are_partitioned(verifier: Verifier,
                                                                                     monkeypatch) -> None:
    # Issue 34: re-checking a logged claim against the corpus raised for one answer (as canonical figures once did
    # on "2010-13-45"), and the whole eval loop, a GET /v1/eval with it, ended in an error.
    from groundwire.evaluation.evalloop import evidence
    from groundwire.evaluation.evalloop.evidence import EvidenceFinder, partition_failures
    from groundwire.evaluation.evalloop.items import EvalItem, LoggedClaim
    from groundwire.foundation.types import Chunk

    crash = "The cluster was installed on 2010-13-45."
    real_check = evidence.check

    def failing_check(verifier, item, **kwargs):
        if item.answer == crash:
            raise IndexError("tuple index out of range")
        return real_check(verifier, item, **kwargs)

    monkeypatch.setattr(evidence, "check", failing_check)
    corpus = [Chunk("manual", "Run start.sh to start the cluster."), Chunk("warranty", "The warranty lasts two years.")]
    finder = EvidenceFinder(corpus, verifier)
    items = [
        EvalItem(name, "log", "a", (LoggedClaim(text, "NOT_FOUND", 0.1),), refused=False, escalated=False,
                 retrieved_ids=("manual",))
        for name, text in (("before", "The warranty lasts two years."), ("crash", crash),
                           ("after", "The cluster ships with a free pony."))
    ]
    assert [i.failure for i in partition_failures(items, finder=finder)] == [RETRIEVAL_MISS, UNDETERMINED,
                                                                              GENERATOR_DRIFT]


def test_the_report_under_a_spent_time_budget_leaves_its_charts_out_and_says_so() -> None:
    """Issue 58: the eval report answers within the service's time budget with what it finished; a chart (matplotlib,
    0.3-1 s on a loaded machine, more for the first) is drawn only with time left for it."""
    pytest.importorskip("matplotlib")
    from groundwire.core.cancel import CancelToken, cancellable
    from groundwire.evaluation.evalloop import EvalLoopResult
    from groundwire.evaluation.evalloop.page import CHART_LEFT_OUT

    day = {"faithfulness": 0.9, "grounded_rate": 0.8, "claim_density": 2.0}
    rolling = {"by_day": {"2026-12-01": day, "2026-12-02": day}, "overall": day, "by_release": {}, "by_segment": {},
               "failure_examples": []}
    result = EvalLoopResult(None, rolling)
    with cancellable(CancelToken.after(0)):  # nothing left of the budget: the page is written without its charts
        spent = render_html(result)
    assert CHART_LEFT_OUT in spent and "<svg" not in spent
    assert "<table" in spent  # the tables are there all the same
    drawn = render_html(result)  # without a budget (the CLI): every chart
    assert "<svg" in drawn and CHART_LEFT_OUT not in drawn
