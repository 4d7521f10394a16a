"""The eval loop's labels section: a scope's reviewed answers counted, and a threshold refit on them reported (with
the code `eval --target-far/--target-frr` uses) or refused below the minimum; through the command too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from groundwire import Verifier
from groundwire.cli.prod import register
from groundwire.data.store import RequestRecord, Store
from groundwire.evaluation.evalloop import EvalLoopResult, render_html
from groundwire.evaluation.labels import MIN_PER_CLASS, labels_section
from groundwire.foundation.types import Chunk
from groundwire.scoring import get_scorer

pytest.importorskip("sqlalchemy")

SCOPE = "<team & co>"
FACTS = [f"Server {i} runs in rack {i + 3} of hall {i % 5 + 1}." for i in range(40)]


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(get_scorer("lexical"))


def _reviewed(store: Store, verifier: Verifier, *, faithful: int, not_faithful: int, scope: str = SCOPE) -> None:
    """Logged answers with a verdict each: copies of their context (faithful) and answers that invent (not)."""
    for i in range(faithful + not_faithful):
        fact = FACTS[i % len(FACTS)]
        good = i < faithful
        answer = fact if good else f"Server {i} was decommissioned by the vendor in {1990 + i}, after a flood."
        report = verifier.verify(answer, [Chunk(id="S1", text=fact)])
        request_id = store.log_request(RequestRecord.from_report(report, scope=scope, context=fact))
        store.add_review(request_id, scope=scope, faithful=good, unfaithful_claims=[] if good or i % 2 else [0])


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'log.db'}")


def test_below_the_minimum_the_labels_are_counted_and_no_refit_is_made(store: Store, verifier: Verifier) -> None:
    _reviewed(store, verifier, faithful=3, not_faithful=2)
    store.add_review(store.log_request(RequestRecord(scope=SCOPE, response="r", context="c")), scope=SCOPE,
                     thumbs=-1)  # thumbs alone is no label
    section = labels_section(store, verifier, scope=SCOPE)
    counts, refit = section.counts, section.refit
    assert (counts.labelled, counts.faithful, counts.not_faithful, counts.claim_marked) == (5, 3, 2, 1)
    assert refit.status == "not_enough_labels" and refit.refit is None
    assert refit.needed == {"not_faithful": MIN_PER_CLASS - 2, "faithful": MIN_PER_CLASS - 3}
    assert refit.in_force == (verifier.accept_at, verifier.reject_at)
    assert "not enough labels (needs 28 more not faithful and 27 more faithful" in section.lines()[1]
    assert labels_section(store, verifier, scope="other").counts.labelled == 0


def test_with_enough_labels_the_refit_meets_its_targets_on_them(store: Store, verifier: Verifier) -> None:
    _reviewed(store, verifier, faithful=MIN_PER_CLASS + 5, not_faithful=MIN_PER_CLASS)
    section = labels_section(store, verifier, scope=SCOPE, target_far=0.1, target_frr=0.1)
    refit = section.refit
    assert section.counts.labelled == 2 * MIN_PER_CLASS + 5 and refit.needed == {}
    assert refit.refit is not None and refit.rates_refit is not None and refit.rates_in_force is not None
    assert refit.rates_refit.false_accept <= 0.1 and refit.rates_refit.false_reject <= 0.1
    assert refit.status == ("unchanged" if refit.refit == refit.in_force else "would_change")
    assert refit.rates_in_force.n == refit.rates_refit.n == section.counts.labelled
    # Carried by the eval-loop result, and shown (escaped) in its report.
    page = render_html(EvalLoopResult(None, None, labels=section.to_dict()))
    assert "scope &lt;team &amp; co&gt;" in page and SCOPE not in page
    assert json.loads(json.dumps(section.to_dict()))["refit"]["status"] == refit.status


def test_the_command_prints_the_section_and_refuses_targets_without_a_scope(tmp_path: Path, store: Store,
                                                                           verifier: Verifier) -> None:
    _reviewed(store, verifier, faithful=MIN_PER_CLASS, not_faithful=MIN_PER_CLASS)
    store.close()
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # two commands, so typer keeps the subcommand name
    db = store.url.removeprefix("sqlite:///")
    out = tmp_path / "report"
    common = ["eval-loop", "--db", db, "--scorer", "lexical", "--days", "0", "--no-save", "--out", str(out)]
    result = CliRunner().invoke(app, [*common, "--scope", SCOPE, "--target-far", "0.2"])
    assert result.exit_code == 0, result.output
    assert f"labels ({SCOPE}): {2 * MIN_PER_CLASS} reviewed answers" in result.output
    assert "refit at targets false accept 0.2, false reject 0.1:" in result.output
    labels = json.loads((out / "eval-loop.json").read_text())["labels"]
    assert labels["counts"]["labelled"] == 2 * MIN_PER_CLASS and labels["refit"]["target_far"] == 0.2
    refused = CliRunner().invoke(app, [*common, "--target-far", "0.2"])
    assert refused.exit_code != 0 and "--scope" in str(refused.exception)
    unscoped = CliRunner().invoke(app, common)
    assert unscoped.exit_code == 0 and "labels: give --scope" in unscoped.output


def test_cross_validated_rates_route_each_answer_at_thresholds_fitted_without_it() -> None:
    from groundwire.evaluation.labels import cross_validated_rates

    labels = [True] * 30 + [False] * 30
    separated = cross_validated_rates(labels, [0.1 + i / 1000 for i in range(30)] + [0.9 - i / 1000 for i in range(30)],
                                      target_far=0.1, target_frr=0.1)
    assert (separated.n, separated.false_accept, separated.false_reject) == (60, 0.0, 0.0)
    # Scores that say nothing: no threshold fitted on the other folds can accept or reject, so all are escalated.
    blind = cross_validated_rates(labels, [0.5] * 60, target_far=0.1, target_frr=0.1)
    assert (blind.false_accept, blind.false_reject, blind.escalated) == (0.0, 0.0, 1.0)
