"""How cost grows with claims x chunks: exact vs pruned matrix, local vs Ray, with peak memory.

    .venv/bin/python bench/scale.py --scorer lexical
    .venv/bin/python bench/scale.py --scorer bundled --answers 8 --ray-answers 16

Answers of 5x5, 10x20 and 20x50 claims x chunks are generated from fixed templates (seeded; no data
files needed): each chunk is a ~90-word passage about one product with figures and dates, each claim a
sentence taken from a random chunk, half of them with a figure changed.

- local: one process, one Verifier; latency is the median wall time of one verify() call.
- ray:   the batch engine (Ray Data actor pool) on a JSONL file of --ray-answers such answers; "latency"
         is the run's wall time / answers, i.e. throughput with N actors, start-up (actors, model loading)
         included; "first s" is how long the first result took, most of it that start-up. Use enough
         answers for start-up to amortise before reading growth ratios off these rows.
Pairs/s counts the pairs actually scored (fewer when pruned). Peak memory is the largest resident set
of this process plus all its children (Ray's daemons and workers included) sampled every 100 ms during
the run (Linux /proc); "+MB" is that peak minus the resident set when the run started. Prints growth ratios against 5x5; never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

SIZES = ((5, 5), (10, 20), (20, 50))
PRODUCTS = ("Falcon", "Harbor", "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Orchid", "Pioneer", "Quartz")
CITIES = ("Rotterdam", "Lyon", "Porto", "Tallinn", "Ghent", "Malmo", "Graz", "Turin", "Leeds", "Brno")


def chunk_sentences(index: int) -> list[str]:
    product = f"{PRODUCTS[index % 10]} {index // 10 + 1}"
    city = CITIES[(index * 7) % 10]
    return [
        f"The {product} router was released on March {index % 27 + 1}, {2015 + index % 9}.",
        f"It costs ${49 + index * 3} and ships with a {2 + index % 4}-year warranty.",
        f"The {product} is assembled in {city} by a team of {20 + index} engineers.",
        f"Its battery lasts {6 + index % 12} hours under normal use and charges in {1 + index % 3} hours.",
        f"Reviewers praised the {product} for its quiet fan, but noted that setup takes about {10 + index % 20} minutes.",
        f"About {1000 + 137 * index} units were sold in the first year, most of them in Europe.",
    ]


def make_answer(claims: int, chunks: int, seed: int) -> dict:
    rng = random.Random(seed)
    offset = rng.randrange(1000)
    sentences = [chunk_sentences(offset + i) for i in range(chunks)]
    picked = []
    for n in range(claims):
        sentence = rng.choice(rng.choice(sentences))
        if n % 2:  # half the claims carry a changed figure, so not every verdict is SUPPORTED
            sentence = sentence.replace(next(w for w in sentence.split() if any(c.isdigit() for c in w)), "77", 1)
        picked.append(sentence)
    return {"id": f"{claims}x{chunks}-{seed}", "question": None,
            "context": [" ".join(s) for s in sentences], "answer": " ".join(picked)}


def tree_rss_bytes(root: int) -> int:
    """Resident memory of `root` and every descendant, from /proc (Linux)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat_path, statm_path = f"/proc/{entry}/stat", f"/proc/{entry}/statm"
        if not (os.path.exists(stat_path) and os.path.exists(statm_path)):
            continue
        stat = _read(stat_path)
        statm = _read(statm_path)
        if not stat or not statm:
            continue  # the process ended while we looked
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        rss[int(entry)] = int(statm.split()[1]) * page
    members, frontier = {root}, [root]
    while frontier:
        current = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == current and pid not in members:
                members.add(pid)
                frontier.append(pid)
    return sum(rss.get(pid, 0) for pid in members)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:  # a process can exit between listing and reading; it no longer counts
        return ""


@contextmanager
def peak_memory() -> Iterator[Callable[[], tuple[float, float]]]:
    """Samples the process tree's RSS every 100 ms; yields a function giving (peak, peak - start) in MB."""
    start = tree_rss_bytes(os.getpid())
    peak = [start]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.1):
            peak[0] = max(peak[0], tree_rss_bytes(os.getpid()))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield lambda: (peak[0] / 2**20, (peak[0] - start) / 2**20)
    finally:
        stop.set()
        thread.join()


def run_local(scorer: object, pruner: object, answers: list[dict]) -> dict:
    from groundwire.core.verifier import Verifier

    verifier = Verifier(scorer, pruner=pruner)
    verifier.verify(answers[0]["answer"].split(". ")[0], answers[0]["context"][:1])  # warm-up, one pair
    times, pairs, verdicts = [], 0, []
    with peak_memory() as peak:
        for row in answers:
            started = time.perf_counter()
            report = verifier.verify(row["answer"], row["context"])
            times.append(time.perf_counter() - started)
            pairs += (report.meta.pairs_scored or 0)
            verdicts.extend(claim.verdict for claim in report.claims)
        memory = peak()
    return {"latency_s": statistics.median(times), "pairs_per_s": pairs / sum(times), "pairs": pairs / len(answers),
            "peak_mb": memory[0], "added_mb": memory[1], "verdicts": verdicts}


def run_ray(scorer_name: str, pruner_name: str, answers: list[dict], workdir: Path, actors: int) -> dict:
    from groundwire.batch import CheckOptions, run_batch
    from groundwire.batch.engines import EngineOptions
    from groundwire.config import CheckSettings

    source = workdir / f"{answers[0]['id']}-{pruner_name}.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in answers), encoding="utf-8")
    output = workdir / f"{source.stem}.parquet"
    arrivals: list[tuple[float, int]] = []  # (time, rows) of each batch written
    started = time.perf_counter()
    with peak_memory() as peak:
        summary = run_batch(source, output, engine="ray", check=CheckOptions(CheckSettings(scorer=scorer_name, pruner=pruner_name)),
                            engine_options=EngineOptions(batch_size=4, num_actors=actors),
                            on_rows=lambda n: arrivals.append((time.perf_counter(), n)))
        memory = peak()
    import pyarrow.parquet as pq

    reports = [json.loads(r) for r in pq.read_table(output, columns=["report"]).column("report").to_pylist()]
    pairs = sum((r["meta"]["pairs_scored"] or 0) for r in reports)
    assert summary.done == len(answers), summary  # a bench on lost rows would measure nothing
    first_row_s = arrivals[0][0] - started if arrivals else float("nan")
    return {"latency_s": summary.seconds / len(answers), "pairs_per_s": pairs / summary.seconds,
            "pairs": pairs / len(answers), "peak_mb": memory[0], "added_mb": memory[1], "wall_s": summary.seconds,
            "first_row_s": first_row_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--pruner", default="lexical")
    parser.add_argument("--answers", type=int, default=10, help="answers per size, local engine")
    parser.add_argument("--ray-answers", type=int, default=64, help="answers per size, Ray engine (0: skip Ray)")
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()

    from groundwire.pipeline import build_pruner
    from groundwire.scoring import get_scorer

    scorer = get_scorer(args.scorer)
    pruner = build_pruner(args.pruner)
    results: dict[tuple[str, str, str], dict] = {}
    print(f"scorer {scorer.model_id}; pruner {args.pruner}; {os.cpu_count()} CPUs")
    for claims, chunks in SIZES:
        answers = [make_answer(claims, chunks, seed) for seed in range(args.answers)]
        for mode, used in (("exact", None), ("pruned", pruner)):
            results[("local", mode, f"{claims}x{chunks}")] = run_local(scorer, used, answers)
    if args.ray_answers:
        import ray

        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
        ray.init(num_cpus=args.actors, include_dashboard=False, log_to_driver=False)
        with tempfile.TemporaryDirectory() as tmp:
            for claims, chunks in SIZES:
                answers = [make_answer(claims, chunks, 10_000 + seed) for seed in range(args.ray_answers)]
                for mode, name in (("exact", "none"), ("pruned", args.pruner)):
                    results[("ray", mode, f"{claims}x{chunks}")] = run_ray(args.scorer, name, answers, Path(tmp),
                                                                            args.actors)
        ray.shutdown()

    print(f"{'engine':<6} {'matrix':<7} {'size':<6} {'pairs/answer':>12} {'latency ms':>11} {'pairs/s':>9} "
          f"{'peak MB':>8} {'+MB':>6} {'latency x':>10} {'pairs x':>8} {'run s':>6} {'first s':>7}")
    for (engine, mode, size), r in results.items():
        base = results[(engine, mode, "5x5")]
        print(f"{engine:<6} {mode:<7} {size:<6} {r['pairs']:>12.1f} {1000 * r['latency_s']:>11.1f} "
              f"{r['pairs_per_s']:>9.0f} {r['peak_mb']:>8.0f} {r['added_mb']:>6.0f} "
              f"{r['latency_s'] / base['latency_s']:>9.2f}x {r['pairs'] / base['pairs']:>7.2f}x "
              f"{r.get('wall_s', float('nan')):>6.1f} {r.get('first_row_s', float('nan')):>7.1f}")
    for claims, chunks in SIZES:
        exact, pruned = (results[("local", mode, f"{claims}x{chunks}")]["verdicts"] for mode in ("exact", "pruned"))
        same = sum(a == b for a, b in zip(exact, pruned, strict=True))
        print(f"local {claims}x{chunks}: pruned verdicts agree with the exact matrix on {same}/{len(exact)} claims")
    for engine in sorted({k[0] for k in results}):
        big = "20x50"
        exact, pruned = results[(engine, "exact", big)], results[(engine, "pruned", big)]
        print(f"{engine}: at {big} pruning scores {exact['pairs'] / pruned['pairs']:.2f}x fewer pairs and is "
              f"{exact['latency_s'] / pruned['latency_s']:.2f}x faster; exact latency grows "
              f"{exact['latency_s'] / results[(engine, 'exact', '5x5')]['latency_s']:.1f}x from 5x5 to {big} "
              f"for {exact['pairs'] / results[(engine, 'exact', '5x5')]['pairs']:.0f}x the pairs")


if __name__ == "__main__":
    main()
