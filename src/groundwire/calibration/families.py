"""Dataset families: the unit a figure must generalise across.

Leave-one-dataset-out (LODO) holds out one family at a time. RAGTruth's three tasks are separate families (a
business record, a news summary and a web-search answer fail in different ways); the three BEGIN files are
one (the same benchmark over three dialogue corpora).
"""

from __future__ import annotations

_BY_FILE = {
    "halueval_qa_dev": "halueval",
    "wice_dev": "wice",
    "summedits_eval": "summedits",
    "begin_cmu_dev": "begin",
    "begin_tc_dev": "begin",
    "begin_wow_dev": "begin",
    "lfqa_verification_dev": "lfqa",
    "expertqa_dev": "expertqa",
    "hagrid_dev": "hagrid",
}


EVALUATION_ONLY: frozenset[str] = frozenset({"lfqa"})
"""Families whose licence allows evaluation only (LFQA-Verification has no licence file; its README asks for
research evaluation use): they are scored, never fitted on, not even as another family's training rows."""


def family(file: str, task: str) -> str:
    """The family of a dev file's answer: "ragtruth/<task>" for RAGTruth, else the benchmark's name (an
    unknown file is its own family)."""
    if file.startswith("ragtruth"):
        return f"ragtruth/{task}"
    return _BY_FILE.get(file, file)
