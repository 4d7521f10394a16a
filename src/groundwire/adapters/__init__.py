"""groundwire inside the tools RAG teams already run. One module per framework, each an optional extra:

    deepeval    pip install 'groundwire[deepeval]'    GroundwireFaithfulness (a deepeval BaseMetric)
    ragas       pip install 'groundwire[ragas]'       GroundwireFaithfulness (collections interface, and for
                                                      ragas.evaluate), GroundwireOutcome (pass / fail / review)
    llamaindex  pip install 'groundwire[llamaindex]'  GroundwireEvaluator, GroundedQueryEngine
    langchain   pip install 'groundwire[langchain]'   GroundwireRunnable (prompt | llm | GroundwireRunnable(context=docs))
    haystack    pip install 'groundwire[haystack]'    GroundwireFaithfulnessEvaluator (a @component)
    trulens     pip install 'groundwire[trulens]'     GroundwireProvider (.groundedness, .passed: TruLens metrics)
    mlflow      pip install 'groundwire[mlflow]'      GroundwireFaithfulness, GroundwireOutcome (mlflow.genai scorers)
    phoenix     pip install 'groundwire[phoenix]'     log_evaluations (verify_many's results as span annotations)
    langfuse    pip install 'groundwire[langfuse]'    check_and_score, log_scores (Langfuse scores)

None calls an LLM: the check is groundwire's own, offline. All follow one rule (common.py, docs/adapters.md;
docs/observability.md for the last four): the metric value is the share of supported claims by default
(metric="score": the answer score), under a name that says which; pass / fail / review = groundwire's routing;
the thresholds are accept_at / reject_at.
"""
