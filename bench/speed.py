"""Speed and memory: the bundled int8 ONNX verifier against the same model in fp32 torch, and the cascade.

    .venv/bin/python bench/speed.py --torch-model runs/v1/final
    .venv/bin/python bench/speed.py --cascade ~/gw-runs/mpnet-v3/bundle    # + the two-stage cascade (issue 19)
    .venv/bin/python bench/speed.py --as-written     # + figures read as written: the cost of canonical figures
    .venv/bin/python bench/speed.py --meaning        # + the meaning layer on and off: its cost (issue 33)
    .venv/bin/python bench/speed.py --profile        # + where a 5x5 check's time goes, and the model's per op
    .venv/bin/python bench/speed.py --form fp32      # the bundled model's fp32 form (default: chosen for this CPU)

Measures, each backend in its own subprocess (so peak memory is its own):
  - pairs per second over 25 distinct (window, claim) pairs (a pair met twice in one call runs once, so repeating
    them would count pairs that never ran), best of 3 calls;
  - p50 / p95 wall time of one verify() call: 5 claims against 5 chunks of about 120 words, beside the pairs and
    tokens the model runs in it and the seconds per 1,000 of those tokens (the counts do not depend on the CPU);
  - peak resident memory (MB).
Prints ratios (int8 ONNX vs fp32 torch), never asserts a time. The last line is a one-line summary.

With --cascade, a third subprocess checks, through `[verify] cascade`, an answer of paraphrases the small model
escalates (ESCALATED_ANSWER), so each check pays for both models: its p50 / p95 and the peak memory with both
loaded. It prints how many of the timed checks really reached the second stage.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from groundwire.scoring.forms import FORM_NAMES

TOPICS = ("refund", "shipping", "warranty", "membership", "support")


def chunks() -> list[str]:
    """Five ~120-word passages with figures, names and dates, like a retrieved policy page."""
    out = []
    for i, topic in enumerate(TOPICS):
        sentences = [
            f"The {topic} policy of Northwind Traders was last revised on March {i + 3}, 2024.",
            f"Customers can request a {topic} review within {14 + i * 7} days of delivery by contacting the help desk.",
            f"Requests are handled by the {topic} team in Rotterdam, which answers most emails within {2 + i} business days.",
            f"A fee of ${5 + i}.50 applies when the request is made by phone rather than online.",
            f"Premium members are exempt from the fee and get priority handling for every {topic} request.",
            f"The team does not process {topic} requests on public holidays or on Sundays.",
            "Orders placed through third-party marketplaces follow the marketplace's own rules instead.",
            f"In 2023 the company handled about {1200 + 300 * i} such requests, most of them resolved on first contact.",
        ]
        out.append(" ".join(sentences))
    return out


ANSWER = (
    "Customers can ask for a refund review within 14 days of delivery. "
    "The shipping team in Rotterdam answers most emails within 3 business days. "
    "A fee of $7.50 applies to warranty requests made by phone. "
    "Premium members pay no fee and get priority handling. "
    "Support requests are processed on Sundays as well."
)


ESCALATED_ANSWER = (
    "A refund review can be requested up to 14 days after delivery. "
    "Shipping requests are handled by a team based in Rotterdam. "
    "Asking for a warranty review by phone costs $7.50. "
    "Members with a premium plan do not pay the fee. "
    "Support requests are not processed on public holidays."
)
"""Every claim is in the chunks, reworded: the kind of answer the small model leaves in its escalation band."""


def pairs() -> list[tuple[str, str]]:
    """25 distinct (chunk, claim) pairs."""
    claims = [s.strip() for s in ANSWER.split(". ") if s.strip()]
    return [(c, h) for c in chunks() for h in claims]


class RunCounter:
    """Counts the pairs and tokens a scorer's model runs (each distinct pair of a call once), where the scorer
    can say (the ONNX scorer's `run_size`)."""

    def __init__(self, scorer) -> None:
        self.pairs = self.tokens = 0
        self._measure = getattr(scorer, "run_size", None)
        self._score = scorer.score
        scorer.score = self  # the verifier calls scorer.score: this instance attribute comes first

    def __call__(self, batch):
        if self._measure is not None:
            pairs, tokens = self._measure(batch)
            self.pairs, self.tokens = self.pairs + pairs, self.tokens + tokens
        return self._score(batch)


STAGES = (
    ("model runs", ("onnxruntime", "<method 'acquire'", "<method 'run' of")),
    ("tokenising", ("tokenizers", "<method 'encode_batch'", "<method 'post_process'")),
    ("checks", ("core/checks/", "core/claim_state.py", "core/lexicon.py")),
    ("figures", ("core/figures.py", "core/units.py")),
    ("claims, windows, plan", ("core/claims.py", "core/windows.py", "core/plan.py", "foundation/textutil.py", "pysbd")),
    ("scores to verdicts", ("core/verdicts.py", "scoring/combiner.py", "core/verifier.py", "scoring/onnx.py")),
)
"""Where a check's time goes, by the code that spends it (cProfile's own time per function, main thread)."""


def profile(verifier, scorer, repeats: int) -> dict:
    """Shares of one 5x5 check's time by stage, and the model's time by ONNX operator (onnxruntime's profiler)."""
    import collections
    import cProfile
    import pstats
    import tempfile

    import onnxruntime as ort

    verifier.verify(ANSWER, chunks())
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeats):
        verifier.verify(ANSWER, chunks())
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    stages: dict[str, float] = collections.Counter()
    for (path, _, function), (_, _, own, _, _) in stats.items():
        where = f"{path}:{function}"
        stage = next((name for name, marks in STAGES if any(mark in where for mark in marks)), "other python")
        stages[stage] += own
    total = sum(stages.values())
    ops: dict[str, float] = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = f"{tmp}/ort"
        options.intra_op_num_threads = 1
        model = scorer.bundle / scorer.config.get("forms", {}).get(scorer.form, {}).get("model_file", "model.onnx")
        for key, value in scorer.config.get("forms", {}).get(scorer.form, {}).get("session_config", {}).items():
            options.add_session_config_entry(key, value)
        scorer.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        scorer.score(pairs())
        for event in json.loads(Path(scorer.session.end_profiling()).read_text()):
            if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                ops[event["args"]["op_name"]] += event["dur"]
    op_total = sum(ops.values())
    return {"seconds_per_check": total / repeats,
            "stages": {name: own / total for name, own in sorted(stages.items(), key=lambda kv: -kv[1])},
            "ops": {name: us / op_total for name, us in sorted(ops.items(), key=lambda kv: -kv[1])[:10]}}


def run_backend(backend: str, torch_model: str | None, repeats: int, bundle: str | None = None,
                form: str = "auto") -> dict:
    import numpy as np

    from groundwire.config import CheckSettings
    from groundwire.pipeline import build_verifier

    answer = ANSWER
    if backend == "cascade":
        from groundwire.scoring.onnx import OnnxScorer

        verifier = build_verifier(CheckSettings(cascade=f"onnx:{bundle}"))
        answer = ESCALATED_ANSWER
        assert verifier.escalate_to is not None and isinstance(verifier.escalate_to.scorer, OnnxScorer)
        scorer = verifier.escalate_to.scorer
    elif backend in ("int8", "int8-as-written", "int8-meaning", "int8-plain", "profile"):
        from groundwire.scoring.onnx import OnnxScorer, bundled_path

        scorer = OnnxScorer(bundle or bundled_path(), form=form)
    else:
        from groundwire.scoring.hf import HFClassifierScorer

        scorer = HFClassifierScorer(torch_model, batch_size=32)
        scorer.max_tokens = 256  # the same windows as the bundled model
    if backend != "cascade":
        meaning = {"int8-meaning": True, "int8-plain": False}.get(backend)  # None: as the bundle was calibrated
        settings = CheckSettings(canonical_figures=backend != "int8-as-written", meaning=meaning)
        verifier = build_verifier(settings, scorer=scorer)
    if backend == "profile":
        return profile(verifier, scorer, repeats)
    batch = pairs()
    scorer.score(batch[:8])  # warm up
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        scorer.score(batch)
        best = min(best, time.perf_counter() - started)
    pairs_per_s = len(set(batch)) / best
    verifier.verify(answer, chunks())
    counter = RunCounter(scorer)
    verifier.verify(answer, chunks())  # counted once: every check of the same answer runs the same pairs
    pairs_run, tokens_run = counter.pairs, counter.tokens
    times, two_stage = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        report = verifier.verify(answer, chunks())
        times.append(time.perf_counter() - started)
        two_stage += len(report.meta.cascade or ()) > 1
    p50 = float(np.percentile(times, 50))
    return {"backend": backend, "form": getattr(scorer, "form", "-"), "pairs_per_s": pairs_per_s, "p50_s": p50,
            "p95_s": float(np.percentile(times, 95)), "claims": len(report.claims),
            "pairs_per_verify": report.meta.pairs_scored, "pairs_run": pairs_run, "tokens_run": tokens_run,
            "s_per_1k_tokens": 1000 * p50 / tokens_run if tokens_run else None,
            "reached_stage_2": f"{two_stage}/{repeats}",
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-model", default="runs/v1/final", help="the fp32 transformers checkpoint")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--bundle", default=None, help="an ONNX bundle (default: the shipped one)")
    parser.add_argument("--cascade", default=None, help="the second stage's ONNX bundle: also time the cascade")
    parser.add_argument("--as-written", action="store_true",
                        help="also time the int8 model with figures read as written (canonical_figures off)")
    parser.add_argument("--meaning", action="store_true",
                        help="also time the int8 model with the meaning layer on and off (core.meaning): its cost")
    parser.add_argument("--profile", action="store_true",
                        help="also print where a 5x5 check's time goes, and the model's time per ONNX operator")
    parser.add_argument("--form", choices=FORM_NAMES, default="auto",
                        help="the bundled model's form (auto: as chosen for this CPU, scoring/forms.py)")
    parser.add_argument("--backend", choices=("int8", "int8-as-written", "int8-meaning", "int8-plain", "torch", "cascade",
                                              "profile"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend:
        print(json.dumps(run_backend(args.backend, args.torch_model, args.repeats, args.bundle, args.form)))
        return
    results = {}
    backends = ["int8"] + (["torch"] if Path(args.torch_model, "config.json").is_file() else [])
    extra = (["int8-as-written"] if args.as_written else []) + (["int8-plain", "int8-meaning"] if args.meaning else [])
    for backend in backends + extra + (["cascade"] if args.cascade else []):
        bundle = args.cascade if backend == "cascade" else args.bundle
        proc = subprocess.run([sys.executable, __file__, "--backend", backend, "--torch-model", args.torch_model,
                               "--repeats", str(args.repeats), "--form", args.form]
                              + (["--bundle", bundle] if bundle else []),
                              capture_output=True, text=True, check=True)
        results[backend] = json.loads(proc.stdout.strip().splitlines()[-1])
        r = results[backend]
        per_1k = f"{r['s_per_1k_tokens']:.3f}s" if r["s_per_1k_tokens"] is not None else "-"
        print(f"{backend:15s} form={r['form']} pairs/s={r['pairs_per_s']:.1f} verify_5x5 p50={r['p50_s']:.3f}s "
              f"(pairs_run={r['pairs_run']} tokens_run={r['tokens_run']} per_1k_tokens={per_1k}) "
              f"p95={r['p95_s']:.3f}s claims={r['claims']} pairs={r['pairs_per_verify']} peak_rss={r['peak_rss_mb']:.0f}MB"
              + (f" reached_stage_2={r['reached_stage_2']} (pairs/s: the second stage's model)"
                 if backend == "cascade" else ""))
    q = results["int8"]
    line = (f"speed: int8 pairs_per_s={q['pairs_per_s']:.1f} verify_5x5_p50_s={q['p50_s']:.3f} "
            f"pairs_run={q['pairs_run']} tokens_run={q['tokens_run']} s_per_1k_tokens={q['s_per_1k_tokens']:.3f} "
            f"p95_s={q['p95_s']:.3f} rss_mb={q['peak_rss_mb']:.0f}")
    if "torch" in results:
        t, q = results["torch"], results["int8"]
        line += (f"; int8/fp32-torch ratios: throughput x{q['pairs_per_s'] / t['pairs_per_s']:.2f}, "
                 f"p50 latency x{q['p50_s'] / t['p50_s']:.2f}, memory x{q['peak_rss_mb'] / t['peak_rss_mb']:.2f}")
    if "int8-as-written" in results:
        w, q = results["int8-as-written"], results["int8"]
        line += (f"; canonical figures cost: p50 x{q['p50_s'] / w['p50_s']:.3f}, p95 x{q['p95_s'] / w['p95_s']:.3f} "
                 "the as-written check's")
    if "int8-meaning" in results:
        m, p = results["int8-meaning"], results["int8-plain"]
        line += (f"; meaning layer cost: p50 x{m['p50_s'] / p['p50_s']:.2f} ({p['p50_s']:.3f}s -> {m['p50_s']:.3f}s), "
                 f"p95 x{m['p95_s'] / p['p95_s']:.2f}, peak rss {p['peak_rss_mb']:.0f} -> {m['peak_rss_mb']:.0f} MB")
    if "cascade" in results:
        c, q = results["cascade"], results["int8"]
        line += (f"; cascade p50_s={c['p50_s']:.3f} p95_s={c['p95_s']:.3f} rss_mb={c['peak_rss_mb']:.0f} "
                 f"(x{c['p50_s'] / q['p50_s']:.2f} the small model's p50, x{c['peak_rss_mb'] / q['peak_rss_mb']:.2f} "
                 f"its memory; {c['reached_stage_2']} checks reached stage 2)")
    if args.profile:
        proc = subprocess.run([sys.executable, __file__, "--backend", "profile", "--repeats", str(args.repeats),
                               "--form", args.form] + (["--bundle", args.bundle] if args.bundle else []),
                              capture_output=True, text=True, check=True)
        shares = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"profile of one 5x5 check ({shares['seconds_per_check']:.3f} s in the profiler):")
        for name, share in shares["stages"].items():
            print(f"  {name:24s} {share:6.1%}")
        print("the model's time by ONNX operator (one thread):")
        for name, share in shares["ops"].items():
            print(f"  {name:24s} {share:6.1%}")
        line += f"; model runs {shares['stages'].get('model runs', 0.0):.0%} of a check"
    print(line)


if __name__ == "__main__":
    main()
