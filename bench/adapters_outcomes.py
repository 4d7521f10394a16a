"""Pass / fail per framework on the same three answers, through each real framework (offline, no LLM).

    .venv/bin/python bench/adapters_outcomes.py                    # the bundled model and the lexical scorer
    .venv/bin/python bench/adapters_outcomes.py --scorer lexical

The answers (issue 22): faithful, fabricated (a figure the context contradicts), and unsupported but plausible
(the context gives the hours but no time zone). Each row shows what the framework itself reports: its
score and its pass field (DeepEval `success`, LlamaIndex `passing`, Haystack `results[i]["passed"]`, LangChain
`GroundedAnswer.passed`, RAGAS's discrete `GroundwireOutcome`), and the outcome of the adapters' one rule
(docs/adapters.md). The last line per scorer says whether all five agree on every answer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable

# Telemetry off before any framework is imported (their documented switches).
os.environ.update({"DEEPEVAL_TELEMETRY_OPT_OUT": "1", "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
                   "DEEPEVAL_DISABLE_DOTENV": "1", "RAGAS_DO_NOT_TRACK": "true",
                   "HAYSTACK_TELEMETRY_ENABLED": "False", "LANGCHAIN_TRACING_V2": "false",
                   "LANGSMITH_TRACING": "false", "HF_HUB_OFFLINE": "1"})

from groundwire.config import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.pipeline import build_verifier

CONTEXT = "Our support team is available Monday to Friday, 9am to 5pm. Refunds are accepted within 30 days of purchase."
QUESTION = "When is support open, and how long is the refund window?"
ANSWERS = {
    "faithful": "Support is available Monday to Friday, 9am to 5pm.",
    "fabricated": "Refunds are accepted within 90 days of purchase.",
    "plausible": "Support is open on weekdays from 9am to 5pm CET.",
}
Row = tuple[float, object, str]  # score, the framework's own pass field, outcome


def deepeval(verifier: Verifier, answer: str) -> Row:
    from deepeval.test_case import LLMTestCase

    from groundwire.adapters.deepeval import GroundwireFaithfulness

    metric = GroundwireFaithfulness(verifier=verifier)
    metric.measure(LLMTestCase(input=QUESTION, actual_output=answer, retrieval_context=[CONTEXT]))
    return metric.score, f"success={metric.is_successful()}", metric.outcome.value


def ragas(verifier: Verifier, answer: str) -> Row:
    from groundwire.adapters.ragas import GroundwireFaithfulness, GroundwireOutcome

    inputs = {"user_input": QUESTION, "response": answer, "retrieved_contexts": [CONTEXT]}
    score = asyncio.run(GroundwireFaithfulness(verifier=verifier).ascore(**inputs))
    outcome = asyncio.run(GroundwireOutcome(verifier=verifier).ascore(**inputs))
    return score.value, f"outcome={outcome.value!r}", outcome.value


def llamaindex(verifier: Verifier, answer: str) -> Row:
    from groundwire.adapters.llamaindex import GroundwireEvaluator

    result = GroundwireEvaluator(verifier=verifier).evaluate(query=QUESTION, contexts=[CONTEXT], response=answer)
    return result.score, f"passing={result.passing}", result.outcome


def langchain(verifier: Verifier, answer: str) -> Row:
    from langchain_core.documents import Document

    from groundwire.adapters.langchain import GroundwireRunnable

    grounded = GroundwireRunnable(context=[Document(page_content=CONTEXT)], verifier=verifier).invoke(answer)
    return grounded.value, f"passed={grounded.passed}", grounded.outcome.value


def haystack(verifier: Verifier, answer: str) -> Row:
    from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

    out = GroundwireFaithfulnessEvaluator(verifier=verifier).run(questions=[QUESTION], contexts=[[CONTEXT]],
                                                                 predicted_answers=[answer])
    return out["individual_scores"][0], f"passed={out['results'][0]['passed']}", out["outcomes"][0]


FRAMEWORKS: dict[str, Callable[[Verifier, str], Row]] = {
    "DeepEval": deepeval, "RAGAS": ragas, "LlamaIndex": llamaindex, "LangChain": langchain, "Haystack": haystack}


def table(scorer: str) -> bool:
    verifier = build_verifier(CheckSettings(scorer=None if scorer == "bundled" else scorer))
    print(f"\nscorer {scorer} ({verifier.model_id}), accept_at {verifier.accept_at:.2f}, "
          f"reject_at {verifier.reject_at:.2f}; each framework's value: the share of supported claims "
          '(metric="supported_share")')
    print(f"{'answer':11} {'route':9} {'score':>5} | " + " | ".join(f"{name:27}" for name in FRAMEWORKS))
    agree = True
    for label, answer in ANSWERS.items():
        report = verifier.verify(answer, [CONTEXT], question=QUESTION)
        cells, outcomes = [], set()
        for run in FRAMEWORKS.values():
            score, native, outcome = run(verifier, answer)
            outcomes.add(outcome)
            cells.append(f"{outcome:6} {score:4.2f} {native:16}")
        agree = agree and len(outcomes) == 1
        print(f"{label:11} {report.route.value:9} {report.score:5.2f} | " + " | ".join(cells))
    print(f"all five agree on every answer: {agree}")
    return agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", action="append", choices=["bundled", "lexical"],
                        help="repeat for several (default: bundled and lexical)")
    scorers = parser.parse_args().scorer or ["bundled", "lexical"]
    agreed = [table(scorer) for scorer in scorers]  # every table printed, then the verdict
    return 0 if all(agreed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
