"""groundwire as a RAGAS metric, offline: python examples/adapters/ragas_metric.py
(pip install 'groundwire[ragas]'; RAGAS_DO_NOT_TRACK=true keeps RAGAS's analytics off)."""

from ragas import EvaluationDataset, evaluate

from groundwire.adapters.ragas import GroundwireFaithfulness

context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."]
dataset = EvaluationDataset.from_list([
    {"user_input": "How long is the refund window?", "retrieved_contexts": context,
     "response": "You can get a refund within 30 days of purchase."},
    {"user_input": "How long is the refund window?", "retrieved_contexts": context,
     "response": "Refunds are accepted within 90 days. Shipping takes 5 business days."},
])
# score="share" is the share of supported claims: RAGAS's own definition of faithfulness.
result = evaluate(dataset, metrics=[GroundwireFaithfulness(),
                                    GroundwireFaithfulness(name="groundwire_share", score="share")],
                  show_progress=False)
print(result.to_pandas()[["response", "groundwire_faithfulness", "groundwire_share"]].to_string())
