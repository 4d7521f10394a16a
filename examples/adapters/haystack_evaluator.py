"""groundwire as a Haystack evaluator component, offline: python examples/adapters/haystack_evaluator.py
(pip install 'groundwire[haystack]'; HAYSTACK_TELEMETRY_ENABLED=False keeps Haystack's telemetry off)."""

from haystack import Pipeline

from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

pipeline = Pipeline()
pipeline.add_component("faithfulness", GroundwireFaithfulnessEvaluator())
context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."]
# Three answers, one per outcome: pass (what the context says), review (a faithful paraphrase the bundled model is
# unsure of: shipped thresholds escalate doubt to a judge or a person, and a domain profile from `groundwire adapt`
# narrows that band for your own answers), fail (an invented "90 days").
out = pipeline.run({"faithfulness": {
    "questions": ["How long is the refund window?"] * 3,
    "contexts": [context] * 3,
    "predicted_answers": ["Refunds are accepted within 30 days.",
                          "You can get a refund within 30 days of purchase.",
                          "Refunds are accepted within 90 days. Shipping takes 5 business days."],
}})["faithfulness"]
print(f"mean score {out['score']:.2f}, per answer {[round(s, 2) for s in out['individual_scores']]}, "
      f"outcomes {out['outcomes']}")
print(out["results"][2]["statements"], out["results"][2]["statement_scores"])
# Saved and loaded pipelines keep every setting; Haystack asks you to trust the module when loading:
# Pipeline.loads(pipeline.dumps(), allowed_modules=["groundwire.adapters.haystack"])
