"""groundwire at the end of an LCEL chain, offline: python examples/adapters/langchain_runnable.py
(pip install 'groundwire[langchain]'). The retriever and the LLM are stand-ins; put your own there."""

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from groundwire.adapters.langchain import GroundwireRunnable

retriever = RunnableLambda(lambda question: [Document(
    page_content="Refunds are accepted within 30 days of purchase. Shipping takes 5 business days.")])
llm = RunnableLambda(lambda inputs: "Refunds are accepted within 90 days. Shipping takes 5 business days.")
chain = ({"context": retriever, "question": RunnablePassthrough()}
         | RunnablePassthrough.assign(answer=llm)
         | GroundwireRunnable())
report = chain.invoke("How long is the refund window?")
print(f"score {report.score:.2f} -> {report.decision.value}")
for claim in report.claims:
    print(f"  {claim.verdict.value:12} {claim.claim.text}")
