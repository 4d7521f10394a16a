"""The semantic cache's guard on labelled question pairs: wrong hits per kind, and hits on rewordings.

    .venv/bin/python bench/cache_pairs.py                    # the default threshold, the core guard and spaCy's
    .venv/bin/python bench/cache_pairs.py --threshold 0.95   # another threshold
    .venv/bin/python bench/cache_pairs.py --failures         # also list each pair decided the wrong way

Each pair of tests/fixtures/cache_pairs.jsonl is tried in both directions: one question is stored in a fresh
cache, the other is asked. A pair labelled `same` should hit (a rewording); any other pair served the stored
answer is a wrong hit (another question's answer). The embedder is the cache's own (all-MiniLM-L6-v2, int8 ONNX).
Rows: per kind, the tuning split (pairs the guard was developed on) and the validation split (every third pair of
each kind, written with the others before any tuning and held out). "core" is the guard without spaCy; "parse"
adds spaCy's dependency parse (the [entities] extra). Target (issue 47): 0 wrong hits on role and value swaps and
on opposites, >= 75% hits on plain rewordings (every kind but `reordered`).
"""

from __future__ import annotations

import argparse
import inspect
import json
from collections import defaultdict
from pathlib import Path

from groundwire.data.cache import DEFAULT_THRESHOLD, SemanticCache
from groundwire.scoring.embedder import default_embedder

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cache_pairs.jsonl"
PLAIN = ("contraction", "modal", "abbreviation", "number", "adverb")


def served(embedder, stored: str, asked: str, *, threshold: float, parse: bool | None) -> bool:
    options = {"parse": parse} if "parse" in inspect.signature(SemanticCache).parameters else {}
    cache = SemanticCache(embedder, threshold=threshold, **options)
    cache.put(stored, "stored answer", scope="bench", doc_version=1)
    return cache.get(asked, scope="bench", doc_version=1) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--guards", default="core,parse", help="core (no spaCy), parse (spaCy's dependency parse)")
    parser.add_argument("--failures", choices=("tuning", "validation", "all"), default=None,
                        help="also list each pair of this split decided the wrong way, with its cosine")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    embedder = default_embedder()
    kinds = list(dict.fromkeys(pair["kind"] for pair in pairs))
    print(f"{len(pairs)} pairs ({len(pairs) * 2} directions), threshold {args.threshold}")
    print("kinds: " + ", ".join(f"{k} {sum(p['kind'] == k for p in pairs)}" for k in kinds))
    for guard in args.guards.split(","):
        parse = {"core": False, "parse": True}[guard]
        # kind -> split -> [wrong decisions, directions]
        table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        failures = []
        for pair in pairs:
            for stored, asked in ((pair["a"], pair["b"]), (pair["b"], pair["a"])):
                hit = served(embedder, stored, asked, threshold=args.threshold, parse=parse)
                wrong = hit != pair["same"]
                for split in (pair["split"], "all"):
                    cell = table[pair["kind"]][split]
                    cell[0] += wrong
                    cell[1] += 1
                if wrong and args.failures in (pair["split"], "all"):
                    first, second = embedder.embed([stored, asked])
                    failures.append(f"  {pair['id']} ({'missed' if pair['same'] else 'served'}, cosine "
                                    f"{float(first @ second):.3f}): {stored!r} -> {asked!r}")
        print(f"\n{guard} guard: per kind, wrong-hit rate (must miss) or hit rate (rewordings); tuning | validation | all")
        for label, members, same in (("must miss", [k for k in kinds if k not in (*PLAIN, "reordered")], False),
                                     ("rewordings", [*PLAIN, "reordered"], True)):
            print(f"  {label}:")
            rows = [(k, table[k]) for k in members if k in table]
            rows.append(("plain rewordings" if same else "all must-miss", _total([table[k] for k in members
                                                                                  if k in table and k != "reordered"])))
            for kind, cells in rows:
                print(f"    {kind:18}" + " | ".join(_rate(cells[s], same) for s in ("tuning", "validation", "all")))
        if args.failures:
            print("\n".join(failures))


def _total(tables: list[dict[str, list[int]]]) -> dict[str, list[int]]:
    total: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cells in tables:
        for split, (wrong, n) in cells.items():
            total[split][0] += wrong
            total[split][1] += n
    return total


def _rate(cell: list[int], same: bool) -> str:
    wrong, n = cell
    good = n - wrong if same else wrong  # hits for rewordings, wrong hits otherwise
    return f"{good:3d}/{n:3d} {good / n:6.1%}" if n else "    -    "


if __name__ == "__main__":
    main()
