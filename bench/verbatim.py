"""Sentences copied from dev contexts: how many a check accepts, and that a copy with one figure changed is not.

    PYTHONPATH=src .venv/bin/python bench/verbatim.py                      # bundled, canonical figures on and off
    PYTHONPATH=src .venv/bin/python bench/verbatim.py --scorer lexical
    .venv/bin/python /other/checkout/bench/verbatim.py                      # the same cases there (a copy of this file)
    PYTHONPATH=src .venv/bin/python bench/verbatim.py --failures           # list each copy that was not accepted
    PYTHONPATH=src .venv/bin/python bench/verbatim.py --dev-check          # the rule on every dev answer (safety)
    PYTHONPATH=src .venv/bin/python bench/verbatim.py --copy-rule off --scorer onnx:BUNDLE   # the model alone

Cases (issue 49), drawn with a fixed seed from the contexts of /work/shared/data/dev (or --dev):
- one kind per figure form that canonical figures rewrite (times, dates, money, units, ranges, percentages,
  numbers with separators or in words): a context sentence holding such a figure, copied as the answer;
- light edits of a copied sentence: lower case, no punctuation, a "the" dropped;
- swapped figures: a copied sentence with one figure changed to a value the context lacks. These must not be
  SUPPORTED; the script prints how many are.
Each answer is checked against its row's whole context. "supported": every claim SUPPORTED; "accept": the
answer's decision; "support": the mean over answers of the weakest claim's model support probability.
--copy-rule off leaves every claim to the model and the combiner (the rule's `verbatim_match` finds nothing), so
the figures are the model's own: what the copy pairs in training (train/copies.py) are measured on. It imports the groundwire beside it and reads only the public API, so that a copy of it runs
on any checkout (the checkout before issue 49 gives the "before" figures).

--dev-check: every dev answer with a claim that copies a context sentence (core.verbatim) is checked with the
copy rule and without it (claim_state's `verbatim_match` replaced by one that finds nothing: the check as it was
before the rule), with the bundled and the lexical scorer. Per file: such answers, how many changed decision,
how many of those are labelled hallucinated, how many became ACCEPT, and copied claims that overlap a labelled
hallucinated span of the answer.

Measured (issue 49, seed 49, 20 per kind; 192 copies, 116 swapped), before the copy rule -> with it:
- bundled, canonical figures on: copies SUPPORTED 74.5% -> 100%; off: 76.0% -> 100%; swapped SUPPORTED 0 -> 0;
- lexical: copies 100% -> 100%; swapped 6 -> 6 (the changed figure occurs elsewhere in the context).
--dev-check, bundled: 11 of 6,705 answers change decision, all to ACCEPT; 3 are labelled hallucinated (BEGIN
"did you know that thomas jefferson created his own version of the bible?", which the context states word for
word; BEGIN labels whole answers, no spans); lexical: none change.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import groundwire.core.claim_state as claim_state_module
from groundwire.config import CheckSettings
from groundwire.core.claims import RuleDecomposer
from groundwire.core.figures import canonical_text, extract_figures
from groundwire.core.units import UNIT_SPELLINGS
from groundwire.foundation.textutil import sentence_spans
from groundwire.foundation.types import Route, Verdict
from groundwire.pipeline import build_verifier
from shared_data import DEV

FIGURE_KINDS = ("time", "date", "money", "unit", "range", "percent", "number")
EDITS = ("case", "punctuation", "drop-the")
_RANGE_RE = re.compile(r"\d\s*(?:-|\u2013|to|and)\s*\$?\d", re.IGNORECASE)
_WORD_RE = re.compile(r"\S+")


@dataclass(frozen=True)
class Case:
    kind: str
    answer: str
    context: tuple[str, ...]
    source: str


def figure_kind(sentence: str) -> str | None:
    """The form of the first figure canonical figures rewrite in the sentence, or None when it rewrites none."""
    if canonical_text(sentence) == sentence:
        return None
    for figure in extract_figures(sentence):
        rewritten = canonical_text(figure.text) != figure.text or figure.unit in UNIT_SPELLINGS
        if not rewritten and figure.kind != "money":
            continue
        after = sentence[figure.start : figure.start + len(figure.text) + 12]
        if figure.kind in ("time", "number", "money") and _RANGE_RE.search(after):
            return "range"
        if figure.kind == "number" and figure.unit in UNIT_SPELLINGS:
            return "unit"
        return figure.kind
    return "number"


def copied_sentences(rows: list[dict[str, object]]) -> Iterator[tuple[str, tuple[str, ...], str]]:
    """(sentence, context, row id) for each prose sentence of 8 to 40 words in the rows' contexts."""
    for row in rows:
        context = tuple(str(chunk) for chunk in row["context"])  # type: ignore[attr-defined]
        for chunk in context:
            for start, end in sentence_spans(chunk):
                sentence = chunk[start:end]
                # No question (the claim splitter skips one, with any figure in it) and no JSON record piece.
                prose = not any(mark in sentence for mark in "?{}")
                if prose and 8 <= len(sentence.split()) <= 40 and sentence[-1] in ".!" and sentence[0].isupper():
                    yield sentence, context, str(row["id"])


def edited(kind: str, sentence: str, rng: random.Random) -> str | None:
    if kind == "case":
        return sentence.lower() if rng.random() < 0.5 else sentence.upper()
    if kind == "punctuation":
        stripped = re.sub(r"[,;:.!]+(?=\s|$)", "", sentence)
        return stripped if stripped != sentence else None
    words = _WORD_RE.findall(sentence)
    at = [i for i, word in enumerate(words) if word.lower() == "the"]
    if not at:
        return None
    drop = rng.choice(at)
    kept = [word for i, word in enumerate(words) if i != drop]
    kept[0] = kept[0][:1].upper() + kept[0][1:]
    return " ".join(kept)


def swapped(sentence: str, context: tuple[str, ...]) -> str | None:
    """The sentence with its first written number changed to one the context does not hold."""
    known = {figure.key for chunk in context for figure in extract_figures(chunk)}
    for match in re.finditer(r"(?<![\w.,])\d+(?![\d,.]\d)", sentence):
        value = int(match.group(0))
        for candidate in (value + 3, value * 2 + 7, value + 11):
            if str(candidate) not in known:
                return sentence[: match.start()] + str(candidate) + sentence[match.end() :]
    return None


def build_cases(dev: Path, per_kind: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    rows = [json.loads(line) for path in sorted(dev.glob("*.jsonl")) for line in path.open(encoding="utf-8")]
    rng.shuffle(rows)
    cases: list[Case] = []
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for sentence, context, source in copied_sentences(rows):
        if sentence in seen:
            continue
        seen.add(sentence)
        kind = figure_kind(sentence)
        if kind is not None and counts[kind] < per_kind:
            counts[kind] += 1
            cases.append(Case(kind, sentence, context, source))
            change = swapped(sentence, context)
            if change is not None and counts["swapped"] < per_kind * len(FIGURE_KINDS):
                counts["swapped"] += 1
                cases.append(Case("swapped", change, context, source))
        elif kind is None:
            for edit in EDITS:
                answer = edited(edit, sentence, rng)
                if answer is not None and counts[edit] < per_kind and rng.random() < 0.3:
                    counts[edit] += 1
                    cases.append(Case(edit, answer, context, source))
                    break
        if all(counts[kind] >= per_kind for kind in (*FIGURE_KINDS, *EDITS)):
            break
    return cases


def dev_check(dev: Path, scorer: str) -> None:
    """The copy rule on and off over every dev answer it can touch (see the module docstring)."""
    from groundwire.core.verbatim import verbatim_match  # the rule itself: only on a checkout that has it

    decomposer = RuleDecomposer()
    verifier = build_verifier(CheckSettings(scorer=scorer))
    print(f"scorer {scorer}: dev answers with a copied claim, the copy rule on against off")
    print(f"  {'file':28} {'answers':>7} {'copies':>6} {'changed':>7} {'halluc.':>7} {'->accept':>8} "
          f"{'halluc.->accept':>15} {'copied claims in halluc. spans':>30}")
    for path in sorted(dev.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        counts: Counter[str] = Counter(answers=len(rows))
        for row in rows:
            context = [str(chunk) for chunk in row["context"]]
            claims = decomposer.decompose(row["answer"], question=row["question"])
            copied = [c for c in claims if verbatim_match(c.text, context, range(len(context))) is not None]
            if not copied:
                continue
            counts["copies"] += 1
            after = verifier.verify(row["answer"], context, question=row["question"])
            claim_state_module.verbatim_match = lambda *_: None  # the check without the rule
            try:
                before = verifier.verify(row["answer"], context, question=row["question"])
            finally:
                claim_state_module.verbatim_match = verbatim_match
            assert not any(r.decided_by == "verbatim" for r in before.claims), "the rule was not turned off"
            spans = [(start, end) for start, end, *_ in row["spans"]]
            counts["in_spans"] += sum(
                r.decided_by == "verbatim" and any(s < r.claim.span[1] and r.claim.span[0] < e for s, e in spans)
                for r in after.claims
            )
            if after.route is not before.route:
                counts["changed"] += 1
                counts["changed_hallucinated"] += bool(row["hallucinated"])
                if after.route is Route.ACCEPT:
                    counts["to_accept"] += 1
                    counts["hallucinated_to_accept"] += bool(row["hallucinated"])
        print(f"  {path.stem:28} {counts['answers']:7d} {counts['copies']:6d} {counts['changed']:7d} "
              f"{counts['changed_hallucinated']:7d} {counts['to_accept']:8d} {counts['hallucinated_to_accept']:15d} "
              f"{counts['in_spans']:30d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--per-kind", type=int, default=20)
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--scorer", default="bundled")
    parser.add_argument("--canonical", choices=("on", "off", "both"), default="both")
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--dev-check", action="store_true", help="the copy rule on and off over every dev answer")
    parser.add_argument("--copy-rule", choices=("on", "off"), default="on",
                        help="off: no claim is decided as a copy (core.verbatim), so the model's own scores decide")
    args = parser.parse_args()
    if args.copy_rule == "off":
        claim_state_module.verbatim_match = lambda *_: None  # type: ignore[assignment]
    if args.dev_check:
        for scorer in dict.fromkeys([args.scorer, "lexical"]):
            dev_check(args.dev, scorer)
        return
    cases = build_cases(args.dev, args.per_kind, args.seed)
    settings = [True, False] if args.canonical == "both" else [args.canonical == "on"]
    for canonical in settings:
        verifier = build_verifier(CheckSettings(scorer=args.scorer, canonical_figures=canonical))
        supported: Counter[str] = Counter()
        accepted: Counter[str] = Counter()
        totals: Counter[str] = Counter()
        deciders: Counter[str] = Counter()
        support: Counter[str] = Counter()
        failures: list[str] = []
        for case in cases:
            report = verifier.verify(case.answer, list(case.context))
            totals[case.kind] += 1
            all_supported = bool(report.claims) and all(c.verdict is Verdict.SUPPORTED for c in report.claims)
            supported[case.kind] += all_supported
            accepted[case.kind] += report.route is Route.ACCEPT
            deciders.update(str(c.decided_by) for c in report.claims)
            support[case.kind] += min((c.support or 0.0 for c in report.claims), default=0.0)
            wrong = all_supported if case.kind == "swapped" else not all_supported
            if wrong:
                weakest = min(report.claims, key=lambda c: c.score) if report.claims else None
                failures.append(f"  {case.kind:11} {case.source}: {case.answer!r} -> {report.route.value} "
                                f"{report.score:.3f}" + (f" ({weakest.verdict.value}, support "
                                                         f"{weakest.support}, {weakest.decided_by})" if weakest else ""))
        print(f"scorer {args.scorer}, canonical figures {'on' if canonical else 'off'}, copy rule {args.copy_rule} "
              f"({verifier.model_id})")
        print(f"  {'kind':11} {'cases':>5} {'supported':>10} {'accept':>8} {'support':>8}")
        copies = [kind for kind in totals if kind != "swapped"]
        for kind in [*FIGURE_KINDS, *EDITS, "swapped"]:
            if totals[kind]:
                print(f"  {kind:11} {totals[kind]:5d} {supported[kind] / totals[kind]:10.1%} "
                      f"{accepted[kind] / totals[kind]:8.1%} {support[kind] / totals[kind]:8.3f}")
        n = sum(totals[kind] for kind in copies)
        print(f"  {'copies':11} {n:5d} {sum(supported[k] for k in copies) / n:10.1%} "
              f"{sum(accepted[k] for k in copies) / n:8.1%} {sum(support[k] for k in copies) / n:8.3f}")
        print(f"  swapped-figure cases SUPPORTED: {supported['swapped']} of {totals['swapped']}; "
              f"claims decided by {dict(deciders)}")
        if args.failures:
            print("\n".join(failures))


if __name__ == "__main__":
    main()
