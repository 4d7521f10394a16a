"""groundwire in LlamaIndex, offline: python examples/adapters/llamaindex_evaluator.py
(pip install 'groundwire[llamaindex]')."""

from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from groundwire.adapters.llamaindex import GroundwireEvaluator, ground_response

context = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
answer = "Refunds are accepted within 90 days. Shipping takes 5 business days."
result = GroundwireEvaluator().evaluate(query="How long is the refund window?", contexts=[context], response=answer)
print(f"passing {result.passing}, outcome {result.outcome}, score {result.score:.2f}\n{result.feedback}")

# GroundedQueryEngine(your_query_engine) checks each answer against its own source nodes, as ground_response
# does here for one Response: the unsupported claim is dropped (or, below half surviving, the answer abstains).
response = Response(response=answer, source_nodes=[NodeWithScore(node=TextNode(text=context), score=1.0)])
print("repaired:", ground_response(response, "How long is the refund window?").response)
