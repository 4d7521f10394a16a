"""FactCC-style perturbations: turn one true context sentence into a labelled hypothesis.

Each perturbation is a function `(sentence, doc, rng) -> str | None` (None: does not apply) registered
under a name with the label it produces. The document gives hard substitutes (another number, another
entity of the same document), so a swap stays fluent and on topic.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groundwire.core.checks import roles

ENTAILMENT = "entailment"
NEUTRAL = "neutral"
CONTRADICTION = "contradiction"

_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_GLUED = re.compile(r"([A-Za-z0-9\)%\"])\.([A-Z][a-z])")  # "century.First": knowledge snippets glued without a space
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20[0-4]\d)\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DAY = re.compile(r"\b(" + "|".join(_DAYS) + r")\b")
# Capitalised runs not at the start of the sentence: names, places, organisations.
_ENTITY = re.compile(r"(?<=[a-z,;:] )((?:[A-Z][a-zA-Z'\-]+)(?: (?:of |de |the )?[A-Z][a-zA-Z'\-]+)*)")
_PRONOUNS = {"he": "she", "she": "he", "his": "her", "her": "his", "him": "her", "He": "She", "She": "He",
             "His": "Her", "Her": "His", "they": "he", "They": "He"}
_PRONOUN = re.compile(r"\b(" + "|".join(_PRONOUNS) + r")\b")
_NEGATABLE = re.compile(r"\b(is|was|are|were|has|have|had|can|will|would|could|should|did|does|do)\b(?! not)")
_NEGATED = re.compile(r"\b(is|was|are|were|has|have|had|can|will|would|could|should|did|does|do) not\b")
_CONTRACTED = re.compile(r"\b(isn't|wasn't|aren't|weren't|hasn't|haven't|can't|won't|didn't|doesn't|don't)\b")
_UNCONTRACT = {"isn't": "is", "wasn't": "was", "aren't": "are", "weren't": "were", "hasn't": "has",
               "haven't": "have", "can't": "can", "won't": "will", "didn't": "did", "doesn't": "does",
               "don't": "do"}
_ANTONYMS = {
    "increase": "decrease", "decrease": "increase", "increased": "decreased", "decreased": "increased",
    "rose": "fell", "fell": "rose", "more": "fewer", "fewer": "more", "higher": "lower", "lower": "higher",
    "largest": "smallest", "smallest": "largest", "before": "after", "after": "before", "first": "last",
    "last": "first", "won": "lost", "lost": "won", "open": "closed", "closed": "open", "early": "late",
    "late": "early", "positive": "negative", "negative": "positive", "best": "worst", "worst": "best",
    "older": "younger", "younger": "older", "north": "south", "south": "north", "east": "west",
    "west": "east", "allowed": "banned", "banned": "allowed", "cheap": "expensive", "expensive": "cheap",
    "always": "never", "never": "always",
    "accepted": "rejected", "rejected": "accepted", "supports": "opposes", "opposes": "supports",
    "approved": "denied", "denied": "approved", "inside": "outside", "outside": "inside",
}
_ANTONYM = re.compile(r"(?<![\w-])(" + "|".join(_ANTONYMS) + r")(?![\w-])")
_QUALIFIERS = (
    ", which aligns with the industry standard", ", making it the largest of its kind in the region",
    ", according to several independent experts", " for the first time in its history",
    ", a decision that was widely praised", " despite strong opposition from local residents",
    ", which led to a significant increase in sales", " after years of careful planning",
    ", as confirmed by official government figures", " in response to growing public demand",
    ", which is known for its excellent customer service", " at no additional cost",
    ", which has been open since 1998", " with free Wi-Fi available to all guests",
    ", a trend that is expected to continue next year", " as part of a nationwide campaign",
    ", and the results were published in a leading journal", " due to rising costs",
    ", which remains the most popular option among families", " following a lengthy investigation",
    ", and is widely considered one of the best in the country", " under the new leadership",
    " on weekends", ", especially during the summer months", " with a 24-hour service",
    ", which offers vegan and gluten-free options", ", attracting thousands of visitors every year",
)
_ADJECTIVES = ("popular", "award-winning", "controversial", "newly renovated", "famous", "historic",
               "local", "experienced", "long-awaited", "affordable", "family-owned", "leading")
_DETERMINER = re.compile(r"\b(the|a|an) (?=[a-z]{4,})")
_REWRITES: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"\bsaid\b"), "stated"), (re.compile(r"\bbecause\b"), "since"),
    (re.compile(r"\bHowever, |\bBut |\bAlso, |\bMeanwhile, |\bIn addition, |\bAnd "), ""),
    (re.compile(r"\bapproximately\b"), "about"), (re.compile(r"\bpurchased\b"), "bought"),
    (re.compile(r"\bbegan\b"), "started"), (re.compile(r"\bstarted\b"), "began"),
    (re.compile(r"\bhelp\b"), "assist"), (re.compile(r"\bshows\b"), "indicates"),
    (re.compile(r"\bdo not\b"), "don't"), (re.compile(r"\bdoes not\b"), "doesn't"),
    (re.compile(r"\bis not\b"), "isn't"), (re.compile(r"\bwill\b"), "is going to"),
    (re.compile(r"\bmany\b"), "a lot of"), (re.compile(r"\bthe majority of\b"), "most"),
    (re.compile(r"\breceived\b"), "got"), (re.compile(r"\bfilm\b"), "movie"), (re.compile(r"\bmovie\b"), "film"),
    (re.compile(r"\bpeople\b"), "individuals"), (re.compile(r"\blarge\b"), "big"), (re.compile(r"\bbig\b"), "large"),
    (re.compile(r"\bchildren\b"), "kids"), (re.compile(r"\b(?:also|very|currently) "), ""),
    (re.compile(r"\bseveral\b"), "a number of"), (re.compile(r"\bdied\b"), "passed away"),
    (re.compile(r"\bmore than\b"), "over"), (re.compile(r"\bknown as\b"), "called"),
    (re.compile(r"\baccording to\b"), "as reported by"), (re.compile(r"\bis located in\b"), "is in"),
    (re.compile(r"\bannounced\b"), "said"), (re.compile(r"\bshowed\b"), "found"),
    (re.compile(r"\bincluding\b"), "such as"), (re.compile(r"\bcompany\b"), "firm"),
    (re.compile(r"\bapproximately\b|\baround\b"), "roughly"), (re.compile(r"\bhowever\b"), "though"),
    (re.compile(r"\bused\b"), "utilised"),
    (re.compile(r"^(In|On|During|By|After|Before|Since) ([^,]{3,30}), (.+?)([.!?])$"), lambda m: f"{m.group(3)} {m.group(1).lower()} {m.group(2)}{m.group(4)}"),
)
_PAREN = re.compile(r"\s*[\(\[][^\)\]]{1,80}[\)\]]")
_ATTRIBUTION = re.compile(r",? (?:he|she|they|officials|police|the report|the study) (?:said|says|added|told [A-Z]\w+)\.?$")


def clean_text(text: str) -> str:
    return re.sub(r"\s+", " ", _GLUED.sub(r"\1. \2", text)).strip()


def split_sentences(text: str) -> list[str]:
    """A fast regex splitter for training data (the verifier itself uses pysbd via claims/windows)."""
    return [s.strip() for s in _SENT_END.split(clean_text(text)) if s.strip()]


@dataclass(frozen=True, slots=True)
class Doc:
    """One source document: its sentences plus pools of hard substitutes taken from it."""

    sentences: tuple[str, ...]
    numbers: tuple[str, ...]
    entities: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> Doc:
        sentences = tuple(split_sentences(text))
        joined = " ".join(sentences)
        numbers = tuple(sorted({m.group(1) for m in _NUMBER.finditer(joined)}))
        entities = tuple(sorted({m.group(1) for m in _ENTITY.finditer(joined)}))
        return cls(sentences=sentences, numbers=numbers, entities=entities)


Perturb = Callable[[str, Doc, random.Random], "str | None"]


@dataclass(frozen=True, slots=True)
class SyntheticPair:
    """A generated (premise, hypothesis) pair with its label and the kind of generator that made it."""

    premise: str
    hypothesis: str
    label: str
    kind: str


@dataclass(frozen=True, slots=True)
class Perturbation:
    name: str
    label: str
    fn: Perturb


PERTURBATIONS: dict[str, Perturbation] = {}


def register(name: str, label: str) -> Callable[[Perturb], Perturb]:
    def deco(fn: Perturb) -> Perturb:
        PERTURBATIONS[name] = Perturbation(name=name, label=label, fn=fn)
        return fn

    return deco


def _replace_one(pattern: re.Pattern[str], text: str, rng: random.Random,
                 repl: Callable[[str], str | None]) -> str | None:
    matches = list(pattern.finditer(text))
    rng.shuffle(matches)
    for m in matches:
        new = repl(m.group(1))
        if new is not None and new != m.group(1):
            return text[: m.start(1)] + new + text[m.end(1):]
    return None


def _other_number(value: str, doc: Doc, rng: random.Random) -> str:
    others = [n for n in doc.numbers if n != value]
    if others and rng.random() < 0.5:
        return rng.choice(others)
    number = float(value.replace(",", ""))
    is_int = "." not in value
    factor = rng.choice((0.5, 0.75, 1.5, 2, 3, 10)) if number > 20 else 1
    delta = rng.choice((-3, -2, -1, 1, 2, 3, 5))
    new = number * factor + (delta if factor == 1 else 0)
    if new <= 0:
        new = number + abs(delta)
    if is_int:
        out = str(int(round(new)))
        return f"{int(out):,}" if "," in value else out
    return f"{new:.{len(value.split('.')[1])}f}"


@register("light_rewrite", ENTAILMENT)
def light_rewrite(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    out = sentence
    if rng.random() < 0.5:
        out = _PAREN.sub("", out)
    if rng.random() < 0.5:
        out = _ATTRIBUTION.sub(".", out)
    for pattern, repl in rng.sample(_REWRITES, k=len(_REWRITES)):
        if pattern.search(out) and rng.random() < 0.6:
            out = pattern.sub(repl, out, count=1)
    out = out[:1].upper() + out[1:]
    return out if out != sentence else None


@register("clause_prefix", ENTAILMENT)
def clause_prefix(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """Keep the main clause: drop what follows a comma (a true, shorter claim)."""
    cut = [m.start() for m in re.finditer(r", (?:which|who|while|and|but|as|after|with|including|where)\b", sentence)]
    if not cut:
        return None
    head = sentence[: rng.choice(cut)].rstrip(" ,;")
    return head + "." if len(head.split()) >= 5 else None


@register("fusion", ENTAILMENT)
def fusion(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """Fuse the sentence with its neighbour (both in the same window, see data.py)."""
    idx = doc.sentences.index(sentence) if sentence in doc.sentences else -1
    if idx < 0 or idx + 1 >= len(doc.sentences):
        return None
    nxt = doc.sentences[idx + 1]
    if len(sentence.split()) + len(nxt.split()) > 55:
        return None
    first = sentence.rstrip(".!? ")
    nxt = re.sub(r"^(?:And|But|Also|However|Meanwhile|So),? ", "", nxt)
    second = nxt[0].lower() + nxt[1:] if nxt[:2] != "I " and not re.match(r"[A-Z]{2}|[A-Z][a-z]+ [A-Z]", nxt) else nxt
    return f"{first}{rng.choice((', and ', '; ', ' and '))}{second}"


# A full date and the coarser date it implies: "3 May 2024" / "May 3, 2024" -> "May 2024"; "May 2024" -> "2024".
_FULL_DATE = re.compile(r"\b(?:(\d{1,2}) (" + "|".join(_MONTHS) + r")|(" + "|".join(_MONTHS) + r") (\d{1,2}),?) (\d{4})\b")
_MONTH_YEAR = re.compile(r"\b(?:in )?(" + "|".join(_MONTHS) + r") (\d{4})\b")
_HEDGES = {"may": "will", "might": "will", "could": "will", "probably": "definitely", "possibly": "definitely",
           "likely": "certain", "some": "all", "suggest": "prove", "suggests": "proves", "suspect": "know"}
_HEDGE = re.compile(r"\b(" + "|".join(_HEDGES) + r")\b")


@register("date_generalize", ENTAILMENT)
def date_generalize(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """A less precise date is still true: "on May 3, 2024" -> "in May 2024", "in September 2019" -> "in 2019".
    The date swaps teach that another date contradicts; this teaches that a coarser one does not."""
    if (m := _FULL_DATE.search(sentence)) is not None:
        month = m.group(2) or m.group(3)
        before = sentence[: m.start()]
        on = re.search(r"\bon $", before)
        head = before[: on.start()] + "in " if on else before
        return head + f"{month} {m.group(5)}" + sentence[m.end():]
    if (m := _MONTH_YEAR.search(sentence)) is not None:
        return sentence[: m.start(1)] + m.group(2) + sentence[m.end():]
    return None


@register("hedge_dropped", NEUTRAL)
def hedge_dropped(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """A hedged statement made certain, every hedge at once ("results suggest it may lower" -> "results prove it
    will lower", "some patients" -> "all patients"): the context supports the possibility, not the certainty."""
    out = _HEDGE.sub(lambda m: _HEDGES[m.group(1)], sentence)
    return out if out != sentence else None


@register("number_swap", CONTRADICTION)
def number_swap(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    return _replace_one(_NUMBER, sentence, rng, lambda v: _other_number(v, doc, rng))


@register("date_swap", CONTRADICTION)
def date_swap(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    pattern, pool = rng.choice(((_MONTH, _MONTHS), (_DAY, _DAYS)))
    out = _replace_one(pattern, sentence, rng, lambda v: rng.choice([p for p in pool if p != v]))
    if out is None:
        out = _replace_one(_YEAR, sentence, rng, lambda v: str(int(v) + rng.choice((-3, -2, -1, 1, 2, 4))))
    return out


@register("entity_swap", CONTRADICTION)
def entity_swap(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    def repl(value: str) -> str | None:
        # Same shape (word count) and not a sub-part of the original: a fluent, hard swap.
        pool = [e for e in doc.entities if e not in value and value not in e
                and len(e.split()) == len(value.split()) and e not in sentence]
        return rng.choice(pool) if pool else None

    return _replace_one(_ENTITY, sentence, rng, repl)


@register("role_swap", CONTRADICTION)
def role_swap(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """Give one named entity's role to another the sentence names: "written by A and reviewed by B" ->
    "written by B and reviewed by A"; "A acquired B" -> "B acquired A". The relations are the ones the
    role-swap check reads (core.checks.roles), so training and checking agree on what a role is."""
    stated = [r for r in roles.relations(sentence) if not r.negated]
    swaps = [
        (one.agent_span, other.agent_span)
        for one in stated
        for other in stated
        if one.agent_span < other.agent_span and one.verb != other.verb and one.agent != other.agent
    ]
    swaps += [(r.agent_span, r.patient_span) for r in stated if r.patient_span is not None and r.patient != r.agent]
    if not swaps:
        return None
    first, second = sorted(rng.choice(swaps))
    if first[1] > second[0]:
        return None
    a, b = sentence[first[0] : first[1]], sentence[second[0] : second[1]]
    return sentence[: first[0]] + b + sentence[first[1] : second[0]] + a + sentence[second[1] :]


@register("pronoun_swap", CONTRADICTION)
def pronoun_swap(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    return _replace_one(_PRONOUN, sentence, rng, lambda v: _PRONOUNS[v])


@register("negation", CONTRADICTION)
def negation(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    if (m := _NEGATED.search(sentence)) is not None:
        return sentence[: m.start()] + m.group(1) + sentence[m.end():]
    if (m := _CONTRACTED.search(sentence)) is not None:
        return sentence[: m.start()] + _UNCONTRACT[m.group(1)] + sentence[m.end():]
    matches = list(_NEGATABLE.finditer(sentence))
    if not matches:
        return None
    m = rng.choice(matches)
    return sentence[: m.end()] + " not" + sentence[m.end():]


@register("antonym", CONTRADICTION)
def antonym(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    return _replace_one(_ANTONYM, sentence, rng, lambda v: _ANTONYMS[v])


@register("qualifier", NEUTRAL)
def qualifier(sentence: str, doc: Doc, rng: random.Random) -> str | None:
    """A true sentence plus an unsupported clause or adjective: the commonest RAG fabrication."""
    if rng.random() < 0.3:
        out = _replace_one(_DETERMINER, sentence, rng, lambda v: f"{v} {rng.choice(_ADJECTIVES)}")
        if out is not None:
            return out.replace(" a a", " an a").replace(" a e", " an e")
    body = sentence.rstrip()
    end = body[-1] if body[-1] in ".!?" else "."
    return body.rstrip(".!? ") + rng.choice(_QUALIFIERS) + end


def apply(name: str, sentence: str, doc: Doc, rng: random.Random) -> str | None:
    return PERTURBATIONS[name].fn(sentence, doc, rng)


def names(label: str) -> Sequence[str]:
    return [p.name for p in PERTURBATIONS.values() if p.label == label]
