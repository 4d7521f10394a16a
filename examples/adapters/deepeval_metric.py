"""groundwire as a DeepEval metric, offline: python examples/adapters/deepeval_metric.py
(pip install 'groundwire[deepeval]'; DEEPEVAL_TELEMETRY_OPT_OUT=1 keeps DeepEval's telemetry off)."""

from deepeval.test_case import LLMTestCase

from groundwire.adapters.deepeval import GroundwireFaithfulness

context = ["Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."]
case = LLMTestCase(input="How long is the refund window?",
                   actual_output="Refunds are accepted within 90 days. Shipping takes 5 business days.",
                   retrieval_context=context)
metric = GroundwireFaithfulness()  # score: share of supported claims; passing: groundwire accepts the answer
metric.measure(case)
print(f"score {metric.score:.2f}, outcome {metric.outcome.value}, passed {metric.is_successful()}")
print(metric.reason)
# In a test file: deepeval.assert_test(case, [GroundwireFaithfulness()])
