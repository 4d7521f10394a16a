"""Build the training mix: synthetic RAG-style pairs from real contexts + a sample of real pair files.

Everything is drawn from `train/` (commercially usable) with one seeded RNG, so the same seed and
arguments give the same file. The mix is written beside the data as mix.json.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypedDict

from groundwire.train import perturb
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, Doc
from groundwire.train.records import record_pairs
from groundwire.train.role_events import role_pairs

LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)
_CITATION_MARK = re.compile(r"\s*\[<\|[a-z_]+\|>(?:,[^\]]*)?\]")


@dataclass(frozen=True, slots=True)
class Pair:
    premise: str
    hypothesis: str
    label: str
    source: str
    kind: str
    probs: tuple[float, float, float] | None = None
    """A teacher's probabilities over LABELS (distillation): the soft target; `label` is then their argmax."""

    def row(self) -> dict[str, object]:
        """The JSONL line; a hard pair has no `probs` key, so hard-only files read as before."""
        data = asdict(self)
        if self.probs is None:
            del data["probs"]
        return data


@dataclass(frozen=True, slots=True)
class MixSpec:
    """How many items to draw from each place. Keys of `real` are train/ file stems."""

    context_docs: dict[str, int] = field(default_factory=lambda: {
        "halueval_summarization": 2600, "halueval_qa": 2600, "citation_integrity": 2200,
        "summacoz_inconsistent": 400, "rte": 1200, "halueval_dialogue": 600,
    })
    per_doc: int = 5
    real: dict[str, int] = field(default_factory=lambda: {
        "esnli": 3500, "cad_snli": 2000, "rte": 2490, "climate_fever": 3500, "citation_integrity": 2138,
        "halueval_qa": 2500, "halueval_dialogue": 2500,
    })
    length_balanced: tuple[str, ...] = ("halueval_qa", "halueval_dialogue")
    # Kind weights for synthetic items; a kind that does not apply falls back to another of its label.
    kinds: dict[str, float] = field(default_factory=lambda: {
        "copy": 0.07, "light_rewrite": 0.13, "clause_prefix": 0.07, "fusion": 0.09,
        "number_swap": 0.07, "date_swap": 0.03, "entity_swap": 0.07, "pronoun_swap": 0.03,
        "negation": 0.07, "antonym": 0.04, "qualifier": 0.14, "dropped": 0.10, "other_doc": 0.09,
    })
    window_words: tuple[int, int] = (15, 100)
    val_fraction: float = 0.02
    # Generated business records (train/records.py): the only structured premises in the mix.
    records: int = 1500
    per_record: int = 4
    # Generated sentences that give two named entities roles (train/role_events.py): role swaps to learn from.
    role_events: int = 0
    per_role_event: int = 3


# The human-labelled NLI and claim-verification files added to train/ after v2 (see the data README):
# tables as text, contracts, negation, ambiguity, science claims, debiased FEVER, logic, conjunctions.
HUMAN_PAIRS_V3 = {
    "infotabs": 4000, "contractnli": 3075, "negation_nli": 2999, "ambient": 2273, "check_covid": 1499,
    "fever_symmetric": 1390, "folio": 600, "conjnli": 622,
}

_KINDS_V4 = {**MixSpec().kinds, "date_generalize": 0.03, "hedge_dropped": 0.04}

# Named mixes, so a run's recipe is one word in its command. v2 trained the bundled MiniLM; v3 adds the
# human-labelled pairs above and is the recipe of the larger base (issue 19).
MIXES: dict[str, MixSpec] = {
    "v2": MixSpec(),
    "v3": MixSpec(real={**MixSpec().real, **HUMAN_PAIRS_V3}),
    # v3 plus 2,400 role pairs (issue 21): who wrote, acquired, beat or replaced whom, and the swaps; and two
    # perturbations from the taxonomy: a coarser date is entailed, a hedge made certain is not.
    "v4": MixSpec(real={**MixSpec().real, **HUMAN_PAIRS_V3}, role_events=800, kinds=_KINDS_V4),
    # v4 without v3's human-labelled pairs: what the role pairs and the two new kinds do on their own; then
    # each of the two alone.
    "v2-roles": MixSpec(role_events=800, kinds=_KINDS_V4),
    "v2-role-pairs": MixSpec(role_events=800),
    "v2-new-kinds": MixSpec(kinds=_KINDS_V4),
    # The same, concentrated: 12,000 role pairs and the two kinds ten times as often, to see whether 600 steps can
    # move the claim cases at all, and what that costs leave-one-dataset-out.
    "v2-taxonomy-heavy": MixSpec(role_events=4000, kinds={**MixSpec().kinds, "date_generalize": 0.3,
                                                          "hedge_dropped": 0.4}),
    # v3 with three times the everyday NLI (e-SNLI, counterfactual SNLI): short paraphrases, negations and
    # swaps of the kind a reader checks one claim at a time (issue 21's claim cases).
    "v3-nli": MixSpec(real={**MixSpec().real, **HUMAN_PAIRS_V3, "esnli": 10500, "cad_snli": 6000}),
    # v4 without the two synthetic kinds that teach word overlap alone: `copy` (the premise's own sentence:
    # entailment) and `qualifier` (that sentence plus a phrase from elsewhere: neutral). With them the model
    # learns "every word found -> entailed, a new word -> neutral", which the combiner's lexical features
    # already say, and a faithful paraphrase reads as neutral (issue 21). In their place, v3-nli's everyday
    # NLI, where entailed hypotheses reword their premise.
    "v4-deshortcut": MixSpec(
        real={**MixSpec().real, **HUMAN_PAIRS_V3, "esnli": 10500, "cad_snli": 6000},
        role_events=800,
        kinds={kind: weight for kind, weight in _KINDS_V4.items() if kind not in ("copy", "qualifier")},
    ),
}


class PairRow(TypedDict):
    """A line of a train/ pair file (the data README gives the format; other keys are not read here)."""

    premise: str
    hypothesis: str
    label: str


class MixSummary(TypedDict):
    """mix.json: what `build` wrote."""

    seed: int
    data_dir: str
    n_train: int
    n_val: int
    n_soft: int
    labels: dict[str, int]
    sources: dict[str, int]
    kinds: dict[str, int]
    spec: dict[str, object]


def read_pairs(path: Path) -> list[PairRow]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _length_balanced(rows: list[PairRow], rng: random.Random) -> list[PairRow]:
    """Equal numbers of each label per hypothesis-length bin, so length alone predicts nothing."""
    bins: dict[tuple[int, str], list[PairRow]] = defaultdict(list)
    edges = (3, 6, 10, 15, 25, 40, 10**9)
    for row in rows:
        n = len(row["hypothesis"].split())
        bins[(next(i for i, e in enumerate(edges) if n <= e), row["label"])].append(row)
    out: list[PairRow] = []
    for i in range(len(edges)):
        groups = [bins.get((i, label), []) for label in (ENTAILMENT, NEUTRAL)]
        k = min(len(g) for g in groups)
        for g in groups:
            out.extend(rng.sample(g, k))
    return out


def real_pairs(data_dir: Path, spec: MixSpec, rng: random.Random) -> list[Pair]:
    out: list[Pair] = []
    for stem, n in spec.real.items():
        rows = read_pairs(data_dir / f"{stem}.jsonl")
        if stem in spec.length_balanced:
            rows = _length_balanced(rows, rng)
        rows = rng.sample(rows, min(n, len(rows)))
        for row in rows:
            hyp = _CITATION_MARK.sub("", row["hypothesis"]).strip()
            out.append(Pair(perturb.clean_text(row["premise"]), hyp, row["label"], stem, "real"))
    return out


def load_docs(data_dir: Path, spec: MixSpec, rng: random.Random) -> dict[str, list[Doc]]:
    docs: dict[str, list[Doc]] = {}
    for stem, n in spec.context_docs.items():
        premises = sorted({row["premise"] for row in read_pairs(data_dir / f"{stem}.jsonl")})
        chosen = rng.sample(premises, min(n, len(premises)))
        docs[stem] = [d for d in (Doc.from_text(p) for p in chosen) if len(d.sentences) >= 2]
    return docs


def _neighbours(docs: Sequence[Doc]) -> list[int]:
    """Index of each document's nearest other document (TF-IDF cosine): the same-topic distractor."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    matrix = TfidfVectorizer(stop_words="english", min_df=2).fit_transform([" ".join(d.sentences) for d in docs])
    _, idx = NearestNeighbors(n_neighbors=2, metric="cosine").fit(matrix).kneighbors(matrix)
    return [int(row[1]) if row[0] == i else int(row[0]) for i, row in enumerate(idx)]


def window_span(doc: Doc, rng: random.Random, words: tuple[int, int]) -> tuple[int, int]:
    """A run of consecutive sentences of about `words` words, like the verifier's windows."""
    budget = rng.randint(*words)
    start = rng.randrange(len(doc.sentences))
    end, total = start, 0
    while end < len(doc.sentences) and (total == 0 or total + len(doc.sentences[end].split()) <= budget):
        total += len(doc.sentences[end].split())
        end += 1
    while start > 0 and total + len(doc.sentences[start - 1].split()) <= budget:
        start -= 1
        total += len(doc.sentences[start].split())
    return start, end


def _good(sentence: str) -> bool:
    n = len(sentence.split())
    return 5 <= n <= 50 and not sentence.endswith("?")


def _label_of(kind: str) -> str:
    if kind == "copy":
        return ENTAILMENT
    if kind in ("dropped", "other_doc"):
        return NEUTRAL
    return perturb.PERTURBATIONS[kind].label


def _make(kind: str, doc: Doc, span: tuple[int, int], neighbour: Doc, rng: random.Random) -> tuple[str, str] | None:
    """(premise, hypothesis) for one kind, or None when it does not apply to this window."""
    sents = doc.sentences
    window = list(sents[span[0]:span[1]])
    inside = [s for s in window if _good(s)]
    if kind == "other_doc":
        pool = [s for s in neighbour.sentences if _good(s)]
        return (" ".join(window), rng.choice(pool)) if pool else None
    if kind == "dropped":
        # A sentence of the same document that the window does not hold: on topic, fluent, unsupported.
        outside = [s for i, s in enumerate(sents) if (i < span[0] or i >= span[1]) and _good(s)]
        if outside and rng.random() < 0.6:
            return " ".join(window), rng.choice(outside)
        if len(window) < 2 or not inside:
            return None
        target = rng.choice(inside)
        return " ".join(s for s in window if s != target), target
    if not inside:
        return None
    target = rng.choice(inside)
    if kind == "copy":
        return " ".join(window), target
    if kind == "fusion" and sents.index(target) + 1 >= span[1]:
        return None
    hyp = perturb.apply(kind, target, doc, rng)
    if hyp is None:
        return None
    if _label_of(kind) != ENTAILMENT and rng.random() < 0.3:
        # Rewrites also on negatives, so that "reworded" is no cue for "supported".
        hyp = perturb.light_rewrite(hyp, doc, rng) or hyp
    return " ".join(window), hyp


def synthetic_pairs(docs: dict[str, list[Doc]], spec: MixSpec, rng: random.Random) -> list[Pair]:
    kinds, weights = zip(*spec.kinds.items())
    out: list[Pair] = []
    for stem, pool in docs.items():
        nbr = _neighbours(pool)
        for i, doc in enumerate(pool):
            for _ in range(spec.per_doc):
                span = window_span(doc, rng, spec.window_words)
                kind = rng.choices(kinds, weights)[0]
                made = _make(kind, doc, span, pool[nbr[i]], rng)
                if made is None:
                    # Fall back within the same label so the label balance follows `kinds`.
                    same = [k for k in kinds if _label_of(k) == _label_of(kind) and k != kind]
                    for alt in rng.sample(same, len(same)):
                        if (made := _make(alt, doc, span, pool[nbr[i]], rng)) is not None:
                            kind = alt
                            break
                if made is not None and made[0] and made[1] != made[0]:
                    out.append(Pair(made[0], made[1], _label_of(kind), stem, kind))
    return out


def build(data_dir: Path, out_dir: Path, *, seed: int = 13, spec: MixSpec | None = None,
          soft: Sequence[Pair] = (), soft_share: float | None = None) -> MixSummary:
    """Write train.jsonl, val.jsonl and mix.json under out_dir; returns the mix summary.

    `soft`: teacher-labelled pairs (distillation) added to the training split only, so the validation figures stay
    on human and synthetic labels; without them every pair of a seed is what it was. `soft_share`: keep only a
    seeded sample of the hard training pairs, so the soft ones are this share of the split (a short run then
    sees enough of them); the validation split is unchanged."""
    if soft_share is not None and not (soft and 0.0 < soft_share < 1.0):
        raise ValueError("soft_share needs soft pairs and a share strictly between 0 and 1")
    spec = spec or MixSpec()
    if "noncommercial" in str(data_dir):
        raise ValueError("the shipped model trains on train/ only; train-noncommercial/ is for experiments")
    rng = random.Random(seed)
    pairs = synthetic_pairs(load_docs(data_dir, spec, rng), spec, rng) + real_pairs(data_dir, spec, rng)
    # Their own RNG, so adding records leaves every other pair of a seed unchanged.
    pairs += [Pair(p.premise, p.hypothesis, p.label, "records", p.kind)
              for p in record_pairs(spec.records, spec.per_record, random.Random(seed + 1_000_003))]
    pairs += [Pair(p.premise, p.hypothesis, p.label, "roles", p.kind)
              for p in role_pairs(spec.role_events, spec.per_role_event, random.Random(seed + 3_000_003))]
    rng.shuffle(pairs)
    n_val = int(len(pairs) * spec.val_fraction)
    out_dir.mkdir(parents=True, exist_ok=True)
    train_part = pairs[n_val:]
    if soft:
        mixer = random.Random(seed + 2_000_003)
        if soft_share is not None:
            n_hard = round(len(soft) * (1.0 - soft_share) / soft_share)
            train_part = mixer.sample(train_part, min(n_hard, len(train_part)))
        train_part = train_part + list(soft)
        mixer.shuffle(train_part)
    for name, part in (("val", pairs[:n_val]), ("train", train_part)):
        with (out_dir / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for p in part:
                fh.write(json.dumps(p.row(), ensure_ascii=False) + "\n")
    written = (*pairs[:n_val], *train_part)
    summary: MixSummary = {
        "seed": seed, "data_dir": str(data_dir), "n_train": len(train_part), "n_val": n_val, "n_soft": len(soft),
        # What was written (both splits): every pair and soft pair, less the hard ones a soft_share left out.
        "labels": dict(Counter(p.label for p in written)),
        "sources": dict(Counter(p.source for p in written)),
        "kinds": dict(Counter(p.kind for p in written)), "spec": asdict(spec),
    }
    (out_dir / "mix.json").write_text(json.dumps(summary, indent=2))
    return summary


def iter_jsonl(path: Path) -> Iterator[Pair]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            probs = row.pop("probs", None)
            yield Pair(**row, probs=None if probs is None else (float(probs[0]), float(probs[1]), float(probs[2])))
