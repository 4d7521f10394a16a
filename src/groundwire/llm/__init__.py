"""The LLM tier: the OpenAI-compatible client, the judge, repair, grounded generation and their prompts."""
