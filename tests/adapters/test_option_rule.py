"""One rule for the options of every adapter (issue 58 item 4, issue 57 item 1): an unknown or renamed keyword is
the TypeError every library call raises (core.settings.option_error), naming the replacement (`threshold=` ->
`accept_at=`) or the closest option; a bad value is a ValueError. Nine of the ten adapters here; Guardrails'
validator in tests/adapters/test_guardrails.py, which runs in its own environment (`make test-guardrails`). Each
framework is imported for real; an adapter whose framework is not installed is skipped."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from conftest import REFUND

Make = Callable[..., object]


def _module(name: str, framework: str) -> Any:
    pytest.importorskip(framework)
    return importlib.import_module(f"groundwire.adapters.{name}")


def _frame() -> Any:
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"score": [1.0], "route": ["accept"], "supported_share": [1.0], "error_code": [None]})


ADAPTERS: dict[str, Callable[[], Make]] = {
    "deepeval.GroundwireFaithfulness": lambda: _module("deepeval", "deepeval").GroundwireFaithfulness,
    "ragas.GroundwireFaithfulness": lambda: _module("ragas", "ragas").GroundwireFaithfulness,
    "ragas.GroundwireOutcome": lambda: _module("ragas", "ragas").GroundwireOutcome,
    "langchain.GroundwireRunnable": lambda: _module("langchain", "langchain_core").GroundwireRunnable,
    "llamaindex.GroundwireEvaluator": lambda: _module("llamaindex", "llama_index.core").GroundwireEvaluator,
    "llamaindex.ground_response": lambda: lambda **options: _module("llamaindex", "llama_index.core").ground_response(
        None, **options),
    "haystack.GroundwireFaithfulnessEvaluator": lambda: _module("haystack", "haystack").GroundwireFaithfulnessEvaluator,
    "mlflow.GroundwireFaithfulness": lambda: _module("mlflow", "mlflow").GroundwireFaithfulness,
    "mlflow.GroundwireOutcome": lambda: _module("mlflow", "mlflow").GroundwireOutcome,
    "trulens.GroundwireProvider": lambda: _module("trulens", "trulens.core").GroundwireProvider,
    "langfuse.check_and_score": lambda: lambda **options: _module("langfuse", "langfuse").check_and_score(
        None, "An answer.", [REFUND], **options),
}
"""What makes a check of its own from the options: each takes every adapter option (AdapterOptions)."""

LOGGERS: dict[str, Callable[[], Make]] = {
    "phoenix.log_evaluations": lambda: lambda **options: _module("phoenix", "phoenix.client").log_evaluations(
        None, _frame(), **options),
    "phoenix.span_annotations": lambda: lambda **options: _module("phoenix", "phoenix.client").span_annotations(
        _frame(), **options),
    "langfuse.log_scores": lambda: lambda **options: _module("langfuse", "langfuse").log_scores(
        None, _frame(), **options),
}
"""What logs verify_many's results, checked already: a check option belongs to verify_many()."""


@pytest.mark.parametrize("adapter", sorted({**ADAPTERS, **LOGGERS}))
def test_threshold_is_a_type_error_that_names_accept_at(adapter: str) -> None:
    make = {**ADAPTERS, **LOGGERS}[adapter]()
    with pytest.raises(TypeError, match=r"takes no threshold=: .*accept_at=") as refused:
        make(threshold=0.5)
    assert "Extra inputs" not in str(refused.value)


@pytest.mark.parametrize("adapter", sorted({**ADAPTERS, **LOGGERS}))
def test_an_unknown_option_is_a_type_error_that_names_it(adapter: str) -> None:
    make = {**ADAPTERS, **LOGGERS}[adapter]()
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'metrik'; did you mean metric=\?"):
        make(metrik="score")
    if adapter in ADAPTERS:
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'scorrer'; did you mean scorer=\?"):
            make(scorrer="lexical")


@pytest.mark.parametrize("adapter", sorted({**ADAPTERS, **LOGGERS}))
def test_score_is_renamed_metric(adapter: str) -> None:
    """0.1's `score="share"` / `"min"` chose the quantity reported; on every groundwire surface `score` is the answer
    score now, and the option is `metric=`: the old keyword is the one rule's TypeError, naming it."""
    make = {**ADAPTERS, **LOGGERS}[adapter]()
    with pytest.raises(TypeError, match=r"takes no score=: use metric= \(score=\"share\" is "
                                        r"metric=\"supported_share\", score=\"min\" is metric=\"score\"\)"):
        make(score="min")


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_bad_value_is_a_value_error(adapter: str) -> None:
    make = ADAPTERS[adapter]()
    with pytest.raises(ValueError, match="accept_at"):
        make(scorer="lexical", accept_at=2.0)
    with pytest.raises(ValueError, match="route"):
        make(scorer="lexical", route="sideways")
    with pytest.raises(ValueError, match="metric"):
        make(scorer="lexical", metric="share")


@pytest.mark.parametrize("adapter", sorted(LOGGERS))
def test_a_check_option_given_to_a_logger_names_verify_many(adapter: str) -> None:
    make = LOGGERS[adapter]()
    with pytest.raises(TypeError, match=r"takes no accept_at=: it logs results checked already; give accept_at= to "
                                        r"the verify_many\(\) call"):
        make(accept_at=0.5)
