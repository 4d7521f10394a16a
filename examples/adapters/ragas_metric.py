"""groundwire as RAGAS metrics, offline: python examples/adapters/ragas_metric.py
(pip install 'groundwire[ragas]'; RAGAS_DO_NOT_TRACK=true keeps RAGAS's analytics off).

RAGAS 0.4's metrics interface, as ragas.metrics.collections.Faithfulness has it: `await metric.ascore(...)`, what an
`@experiment` function calls (docs/adapters.md has one over a ragas Dataset). `ragas.evaluate(dataset,
metrics=[GroundwireFaithfulness()])` works too, but RAGAS marks evaluate() deprecated.
"""

import asyncio

from groundwire.adapters.ragas import GroundwireFaithfulness, GroundwireOutcome

context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."]
# Three answers, one per outcome: pass (what the context says), review (a faithful paraphrase the bundled model is
# unsure of: shipped thresholds escalate doubt to a judge or a person, and a domain profile from `groundwire adapt`
# narrows that band for your own answers), fail (an invented "90 days").
rows = [
    {"user_input": "How long is the refund window?", "retrieved_contexts": context,
     "response": "Refunds are accepted within 30 days."},
    {"user_input": "How long is the refund window?", "retrieved_contexts": context,
     "response": "You can get a refund within 30 days of purchase."},
    {"user_input": "How long is the refund window?", "retrieved_contexts": context,
     "response": "Refunds are accepted within 90 days. Shipping takes 5 business days."},
]


async def main() -> None:
    faithfulness, outcome = GroundwireFaithfulness(), GroundwireOutcome()  # share of supported claims; pass/fail
    for row in rows:
        score = await faithfulness.ascore(**row)
        verdict = await outcome.ascore(**row)
        print(f"{faithfulness.name} {score.value:.2f}, groundwire_outcome {verdict.value}: {row['response']}")
    print(score.reason)


asyncio.run(main())
