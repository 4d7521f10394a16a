"""GroundwireRunnable at the end of an LCEL chain (a fake retriever and a fixed answer, no LLM)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import BAD, GOOD, QUESTION, REFUND

pytest.importorskip("langchain_core")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402

from groundwire import Report  # noqa: E402
from groundwire.adapters.langchain import GroundwireRunnable  # noqa: E402


def test_runnable_ends_an_lcel_chain(lexical) -> None:  # noqa: ANN001
    retriever = RunnableLambda(lambda question: [Document(page_content=REFUND)])
    fake_llm = RunnableLambda(lambda inputs: AIMessage(content=BAD))
    chain = ({"context": retriever, "question": RunnablePassthrough()}
             | RunnablePassthrough.assign(answer=fake_llm)
             | GroundwireRunnable(verifier=lexical))
    report = chain.invoke(QUESTION)
    assert isinstance(report, Report) and report.question == QUESTION
    assert report.score == lexical.verify(BAD, [REFUND], question=QUESTION).score and not report.grounded
    reports = GroundwireRunnable(verifier=lexical).batch([{"question": QUESTION, "context": REFUND, "answer": a}
                                                          for a in (GOOD, BAD)])
    assert [r.grounded for r in reports] == [True, False]
    async_report = asyncio.run(chain.ainvoke(QUESTION))
    assert async_report.score == report.score
    with pytest.raises(ValueError, match="'answer'"):
        GroundwireRunnable(verifier=lexical).invoke({"question": QUESTION, "context": REFUND})
