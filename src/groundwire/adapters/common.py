"""The one rule all ten adapters follow (docs/adapters.md has it as a table), and reading their contexts.

- `metric`: which quantity a framework's metric value reports. "supported_share" (the default) is the share of
  SUPPORTED claims, which is how RAGAS, DeepEval, LlamaIndex and Haystack define faithfulness, so a groundwire
  column compares like for like with theirs; "score" is groundwire's answer score (the weakest claim's), the
  number its routing reads and every groundwire surface calls `score`. The value goes in the framework's own
  field; where groundwire names it (Phoenix, Langfuse, MLflow, RAGAS, DeepEval), the name says which quantity it
  is (`metric_name`). `score=` (0.1's name for this option, with "share" / "min") is refused naming `metric=`.
- outcome: passing follows groundwire's routing, never a cut on the reported score. ACCEPT passes, REJECT
  fails, ESCALATE is REVIEW: not a pass, and said so in the outcome and the reason's first line.
- thresholds: the only ones are the verifier's `accept_at` / `reject_at` (the scorer's calibrated values by
  default); every adapter takes them as keywords. None takes a `threshold` of its own.
- options: every adapter takes the same ones (`AdapterOptions`: every CheckSettings field, `metric`, `task`, or a
  `verifier`), and refuses any other keyword with the TypeError every library call raises
  (`core.settings.option_error`: `threshold=` names `accept_at=`); a bad value is a ValueError.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Unpack

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter, ValidationError, with_config

from groundwire.config import CheckSettings
from groundwire.core.explain import format_threshold, unsupported
from groundwire.core.plan import as_chunks
from groundwire.core.settings import option_error, refuse_unknown_options
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Chunk, Report, Route
from groundwire.pipeline import (
    SETTING_NAMES,
    Checker,
    CheckItem,
    SettingsOptions,
    check,
    given_or_shared,
    settings_of,
)

if TYPE_CHECKING:
    from groundwire.foundation.types import Thresholds

Metric = Literal["supported_share", "score"]
"""Which quantity a framework's metric value reports: "supported_share", the share of SUPPORTED claims (the
default), or "score", the answer score (the weakest claim's)."""

DEFAULT_METRIC: Metric = "supported_share"
METRIC_NAMES: dict[Metric, str] = {"supported_share": "groundwire_supported_share", "score": "groundwire_score"}
"""The name groundwire logs a metric value under (Phoenix annotation, Langfuse score, MLflow and RAGAS metric): it
says which quantity the value is."""


def metric_name(metric: Metric) -> str:
    """The name a value of `metric` is logged under: "groundwire_supported_share" or "groundwire_score"."""
    return METRIC_NAMES[check_metric(metric)]


def check_metric(metric: object) -> Metric:
    """`metric` if it is one of the two quantities, else the ValueError of a bad value."""
    if metric == "supported_share" or metric == "score":
        return metric
    raise ValueError(f"metric must be 'supported_share' or 'score', not {metric!r}")


class Outcome(StrEnum):
    PASS = "pass"  # routed ACCEPT
    FAIL = "fail"  # routed REJECT
    REVIEW = "review"  # routed ESCALATE: groundwire's LLM judge or a person decides; never counted as a pass


OUTCOME_OF_ROUTE = {Route.ACCEPT: Outcome.PASS, Route.REJECT: Outcome.FAIL, Route.ESCALATE: Outcome.REVIEW}


@dataclass(frozen=True)
class Assessment:
    """One answer as every adapter reports it."""

    report: Report
    value: float
    """The metric's value, the quantity `metric` names: what the adapter puts in its framework's field."""
    metric: Metric
    outcome: Outcome
    reason: str
    accept_at: float
    reject_at: float

    @property
    def score(self) -> float:
        """The answer score (the weakest claim's), as on every groundwire surface: the report's `score`."""
        return self.report.score

    @property
    def supported_share(self) -> float:
        """The share of SUPPORTED claims: the report's `supported_share`."""
        return self.report.supported_share

    @property
    def passed(self) -> bool:
        """True only for PASS: a REVIEW answer has not passed (frameworks with a pass/fail flag show False)."""
        return self.outcome is Outcome.PASS


@with_config(ConfigDict(extra="forbid"))
class SavedOptions(SettingsOptions, total=False):
    """The options every adapter takes (its constructor's keywords, and `AdapterCheck`'s), declared once: the
    settings keywords of every library call (`pipeline.SettingsOptions`), the metric and the task; all of them plain
    values a framework can save with the adapter and load again."""

    metric: Metric
    """Which quantity the adapter's metric value reports: "supported_share" of SUPPORTED claims (the default), or
    "score", the answer score (the weakest claim's)."""
    task: str | None
    """The calibration ("qa", "summary", ...); None: pooled (data2text for a JSON record)."""


class AdapterOptions(SavedOptions, total=False):
    """`SavedOptions`, or a loaded `verifier` in place of settings (an object: never saved)."""

    verifier: Verifier | None


_VALIDATE = TypeAdapter(SavedOptions)
ADAPTER_OPTION_NAMES: frozenset[str] = AdapterOptions.__optional_keys__
"""What every adapter takes (`AdapterOptions`' keys); any other keyword is refused (`option_error`)."""
_OWN_SETTINGS = ("settings", *SETTING_NAMES)


@dataclass(frozen=True, init=False)
class AdapterCheck:
    """How an adapter checks an answer, from its options (`AdapterOptions`): the verifier (the one given, else the
    process-wide one for the settings), the task, and the metric it reports. One code path for every adapter."""

    options: SavedOptions
    """The options given (None values left out), validated: what a framework saves."""
    verifier: Verifier | None

    def __init__(self, where: str = "this adapter", /, **options: Unpack[AdapterOptions]) -> None:
        """`where`: the adapter, named in the TypeError for a keyword it does not take."""
        refuse_unknown_options(where, options, ADAPTER_OPTION_NAMES)
        verifier = options.pop("verifier", None)
        try:
            saved = _VALIDATE.validate_python({key: value for key, value in options.items() if value is not None})
        except ValidationError as error:
            raise ValueError(f"invalid adapter options: {error}") from None
        given = [name for name in _OWN_SETTINGS if name in saved]
        if verifier is not None and given:
            raise ValueError(f"pass either a verifier (it has its own settings) or {', '.join(given)}, not both")
        object.__setattr__(self, "options", saved)
        object.__setattr__(self, "verifier", verifier)
        self.settings  # noqa: B018  # refuse thresholds out of order now, not at the first check

    @property
    def metric(self) -> Metric:
        return self.options.get("metric", DEFAULT_METRIC)

    @property
    def metric_name(self) -> str:
        """The name the value is logged under where groundwire names it (`metric_name`)."""
        return metric_name(self.metric)

    @property
    def task(self) -> str | None:
        return self.options.get("task")

    @property
    def settings(self) -> CheckSettings | None:
        """The settings the check is built from (`settings` with `scorer` and the thresholds over them); None for a
        given verifier, or for none given at all (the defaults)."""
        return settings_of(self.options)

    def saved(self) -> dict[str, Any]:
        """The options as plain values (the settings as a mapping of what differs from the defaults), to save with a
        framework's own format; a given verifier cannot be saved."""
        saved: dict[str, Any] = _VALIDATE.dump_python(self.options, mode="json", exclude_defaults=True)
        return saved

    def resolve(self) -> Checker:
        """The verifier given, else the shared one for the settings; with the judge when they turn it on."""
        return given_or_shared(self.verifier, self.settings)

    def run(self, answer: str, contexts: Sequence[Chunk | str], question: str | None = None, *,
            response_id: str | None = None) -> Assessment:
        """Check one answer. `response_id`: the id of the model response that wrote it, put on the check's spans
        and GenAI evaluation events (`gen_ai.response.id`)."""
        checker = self.resolve()
        item = CheckItem(answer, as_chunks(contexts), question=question, task=self.task, response_id=response_id)
        report = check(checker.verifier, item, judge=checker.judge)
        return assess(report, self.metric, checker.verifier.thresholds_for(self.task))

    async def arun(self, answer: str, contexts: Sequence[Chunk | str], question: str | None = None, *,
                   response_id: str | None = None) -> Assessment:
        import anyio.to_thread  # lazy: only async callers need it

        return await anyio.to_thread.run_sync(
            functools.partial(self.run, answer, contexts, question, response_id=response_id))


def assess(report: Report, metric: Metric, thresholds: Thresholds) -> Assessment:
    outcome = OUTCOME_OF_ROUTE[report.route]
    accept_at, reject_at = thresholds
    return Assessment(report, metric_value(report, metric), metric, outcome, reason(report, outcome, thresholds),
                      accept_at, reject_at)


def metric_value(report: Report, metric: Metric) -> float:
    """The quantity `metric` names, read from the report: its `supported_share` or its `score`."""
    return report.supported_share if check_metric(metric) == "supported_share" else report.score


def reason(report: Report, outcome: Outcome, thresholds: Thresholds) -> str:
    """First line: the outcome and why; then one line per unsupported claim, with its verdict and score."""
    accept_at, reject_at = thresholds
    if report.abstained:
        return "pass: the answer abstains (NOT_IN_CONTEXT); nothing is claimed."
    if not report.claims and outcome is Outcome.PASS:
        return "pass: the answer makes no checkable claim."
    missing = unsupported(report)
    counted = (f"{len(missing)} of {len(report.claims)} claims are not supported by the context"
               if missing else f"every claim is supported by the context ({len(report.claims)} of {len(report.claims)})")
    accept, reject = format_threshold(accept_at), format_threshold(reject_at)
    band = {
        Outcome.PASS: f"answer score {report.score:.2f} >= accept_at {accept}",
        Outcome.FAIL: f"answer score {report.score:.2f}, rejected (reject_at {reject}, accept_at {accept})",
        Outcome.REVIEW: f"answer score {report.score:.2f}, escalated (reject_at {reject}, "
                        f"accept_at {accept}); groundwire's LLM judge or a person decides",
    }[outcome]
    head = f"{'needs review' if outcome is Outcome.REVIEW else outcome.value}: {counted} ({band})"
    notes = [f"- {finding.check}: {finding.detail}" for finding in report.findings]
    notes += [f"- {warning}" for warning in report.warnings if outcome is not Outcome.PASS]
    lines = [f'- "{result.claim.text}": {result.verdict.value}, score {result.score:.2f}'
             + (f" ({result.checks[0].check}: {result.checks[0].detail})" if result.checks else "")
             for result in missing]
    body = lines + notes
    return "\n".join([head + (":" if body else "."), *body])


def refuse_threshold(adapter: str, threshold: object) -> None:
    """The adapters whose signature keeps a `threshold` parameter (their framework's base class has one) refuse a
    value for it with the one rule's TypeError, which names `accept_at=`."""
    if threshold is not None:
        raise option_error(adapter, "threshold", ADAPTER_OPTION_NAMES)


def refuse_check_options(where: str, given: Iterable[str], accepted: Collection[str]) -> None:
    """The calls that log results checked already (Phoenix's, Langfuse's `log_scores`) take no check option: the
    one rule's TypeError, naming the verify_many() option that sets it (`threshold=` -> `accept_at=`)."""
    for name in given:
        raise option_error(where, name, accepted, checked_by="verify_many()")


def context_texts(contexts: object) -> list[str]:
    """A context given as one string, or a sequence of strings or framework documents: LangChain and
    Haystack Documents (page_content / content), LlamaIndex nodes (get_content()) and NodeWithScore."""
    if contexts is None:
        return []
    if isinstance(contexts, str):
        return [contexts]
    if not isinstance(contexts, Iterable):
        raise TypeError(f"contexts must be a string or a sequence, not {type(contexts).__name__}")
    return [_text(item) for item in contexts]


def _text(item: object) -> str:
    if isinstance(item, str):
        return item
    node = getattr(item, "node", None)  # LlamaIndex NodeWithScore
    if node is not None and hasattr(node, "get_content"):
        return str(node.get_content())
    if hasattr(item, "get_content"):
        return str(item.get_content())
    for attribute in ("page_content", "content", "text"):
        value = getattr(item, attribute, None)
        if isinstance(value, str):
            return value
    raise TypeError(f"cannot read the text of a context item of type {type(item).__name__}")


class AdapterSettings(BaseModel):
    """An adapter whose framework keeps its settings as a pydantic model (MLflow scorers, TruLens providers, saved
    and loaded again): the options every adapter takes (`AdapterOptions`) as its one field, `options`, and a
    `verifier=` (not saved), checked through the one AdapterCheck."""

    options: SavedOptions = {}
    _verifier: Verifier | None = PrivateAttr(default=None)

    def __init__(
        self, *, threshold: None = None, options: SavedOptions | None = None, **given: Unpack[AdapterOptions]
    ) -> None:
        """The options as every adapter takes them (`given`), or `options`, saved already (a framework loading the
        model again passes them back)."""
        where = f"{type(self).__name__}()"
        refuse_threshold(where, threshold)
        if options is not None and given:
            raise ValueError(f"pass either options or the options themselves ({', '.join(given)}), not both")
        # refuse an unknown keyword, a bad metric, or a verifier given with settings of its own, now
        check = AdapterCheck(where, **given) if options is None else AdapterCheck(where, **options)
        super().__init__(options=check.options)
        self._verifier = check.verifier

    def adapter_check(self) -> AdapterCheck:
        return AdapterCheck(**self.options, verifier=self._verifier)
