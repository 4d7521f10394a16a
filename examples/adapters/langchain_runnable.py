"""groundwire at the end of an LCEL chain, offline: python examples/adapters/langchain_runnable.py
(pip install 'groundwire[langchain]'). The retriever and the chat model are stand-ins; put your own there."""

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from groundwire.adapters.langchain import GroundwireRunnable

docs = [Document(page_content="Refunds are accepted within 30 days of purchase. Shipping takes 5 business days.")]
retriever = RunnableLambda(lambda question: docs)
prompt = ChatPromptTemplate.from_messages([("system", "Answer only from these documents:\n{context}"),
                                           ("human", "{question}")])
llm = FakeListChatModel(responses=["Refunds are accepted within 90 days. Shipping takes 5 business days."] * 2)
question = "How long is the refund window?"

# 1. The common chain: the documents are bound to the runnable; the output is the answer text itself, with
#    its check attached (.outcome, .passed, .value, .score, .route, .reason, .report).
chain = prompt | llm | GroundwireRunnable(context=docs)
answer = chain.invoke({"context": docs[0].page_content, "question": question})
print(f"{answer}\n  -> {answer.outcome.value}, share supported {answer.value:.2f}")

# 2. The mapping form: retrieve, answer, then assign groundwire's Report next to the answer.
chain = ({"context": retriever, "question": RunnablePassthrough()}
         | RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())
         | RunnablePassthrough.assign(report=GroundwireRunnable()))
report = chain.invoke(question)["report"]
print(f"score {report.score:.2f} -> {report.route.value}")
for claim in report.claims:
    print(f"  {claim.verdict.value:12} {claim.claim.text}")
