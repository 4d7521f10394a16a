"""The check itself: claims, deterministic checks, windows, the verifier and its combiner. No I/O, no LLM."""
