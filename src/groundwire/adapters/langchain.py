"""LangChain: `GroundwireRunnable`, to end an LCEL chain in either of two forms.

- The common chain, `prompt | llm | GroundwireRunnable(context=docs)`: the documents the answer must rest on are
  bound at construction (strings or Documents); the input is the model's message or text, and the output is
  a `GroundedAnswer`: the answer text itself (a str, so the chain's text survives) with `.report`, `.outcome`
  ("pass", "fail" or "review"), `.passed`, `.value` (the quantity `metric=` names: the share of supported claims
  by default), `.score` (the answer score, the weakest claim's, as on every groundwire surface), `.route` and
  `.reason` attached, as every adapter reports them (docs/adapters.md).
- The mapping form, `RunnablePassthrough.assign(report=GroundwireRunnable())` after a step that yields
  `{"question", "context", "answer"}`: the output is the groundwire Report (read its `route`:
  accept, escalate or reject).
  A bound `context` is used when the mapping has none.

`context` is a string, a list of strings or a list of Documents; `answer` a string or a message (its text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from groundwire.adapters.common import AdapterCheck, AdapterOptions, Assessment, Outcome, context_texts
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import Report, Route

with optional_import("langchain", needed_by=__name__):
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable, RunnableConfig

RunnableInput = Mapping[str, Any] | str | BaseMessage


class GroundedAnswer(str):
    """The answer text, unchanged, with groundwire's check of it attached."""

    assessment: Assessment

    def __new__(cls, text: str, assessment: Assessment) -> GroundedAnswer:
        answer = super().__new__(cls, text)
        answer.assessment = assessment
        return answer

    def __reduce__(self) -> tuple[type[GroundedAnswer], tuple[str, Assessment]]:  # copy and pickle keep the check
        return GroundedAnswer, (str(self), self.assessment)

    @property
    def report(self) -> Report:
        return self.assessment.report

    @property
    def outcome(self) -> Outcome:
        return self.assessment.outcome

    @property
    def passed(self) -> bool:
        return self.assessment.passed

    @property
    def route(self) -> Route:
        return self.assessment.report.route

    @property
    def value(self) -> float:
        """The metric's value: the quantity `metric=` names (the share of supported claims by default)."""
        return self.assessment.value

    @property
    def score(self) -> float:
        """The answer score (the weakest claim's), as the report's `score`."""
        return self.assessment.score

    @property
    def supported_share(self) -> float:
        return self.assessment.supported_share

    @property
    def reason(self) -> str:
        return self.assessment.reason


class GroundwireRunnable(Runnable[RunnableInput, Report | GroundedAnswer]):
    def __init__(self, *, context: object = None, question_key: str = "question", context_key: str = "context",
                 answer_key: str = "answer", **options: Unpack[AdapterOptions]) -> None:
        """`options` as every adapter's (AdapterOptions)."""
        self._check = AdapterCheck("GroundwireRunnable()", **options)
        self._context = context_texts(context) if context is not None else None
        self._keys = (question_key, context_key, answer_key)

    def invoke(self, input: RunnableInput, config: RunnableConfig | None = None,
               **kwargs: Any) -> Report | GroundedAnswer:
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(self, input: RunnableInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> Report | GroundedAnswer:
        return await self._acall_with_config(self._arun, input, config, run_type="chain")

    def _run(self, input: RunnableInput) -> Report | GroundedAnswer:
        question, contexts, answer = self._read(input)
        return self._output(input, answer, self._check.run(answer, contexts, question))

    async def _arun(self, input: RunnableInput) -> Report | GroundedAnswer:
        question, contexts, answer = self._read(input)
        return self._output(input, answer, await self._check.arun(answer, contexts, question))

    @staticmethod
    def _output(input: RunnableInput, answer: str, assessment: Assessment) -> Report | GroundedAnswer:
        return assessment.report if isinstance(input, Mapping) else GroundedAnswer(answer, assessment)

    def _read(self, input: RunnableInput) -> tuple[str | None, list[str], str]:
        question_key, context_key, answer_key = self._keys
        if isinstance(input, Mapping):
            if answer_key not in input or (context_key not in input and self._context is None):
                raise ValueError(f"GroundwireRunnable takes a mapping with {answer_key!r} and {context_key!r} "
                                 f"(and optionally {question_key!r}), or bind the documents with context=")
            question = input.get(question_key)
            contexts = context_texts(input[context_key]) if context_key in input else self._context
            return (question if isinstance(question, str) else None), contexts or [], _text(input[answer_key])
        if isinstance(input, (str, BaseMessage)):
            if self._context is None:
                raise ValueError("GroundwireRunnable got an answer without documents: bind them with "
                                 "GroundwireRunnable(context=docs), or pass a mapping with 'answer' and 'context'")
            return None, self._context, _text(input)
        raise ValueError(f"GroundwireRunnable takes a message, a string or a mapping, not {type(input).__name__}")


def _text(answer: object) -> str:
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseMessage):
        text = answer.text  # a (callable) str in langchain-core 1.x, a method before
        return str(text if isinstance(text, str) else text())
    return str(getattr(answer, "content", answer))
