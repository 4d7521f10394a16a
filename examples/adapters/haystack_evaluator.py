"""groundwire as a Haystack evaluator component, offline: python examples/adapters/haystack_evaluator.py
(pip install 'groundwire[haystack]'; HAYSTACK_TELEMETRY_ENABLED=False keeps Haystack's telemetry off)."""

from haystack import Pipeline

from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

pipeline = Pipeline()
pipeline.add_component("faithfulness", GroundwireFaithfulnessEvaluator())
context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."]
out = pipeline.run({"faithfulness": {
    "questions": ["How long is the refund window?"] * 2,
    "contexts": [context, context],
    "predicted_answers": ["You can get a refund within 30 days of purchase.",
                          "Refunds are accepted within 90 days. Shipping takes 5 business days."],
}})["faithfulness"]
print(f"mean score {out['score']:.2f}, per answer {[round(s, 2) for s in out['individual_scores']]}, "
      f"outcomes {out['outcomes']}")
print(out["results"][1]["statements"], out["results"][1]["statement_scores"])
# Saved and loaded pipelines keep every setting; Haystack asks you to trust the module when loading:
# Pipeline.loads(pipeline.dumps(), allowed_modules=["groundwire.adapters.haystack"])
