"""GroundwireRunnable at the end of an LCEL chain, against real langchain-core with its fake chat model (no
network): the common `prompt | llm | GroundwireRunnable(context=docs)` and the RunnablePassthrough.assign form."""

from __future__ import annotations

import asyncio
import copy
import pickle

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

pytest.importorskip("langchain_core")
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from groundwire import Report
from groundwire.adapters.common import Outcome
from groundwire.adapters.langchain import GroundedAnswer, GroundwireRunnable

PROMPT = ChatPromptTemplate.from_messages([("system", "Answer only from these documents:\n{context}"),
                                           ("human", "{question}")])
DOCS = [Document(page_content=REFUND)]


def test_prompt_llm_runnable_keeps_the_answer_text_with_its_report(lexical) -> None:
    llm = FakeListChatModel(responses=[BAD, GOOD])
    chain = PROMPT | llm | GroundwireRunnable(context=DOCS, verifier=lexical)
    bad = chain.invoke({"context": REFUND, "question": QUESTION})
    assert isinstance(bad, GroundedAnswer) and bad == BAD  # the chain's text survives
    assert bad.outcome is Outcome.FAIL and bad.passed is False and bad.value == bad.supported_share == 0.5
    assert bad.score == bad.report.score == lexical.verify(BAD, [REFUND]).score and "90 days" in bad.reason
    good = asyncio.run(chain.ainvoke({"context": REFUND, "question": QUESTION}))
    assert good == GOOD and good.outcome is Outcome.PASS and good.passed
    again = pickle.loads(pickle.dumps(bad))
    assert copy.deepcopy(bad).outcome is again.outcome is Outcome.FAIL and again == BAD


def test_after_a_string_parser_and_with_an_escalated_answer(lexical) -> None:
    llm = FakeListChatModel(responses=[PLAUSIBLE])
    chain = (PROMPT | llm | StrOutputParser() | GroundwireRunnable(context=HOURS, verifier=lexical)
             | RunnableLambda(lambda answer: (answer.upper(), answer.outcome)))
    text, outcome = chain.invoke({"context": HOURS, "question": HOURS_QUESTION})
    assert text == PLAUSIBLE.upper() and outcome is Outcome.REVIEW


def test_assign_form_returns_the_report(lexical) -> None:
    retriever = RunnableLambda(lambda question: DOCS)
    llm = FakeListChatModel(responses=[BAD])
    chain = ({"context": retriever, "question": RunnablePassthrough()}
             | RunnablePassthrough.assign(answer=PROMPT | llm | StrOutputParser())
             | RunnablePassthrough.assign(report=GroundwireRunnable(verifier=lexical)))
    out = chain.invoke(QUESTION)
    assert out["answer"] == BAD and isinstance(out["report"], Report) and out["report"].question == QUESTION
    assert out["report"].score == lexical.verify(BAD, [REFUND], question=QUESTION).score and not out["report"].grounded
    reports = GroundwireRunnable(verifier=lexical).batch([{"question": QUESTION, "context": REFUND, "answer": a}
                                                          for a in (GOOD, BAD)])
    assert [r.grounded for r in reports] == [True, False]
    bound = GroundwireRunnable(context=DOCS, verifier=lexical).invoke({"answer": BAD})
    assert isinstance(bound, Report) and bound.score == reports[1].score


def test_the_module_tells_the_reader_the_reports_route_not_its_deprecated_decision() -> None:
    """Report.decision warns (DeprecationWarning) and reads Report.route: the docstring points at the field to read."""
    import groundwire.adapters.langchain as module

    assert "`decision`" not in module.__doc__ and "Report (read its `route`" in module.__doc__


def test_missing_documents_are_a_clear_error(lexical) -> None:
    with pytest.raises(ValueError, match="'answer'"):
        GroundwireRunnable(verifier=lexical).invoke({"question": QUESTION, "context": REFUND})
    with pytest.raises(ValueError, match="bind them with GroundwireRunnable\\(context=docs\\)"):
        GroundwireRunnable(verifier=lexical).invoke(BAD)
    with pytest.raises(ValueError, match="not int"):
        GroundwireRunnable(context=DOCS, verifier=lexical).invoke(3)  # type: ignore[arg-type]
