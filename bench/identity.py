"""Reports before and after a refactor: every dev answer checked, each report's digest, and the rows that differ.

    .venv/bin/python bench/identity.py --out /tmp/before.jsonl                      # this tree, lexical + bundled
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/identity.py --out /tmp/other.jsonl
    .venv/bin/python bench/identity.py --compare /tmp/before.jsonl /tmp/after.jsonl  # exit 1 when any differs
    .venv/bin/python bench/identity.py --legacy-names --out /tmp/after.jsonl       # vs a snapshot before the rename

The first --limit rows of every ../shared/data/dev file go through `pipeline.check` (the one path a check takes)
with each scorer named in --scorers ("default": the bundled model). A report is compared as JSON with its
`timings` removed (the only field that depends on the clock); its SHA-256 is written, with the row's id, file and
scorer, one line a report. --compare prints, per file and scorer, how many reports are identical and the first
few that are not. A refactor that says "behaviour unchanged" shows 0 differences here. --legacy-names writes each
report under the names it had before the typed report (`decision` for `route`, the `extra` dict for `meta`, as
`foundation.types.legacy_extra` gives it), so that a snapshot taken before that rename compares field for field.
--dev names the folder of dev files (by default the nearest shared/data/dev above the checkout: bench/shared_data.py).
Each line also keeps the report's route and its claims' verdicts, so --compare says how many of the differing
reports changed their decision (route) and how many claims changed their verdict, not only that something did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from shared_data import DEV

if TYPE_CHECKING:
    from groundwire.foundation.types import Report



def legacy_names(report: Report) -> dict[str, object]:
    """The report's JSON as it was written before `Report.route` and `Report.meta` (CHANGELOG.md)."""
    from groundwire.foundation.types import legacy_extra

    data = report.to_dict()
    data["decision"] = data.pop("route")
    del data["meta"]
    return data | {"extra": legacy_extra(report.meta)}


def report_digest(report: dict[str, object]) -> str:
    stable = {key: value for key, value in report.items() if key != "timings"}
    return hashlib.sha256(json.dumps(stable, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def snapshot(out: Path, scorers: list[str], limit: int, dev: Path = DEV, *, legacy: bool = False) -> None:
    from groundwire.config import CheckSettings
    from groundwire.foundation.types import Chunk
    from groundwire.pipeline import CheckItem, build_verifier, check

    with out.open("w", encoding="utf-8") as sink:
        for scorer in scorers:
            verifier = build_verifier(CheckSettings() if scorer == "default" else CheckSettings(scorer=scorer))
            for path in sorted(dev.glob("*.jsonl")):
                with path.open(encoding="utf-8") as rows:
                    for number, line in enumerate(rows):
                        if number >= limit:
                            break
                        row = json.loads(line)
                        chunks = [Chunk(f"S{i}", text) for i, text in enumerate(row["context"], start=1)]
                        item = CheckItem(row["answer"], chunks, question=row.get("question"), task=row.get("task"))
                        outcome: dict[str, object] = {}
                        try:
                            report = check(verifier, item)
                            digest = report_digest(legacy_names(report) if legacy else report.to_dict())
                            outcome = {"route": report.route.value, "verdicts": [c.verdict.value for c in report.claims],
                                       "scores": [report.score, *(c.score for c in report.claims)]}
                        except Exception as error:
                            digest = f"error: {type(error).__name__}: {error}"
                        record = {"file": path.name, "scorer": scorer, "id": row["id"], "digest": digest, **outcome}
                        sink.write(json.dumps(record) + "\n")
            print(f"{scorer}: done", flush=True)


def compare(before: Path, after: Path) -> int:
    def load(path: Path) -> dict[tuple[str, str, str], dict[str, object]]:
        records = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
        return {(r["scorer"], r["file"], r["id"]): r for r in records}

    old, new = load(before), load(after)
    missing: dict[str, object] = {"digest": "missing"}
    same: Counter[tuple[str, str]] = Counter()
    differ: Counter[tuple[str, str]] = Counter()
    scores: Counter[tuple[str, str]] = Counter()  # reports whose answer or claim scores changed
    routes: Counter[tuple[str, str]] = Counter()  # reports whose decision (route) changed
    verdicts: Counter[tuple[str, str]] = Counter()  # claims whose verdict changed
    moves: Counter[tuple[str, object, object]] = Counter()  # (scorer, route before, route after)
    examples: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        group = (key[0], key[1])
        a, b = old.get(key, missing), new.get(key, missing)
        if a["digest"] == b["digest"]:
            same[group] += 1
            continue
        differ[group] += 1
        scores[group] += a.get("scores") != b.get("scores")
        if a.get("route") != b.get("route"):
            routes[group] += 1
            moves[(key[0], a.get("route"), b.get("route"))] += 1
        va, vb = a.get("verdicts") or [], b.get("verdicts") or []
        verdicts[group] += sum(x != y for x, y in zip(va, vb, strict=False)) + abs(len(va) - len(vb))  # type: ignore[arg-type]
        if len(examples) < 10:
            examples.append(f"  {key}: {str(a['digest'])[:20]} -> {str(b['digest'])[:20]}")
    print(f"{'scorer':10} {'file':34} {'identical':>9} {'differ':>7} {'scores':>6} {'route':>6} {'verdicts':>8}")
    for group in sorted(same.keys() | differ.keys()):
        print(f"{group[0]:10} {group[1]:34} {same[group]:9d} {differ[group]:7d} {scores[group]:6d} {routes[group]:6d} "
              f"{verdicts[group]:8d}")
    print(f"{'all':45} {sum(same.values()):9d} {sum(differ.values()):7d} {sum(scores.values()):6d} "
          f"{sum(routes.values()):6d} {sum(verdicts.values()):8d}")
    print("scores: reports whose answer or claim scores changed; route: reports whose decision changed; verdicts: "
          "claims whose verdict changed (where both files record them)")
    for (scorer, a_route, b_route), count in sorted(moves.items(), key=str):
        print(f"  {scorer}: {a_route} -> {b_route}: {count}")
    print("\n".join(examples))
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write this tree's digests here")
    parser.add_argument("--scorers", default="lexical,default")
    parser.add_argument("--limit", type=int, default=100, help="rows of each dev file")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev files' folder (from a worktree: ../shared's)")
    parser.add_argument("--legacy-names", action="store_true", help="write reports under their names before the typed report")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    if not any(args.dev.glob("*.jsonl")):
        parser.error(f"no dev files in {args.dev}: give --dev DIR")
    snapshot(args.out, args.scorers.split(","), args.limit, args.dev, legacy=args.legacy_names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
