"""groundwire inside the tools RAG teams already run. One module per framework, each an optional extra:

    deepeval    pip install 'groundwire[deepeval]'    GroundwireFaithfulness (a deepeval BaseMetric)
    ragas       pip install 'groundwire[ragas]'       GroundwireFaithfulness (a ragas SingleTurnMetric)
    llamaindex  pip install 'groundwire[llamaindex]'  GroundwireEvaluator, GroundedQueryEngine
    langchain   pip install 'groundwire[langchain]'   GroundwireRunnable
    haystack    pip install 'groundwire[haystack]'    GroundwireFaithfulnessEvaluator (a @component)

None calls an LLM: the check is groundwire's own, offline.
"""
