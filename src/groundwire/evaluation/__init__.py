"""Measuring a verifier: metrics, evaluation on labelled files, and the eval loop over the request log."""
