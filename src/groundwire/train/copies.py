"""Copy pairs (issue 49): a window and a sentence copied from it, and the same copy with one thing changed.

The bundled model scored a sentence paired with itself anywhere from 0.14 to 0.9: its training mix holds the
premise's own sentence as an entailed hypothesis (data.py's `copy` kind) but never a window that is that sentence
alone (`synthetic_pairs` drops a pair whose hypothesis is its premise; 52 of 134,771 training pairs have one), and
no copy with the light edits a user's answer makes. These pairs teach it, drawn from the training premises:

- entailment: a sentence of the window as written, one of its clauses, or with a light edit (case, punctuation, a
  dropped article); a fifth of the windows are the copied sentence alone;
- the same surface, not supported: one figure, date or name swapped, or a negation added or removed
  (contradiction), or the copied sentence left out of the window (neutral), so that "every word is found" does
  not come to mean "supported". A third of them carry a light edit too, so an edit is no cue either way.

The pairs are read as the model reads them at run time: with `[verify] canonical_figures` on (the default) the
verifier rewrites every figure of both texts into one spelling (core.figures.canonical_text) before scoring, so
`canonical_share` of the pairs are rewritten the same way, the rest left as written (the setting off).

`build` writes them with a replay sample of a prepared mix (the shipped model's v2), so a short continued fine-tune
learns copies without drifting from what it knew:

    python -m groundwire.train.copies --replay runs/data_v2 --out runs/data_copies --copies 3200
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from groundwire.core.figures import canonical_text
from groundwire.train import perturb
from groundwire.train.data import MixSpec, Pair, iter_jsonl, load_docs, window_span
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, Doc

EDITS = ("case", "punctuation", "article")
SWAPS = ("number_swap", "date_swap", "entity_swap", "negation")
_ARTICLE_RE = re.compile(r"\b(?:the|a|an) (?=\w)", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(r"[,;] (?:and|but|while|which|who|where|as|after|with|including)\b")
_FIGURE_RE = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class CopySpec:
    """How the copy pairs are drawn; `build` records it in mix.json."""

    copies: int = 3200
    """Copy pairs in the training split (entailed and not, together)."""
    entailed_share: float = 0.5
    neutral_share: float = 0.15
    """Of all copy pairs: the copied sentence left out of its window. The rest are swaps (contradiction)."""
    alone_share: float = 0.2
    """Entailed copies whose window is the copied sentence alone (premise and hypothesis the same text)."""
    edit_share: float = 0.5
    """Entailed copies with a light edit; negatives get one at half this rate."""
    figure_share: float = 0.6
    """Prefer a sentence holding a figure (the forms canonical figures rewrite) when the window has one."""
    canonical_share: float = 0.75
    replay_share: float = 0.5
    """Share of the training split drawn from the replayed mix."""
    val_copies: int = 200
    val_replay: int = 200
    window_words: tuple[int, int] = (8, 80)
    context_docs: tuple[tuple[str, int], ...] = (
        ("halueval_summarization", 900), ("halueval_qa", 900), ("citation_integrity", 700), ("rte", 500),
        ("summacoz_inconsistent", 200), ("halueval_dialogue", 200),
    )


def edit(kind: str, sentence: str, rng: random.Random) -> str | None:
    """A light edit of a copied sentence, or None when it changes nothing."""
    if kind == "case":
        out = sentence.lower() if rng.random() < 0.7 else sentence.upper()
    elif kind == "punctuation":
        out = re.sub(r"[,;:.!]+(?=\s|$)", "", sentence)
    else:
        spots = list(_ARTICLE_RE.finditer(sentence))
        if not spots:
            return None
        hit = rng.choice(spots)
        out = sentence[: hit.start()] + sentence[hit.end() :]
        out = out[:1].upper() + out[1:]
    return out if out != sentence else None


def clause(sentence: str) -> str | None:
    """The sentence's first clause, when it stands as a claim of five words or more."""
    match = _CLAUSE_END_RE.search(sentence)
    if match is None or len(sentence[: match.start()].split()) < 5:
        return None
    return sentence[: match.start()] + "."


def _target(window: Sequence[str], spec: CopySpec, rng: random.Random) -> str | None:
    good = [s for s in window if 5 <= len(s.split()) <= 50 and not s.endswith("?")]
    if not good:
        return None
    figured = [s for s in good if _FIGURE_RE.search(s)]
    return rng.choice(figured if figured and rng.random() < spec.figure_share else good)


def _entailed(doc: Doc, window: list[str], target: str, spec: CopySpec,
              rng: random.Random) -> tuple[str, str, str]:
    premise = target if rng.random() < spec.alone_share else " ".join(window)
    hypothesis, kind = target, "copy_verbatim"
    if rng.random() < 0.2 and (piece := clause(target)) is not None:
        hypothesis, kind = piece, "copy_clause"
    if rng.random() < spec.edit_share:
        name = rng.choice(EDITS)
        if (edited := edit(name, hypothesis, rng)) is not None:
            hypothesis, kind = edited, f"copy_{name}"
    return premise, hypothesis, kind


def _negative(doc: Doc, window: list[str], target: str, spec: CopySpec, neutral: bool,
              rng: random.Random) -> tuple[str, str, str, str] | None:
    if neutral:
        rest = [s for s in window if s != target]
        if not rest:
            return None
        premise, hypothesis, kind, label = " ".join(rest), target, "copy_left_out", NEUTRAL
    else:
        swaps = list(SWAPS)
        if _FIGURE_RE.search(target):  # a copied figure is what the copy rule and the issue care for most
            swaps = ["number_swap", "number_swap", *swaps]
        for name in rng.sample(swaps, len(swaps)):
            if (changed := perturb.apply(name, target, doc, rng)) is not None and changed != target:
                break
        else:
            return None
        alone = rng.random() < spec.alone_share
        premise, hypothesis, kind, label = (target if alone else " ".join(window)), changed, f"copy_{name}", CONTRADICTION
    if rng.random() < spec.edit_share / 2 and (edited := edit(rng.choice(EDITS), hypothesis, rng)) is not None:
        hypothesis = edited
    return premise, hypothesis, kind, label


def copy_pairs(docs: Sequence[Doc], n: int, spec: CopySpec, rng: random.Random) -> list[Pair]:
    """`n` copy pairs from the documents (each used once or more, in a seeded order)."""
    out: list[Pair] = []
    order = list(range(len(docs)))
    while len(out) < n and order:
        rng.shuffle(order)
        for i in order:
            if len(out) >= n:
                break
            doc = docs[i]
            start, end = window_span(doc, rng, spec.window_words)
            window = list(doc.sentences[start:end])
            target = _target(window, spec, rng)
            if target is None:
                continue
            draw = rng.random()
            if draw < spec.entailed_share:
                premise, hypothesis, kind = _entailed(doc, window, target, spec, rng)
                label = ENTAILMENT
            else:
                made = _negative(doc, window, target, spec, draw < spec.entailed_share + spec.neutral_share, rng)
                if made is None:
                    continue
                premise, hypothesis, kind, label = made
            if rng.random() < spec.canonical_share:
                premise, hypothesis = canonical_text(premise), canonical_text(hypothesis)
                kind += "+canonical"
            out.append(Pair(premise, hypothesis, label, "copies", kind))
    return out


def build(data_dir: Path, replay_dir: Path, out_dir: Path, *, spec: CopySpec | None = None,
          seed: int = 49) -> dict[str, object]:
    """train.jsonl (copy pairs and a replay sample of `replay_dir`'s training split, shuffled), val.jsonl (held-out
    copy pairs and the replayed mix's own validation pairs) and mix.json under out_dir; returns the summary."""
    spec = spec or CopySpec()
    rng = random.Random(seed)
    mix_spec = MixSpec(context_docs=dict(spec.context_docs))
    docs = [doc for pool in load_docs(data_dir, mix_spec, rng).values() for doc in pool]
    rng.shuffle(docs)
    # Validation copies come from documents the training copies never see.
    n_val_docs = max(1, round(len(docs) * spec.val_copies / (spec.copies + spec.val_copies)))
    val_copies = copy_pairs(docs[:n_val_docs], spec.val_copies, spec, rng)
    train_copies = copy_pairs(docs[n_val_docs:], spec.copies, spec, rng)
    pairs = val_copies + train_copies
    replay = list(iter_jsonl(replay_dir / "train.jsonl"))
    n_replay = round(len(train_copies) * spec.replay_share / (1.0 - spec.replay_share))
    train_part = train_copies + rng.sample(replay, min(n_replay, len(replay)))
    rng.shuffle(train_part)
    val_part = val_copies + list(iter_jsonl(replay_dir / "val.jsonl"))[: spec.val_replay]
    rng.shuffle(val_part)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, part in (("train", train_part), ("val", val_part)):
        with (out_dir / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for pair in part:
                fh.write(json.dumps(pair.row(), ensure_ascii=False) + "\n")
    written = (*train_part, *val_part)
    summary: dict[str, object] = {
        "seed": seed, "data_dir": str(data_dir), "replay_dir": str(replay_dir),
        "n_train": len(train_part), "n_val": len(val_part), "n_soft": 0,
        "labels": dict(Counter(p.label for p in written)),
        "sources": dict(Counter(p.source for p in written)),
        "kinds": dict(Counter(p.kind for p in pairs)),
        "spec": asdict(spec),
    }
    (out_dir / "mix.json").write_text(json.dumps(summary, indent=2))
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/train"), help="train/ pair files")
    parser.add_argument("--replay", type=Path, required=True, help="a prepared mix (`groundwire train prepare`)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--copies", type=int, default=CopySpec().copies)
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args(argv)
    summary = build(args.data, args.replay, args.out, spec=CopySpec(copies=args.copies), seed=args.seed)
    print(json.dumps({k: summary[k] for k in ("n_train", "n_val", "labels", "kinds")}, indent=1))


if __name__ == "__main__":
    main()
