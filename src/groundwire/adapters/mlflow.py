"""MLflow GenAI scorers: groundwire's check in `mlflow.genai.evaluate` (MLflow 3's evaluation API).

    import mlflow
    from groundwire.adapters.mlflow import GroundwireFaithfulness, GroundwireOutcome

    data = [{"inputs": {"question": q, "context": [chunk, ...]}, "outputs": answer}, ...]
    result = mlflow.genai.evaluate(data=data, scorers=[GroundwireFaithfulness(), GroundwireOutcome()])
    result.metrics["groundwire_supported_share/mean"]

Each scorer reads the answer from `outputs` (a string, or a mapping's "response" / "answer" / "output"), the
question from `inputs` (a string, or its "question" / "query" / "input" / "user_input"), and the context from
`inputs` ("context", "contexts", "retrieved_contexts" or "retrieval_context": a string, or a list of strings or
documents) or else from the trace's retriever spans, as MLflow's own RetrievalGroundedness does. It calls no LLM.

The adapters' one rule (common.py, docs/adapters.md):
- `GroundwireFaithfulness` (a number): the share of supported claims, named `groundwire_supported_share`
  (metric="score": the answer score, the weakest claim's, named `groundwire_score`);
- `GroundwireOutcome` ("yes" / "no", MLflow's pass/fail rating, which `result.passed` reads): "yes" only when
  routing accepts the answer; a rejected answer and one escalated for review are "no".
Both give the reason as the rationale (the outcome first: pass / fail / needs review, then each unsupported
claim) and the outcome, route, `score`, `supported_share` and the thresholds as metadata (`groundwire.*`).
`result.passed` counts a number as a failed assertion unless its scorer has a `pass_if`, and the one rule sets
no cut on the score: assert with `GroundwireOutcome` alone in the scorers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from groundwire.adapters.common import (
    DEFAULT_METRIC,
    AdapterSettings,
    Assessment,
    Outcome,
    context_texts,
    metric_name,
)
from groundwire.foundation.extras import optional_import

with optional_import("mlflow", needed_by=__name__):
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.genai.scorers import Scorer
    from mlflow.genai.utils.trace_utils import extract_retrieval_context_from_trace

if TYPE_CHECKING:
    from mlflow.entities import Trace


ANSWER_KEYS = ("response", "answer", "output", "outputs", "content", "text")
QUESTION_KEYS = ("question", "query", "input", "user_input", "request")
CONTEXT_KEYS = ("context", "contexts", "retrieved_contexts", "retrieval_context")
SOURCE = AssessmentSource(source_type="CODE", source_id="groundwire")


class _GroundwireScorer(AdapterSettings, Scorer):
    """The settings every adapter takes (AdapterSettings), and the one check both scorers share."""

    def _assess(self, inputs: Any, outputs: Any, trace: Trace | None) -> Assessment:
        answer = _answer(outputs)
        contexts = _contexts(inputs, trace)
        return self.adapter_check().run(answer, contexts, _question(inputs))

    def _feedback(self, value: float | str, assessment: Assessment) -> Feedback:
        report = assessment.report
        metadata = {"outcome": assessment.outcome.value, "passed": assessment.passed,
                    "route": report.route.value, "score": report.score,
                    "supported_share": report.supported_share, "accept_at": assessment.accept_at,
                    "reject_at": assessment.reject_at, "model_id": report.model_id}
        return Feedback(name=self.name, value=value, rationale=assessment.reason, source=SOURCE,
                        metadata={f"groundwire.{key}": str(item) for key, item in metadata.items()})


class GroundwireFaithfulness(_GroundwireScorer):
    """The share of the answer's claims the context supports (metric="score": the weakest claim's score), under
    the name of that quantity (`groundwire_supported_share` / `groundwire_score`) unless `name=` is given."""

    name: str = ""

    @model_validator(mode="after")
    def _named_after_the_metric(self) -> GroundwireFaithfulness:
        if not self.name:
            self.name = metric_name(self.options.get("metric", DEFAULT_METRIC))
        return self

    # MLflow passes a scorer only the parameters its __call__ names (Scorer.run reads the signature), as its
    # docs' custom scorers do: this one reads no expectations and is no session-level scorer.
    def __call__(  # type: ignore[override]
        self, *, inputs: Any = None, outputs: Any = None, trace: Trace | None = None
    ) -> Feedback:
        assessment = self._assess(inputs, outputs, trace)
        return self._feedback(assessment.value, assessment)


class GroundwireOutcome(_GroundwireScorer):
    """"yes" when groundwire's routing accepts the answer; "no" when it rejects it or escalates it for review."""

    name: str = "groundwire_outcome"

    # MLflow passes a scorer only the parameters its __call__ names (Scorer.run reads the signature), as its
    # docs' custom scorers do: this one reads no expectations and is no session-level scorer.
    def __call__(  # type: ignore[override]
        self, *, inputs: Any = None, outputs: Any = None, trace: Trace | None = None
    ) -> Feedback:
        assessment = self._assess(inputs, outputs, trace)
        return self._feedback("yes" if assessment.outcome is Outcome.PASS else "no", assessment)


def _answer(outputs: Any) -> str:
    if isinstance(outputs, Mapping):
        outputs = next((outputs[key] for key in ANSWER_KEYS if isinstance(outputs.get(key), str)), None)
    if not isinstance(outputs, str) or not outputs:
        raise ValueError("groundwire needs the answer as `outputs`: a string, or a mapping with one of "
                         f"{', '.join(ANSWER_KEYS)}")
    return outputs


def _question(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs or None
    if isinstance(inputs, Mapping):
        return next((inputs[key] for key in QUESTION_KEYS if isinstance(inputs.get(key), str)), None)
    return None


def _contexts(inputs: Any, trace: Trace | None) -> list[str]:
    if isinstance(inputs, Mapping):
        for key in CONTEXT_KEYS:
            if inputs.get(key):
                return [_document_text(item) for item in _listed(inputs[key])]
    retrieved = extract_retrieval_context_from_trace(trace)
    texts = [str(chunk["content"]) for chunks in retrieved.values() for chunk in chunks if chunk.get("content")]
    if not texts:
        raise ValueError("groundwire needs the retrieved context: put it in `inputs` (one of "
                         f"{', '.join(CONTEXT_KEYS)}), or evaluate traces with a RETRIEVER span")
    return texts


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, (str, Mapping)) else list(value)


def _document_text(item: Any) -> str:
    """A string, a mapping with "content" / "page_content" / "text", or a framework document."""
    if isinstance(item, Mapping):
        for key in ("content", "page_content", "text"):
            if isinstance(item.get(key), str):
                return str(item[key])
        raise ValueError(f"cannot read the text of a context item with keys {sorted(item)}")
    return context_texts([item])[0]
