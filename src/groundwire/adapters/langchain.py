"""LangChain: `GroundwireRunnable`, a Runnable from `{"question", "context", "answer"}` to a groundwire Report,
so it can end an LCEL chain: `{"context": retriever, "question": RunnablePassthrough()} | RunnablePassthrough
.assign(answer=prompt | llm | StrOutputParser()) | GroundwireRunnable()`.

`context` is a string, a list of strings or a list of Documents; `answer` a string or a message (its content).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableConfig

from groundwire.adapters.common import context_texts
from groundwire.core.averify import averify
from groundwire.core.types import Report

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier


class GroundwireRunnable(Runnable[Mapping[str, Any], Report]):
    def __init__(self, *, verifier: Verifier | None = None, scorer: str | None = None, task: str | None = None,
                 question_key: str = "question", context_key: str = "context", answer_key: str = "answer") -> None:
        self._verifier = verifier
        self._scorer = scorer
        self._task = task
        self._keys = (question_key, context_key, answer_key)

    def invoke(self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Report:
        return self._call_with_config(self._check, input, config, run_type="chain")

    async def ainvoke(self, input: Mapping[str, Any], config: RunnableConfig | None = None,
                      **kwargs: Any) -> Report:
        return await self._acall_with_config(self._acheck, input, config, run_type="chain")

    def _check(self, input: Mapping[str, Any]) -> Report:
        from groundwire.core.verifier import given_or_shared

        question, contexts, answer = self._read(input)
        return given_or_shared(self._verifier, self._scorer).verify(answer, contexts, question=question,
                                                                     task=self._task)

    async def _acheck(self, input: Mapping[str, Any]) -> Report:
        question, contexts, answer = self._read(input)
        return await averify(answer, contexts, question=question, task=self._task, verifier=self._verifier,
                             scorer=self._scorer)

    def _read(self, input: Mapping[str, Any]) -> tuple[str | None, list[str], str]:
        question_key, context_key, answer_key = self._keys
        if not isinstance(input, Mapping) or answer_key not in input or context_key not in input:
            raise ValueError(f"GroundwireRunnable takes a mapping with {answer_key!r} and {context_key!r} "
                             f"(and optionally {question_key!r})")
        answer = input[answer_key]
        answer = answer if isinstance(answer, str) else str(getattr(answer, "content", answer))
        question = input.get(question_key)
        return (question if isinstance(question, str) else None), context_texts(input[context_key]), answer
