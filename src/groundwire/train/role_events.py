"""Synthetic pairs over sentences that give two named entities different roles (issue 21, item 2).

The role-swap perturbation (train/perturb.py) needs a context sentence that states two roles, and the
training contexts hold few: 117 in 60,371 pairs of the v2 mix. This module writes such sentences itself
(seeded, fictional names), from the relations the role-swap check reads (core.checks.roles): who wrote, reviewed,
founded, led, acquired, sued, beat, replaced, interviewed or directed whom. Each event is a short passage
(the role sentence among unrelated ones), and its claims teach:

- entailment: a role restated, in the other voice where there is one ("B was acquired by A", "B lost to A");
- contradiction: the role given to the other entity ("B acquired A", "The report was written by B");
- neutral: a role the passage gives nobody, or the stated event with an invented detail.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, SyntheticPair

_FIRST = ("Alice", "Tomás", "Priya", "Jonas", "Mei", "Omar", "Greta", "Kwame", "Sofia", "Daniel", "Aiko", "Lena",
          "Rafael", "Nadia", "Viktor", "Hannah", "Samuel", "Ines", "Farid", "Clara", "Mateo", "Yara", "Erik",
          "Zainab", "Lucas", "Ingrid", "Tariq", "Maya", "Oskar", "Leila")
_LAST = ("Novak", "Brennan", "Okafor", "Lindqvist", "Takahashi", "Moreau", "Castillo", "Haddad", "Kowalski",
         "Whitfield", "Ferreira", "Adeyemi", "Rossi", "Nakamura", "Osei", "Hartmann", "Delgado", "Varga", "Quinn",
         "Petrov", "Achebe", "Larsen", "Romano", "Sato", "Mbeki", "Duarte", "Keller", "Ahmadi", "Byrne", "Ivanova")
_COMPANY_A = ("Norvex", "Calder", "Brightline", "Kestrel", "Halden", "Orbis", "Veltro", "Marlow", "Quantica",
              "Sundial", "Tessaro", "Ironbark", "Lumen", "Pinecrest", "Arclight", "Bellweather", "Corvid", "Drayton")
_COMPANY_B = ("Systems", "Labs", "Foods", "Energy", "Analytics", "Robotics", "Health", "Media", "Logistics",
              "Pharma", "Software", "Motors", "Capital", "Networks")
_TOWNS = ("Riverton", "Ashford", "Millbrook", "Eastbury", "Stonehaven", "Westmere", "Harrowgate", "Kingsbridge",
          "Oakvale", "Fairhaven", "Redcliff", "Northam")
_TEAMS = ("Rovers", "United", "Hawks", "Wanderers", "Athletic", "Rangers", "Falcons", "City")
_DOCUMENTS = ("report", "audit", "policy draft", "grant proposal", "safety review", "annual summary", "white paper",
              "design document", "market study", "handbook")
_FILLERS = (
    "The announcement was made on a Tuesday morning.",
    "Further details are expected later in the year.",
    "Several local newspapers covered the story.",
    "The decision surprised some observers.",
    "A spokesperson declined to comment on the timing.",
    "Officials said the process had taken several months.",
    "The news was welcomed by most of those involved.",
    "Questions from the press were taken afterwards.",
    "It was the first event of its kind in the region.",
    "Both sides described the outcome as important.",
)


Slot = Callable[[random.Random, set[str]], str]
"""Draws one value of an event's slot; `taken` holds the names already drawn, so two roles never share one."""


def _unique(draw: Callable[[random.Random], str]) -> Slot:
    def slot(rng: random.Random, taken: set[str]) -> str:
        while True:
            name = draw(rng)
            if not any(set(name.split()) & set(other.split()) for other in taken):
                taken.add(name)
                return name

    return slot


def _pick(*options: str) -> Slot:
    return lambda rng, taken: rng.choice(options)


def _number(low: int, high: int) -> Slot:
    return lambda rng, taken: str(rng.randint(low, high))


def _score(rng: random.Random, taken: set[str]) -> str:
    high = rng.randint(1, 5)
    return f"{high}-{rng.randint(0, high - 1)}"


_PERSON = _unique(lambda rng: f"{rng.choice(_FIRST)} {rng.choice(_LAST)}")
_COMPANY = _unique(lambda rng: f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)}")
_TEAM = _unique(lambda rng: f"{rng.choice(_TOWNS)} {rng.choice(_TEAMS)}")
_TITLE = _unique(lambda rng: f"The {rng.choice(('Silent', 'Last', 'Northern', 'Hidden', 'Long'))} "
                             f"{rng.choice(('Harbor', 'Winter', 'Road', 'Garden', 'Signal'))}")


@dataclass(frozen=True, slots=True)
class _Event:
    """An event with two roles: its slots, the sentences that state it, and the claims about it."""

    slots: dict[str, Slot]
    sentences: tuple[str, ...]
    claims: tuple[tuple[str, str, str], ...]
    """(label, kind, claim template) for every claim the event supports, contradicts or leaves open."""


_EVENTS = (
    _Event(
        {"a": _PERSON, "b": _PERSON, "doc": _pick(*_DOCUMENTS), "role": _pick("reviewed", "edited", "approved")},
        ("The {doc} was written by {a} and {role} by {b}.", "{a} wrote the {doc}, which was then {role} by {b}.",
         "The {doc}, written by {a}, was {role} by {b} before publication."),
        ((ENTAILMENT, "role_restated", "{a} wrote the {doc}."),
         (ENTAILMENT, "role_restated", "The {doc} was {role} by {b}."),
         (ENTAILMENT, "role_voice", "{b} {role} the {doc}."),
         (CONTRADICTION, "role_swap", "The {doc} was written by {b}."),
         (CONTRADICTION, "role_swap", "{b} wrote the {doc}."),
         (CONTRADICTION, "role_swap", "The {doc} was {role} by {a}."),
         (NEUTRAL, "role_unstated", "The {doc} was translated by {b}."),
         (NEUTRAL, "role_detail", "{a} wrote the {doc} in two weeks.")),
    ),
    _Event(
        {"buyer": _COMPANY, "bought": _COMPANY, "year": _number(1995, 2024), "millions": _number(2, 90)},
        ("{buyer} acquired {bought} in {year}.", "In {year}, {bought} was bought by {buyer}.",
         "{bought} was acquired by {buyer} in {year}, after months of talks."),
        ((ENTAILMENT, "role_voice", "{bought} was acquired by {buyer}."),
         (ENTAILMENT, "role_voice", "{buyer} bought {bought}."),
         (ENTAILMENT, "role_restated", "{buyer} purchased {bought} in {year}."),
         (CONTRADICTION, "role_swap", "{bought} acquired {buyer}."),
         (CONTRADICTION, "role_swap", "{buyer} was acquired by {bought}."),
         (NEUTRAL, "role_detail", "{buyer} acquired {bought} for ${millions} million."),
         (NEUTRAL, "role_unstated", "{buyer} sued {bought}.")),
    ),
    _Event(
        {"winner": _TEAM, "loser": _TEAM, "score": _score,
         "stage": _pick("final", "semi-final", "opening match", "cup tie")},
        ("{winner} beat {loser} {score} in the {stage}.", "In the {stage}, {loser} were defeated {score} by {winner}.",
         "{winner} defeated {loser} in the {stage}, winning {score}."),
        ((ENTAILMENT, "role_voice", "{loser} lost to {winner}."),
         (ENTAILMENT, "role_voice", "{loser} were beaten by {winner}."),
         (ENTAILMENT, "role_restated", "{winner} won the {stage}."),
         (CONTRADICTION, "role_swap", "{loser} beat {winner}."),
         (CONTRADICTION, "role_swap", "{winner} lost to {loser} in the {stage}."),
         (NEUTRAL, "role_detail", "{winner} beat {loser} after extra time.")),
    ),
    _Event(
        {"plaintiff": _COMPANY, "defendant": _COMPANY,
         "matter": _pick("a patent dispute", "unpaid invoices", "a breach of contract", "a trademark")},
        ("{plaintiff} sued {defendant} over {matter}.", "{defendant} was sued by {plaintiff} over {matter}."),
        ((ENTAILMENT, "role_voice", "{defendant} was sued by {plaintiff}."),
         (ENTAILMENT, "role_restated", "{plaintiff} took legal action against {defendant}."),
         (CONTRADICTION, "role_swap", "{defendant} sued {plaintiff}."),
         (CONTRADICTION, "role_swap", "{plaintiff} was sued by {defendant}."),
         (NEUTRAL, "role_detail", "{plaintiff} won its lawsuit against {defendant}.")),
    ),
    _Event(
        {"founder": _PERSON, "leader": _PERSON, "company": _COMPANY, "year": _number(1970, 2020)},
        ("{company} was founded by {founder} in {year} and is now led by {leader}.",
         "{founder} founded {company} in {year}; today the company is led by {leader}."),
        ((ENTAILMENT, "role_voice", "{founder} founded {company}."),
         (ENTAILMENT, "role_restated", "{leader} leads {company}."),
         (CONTRADICTION, "role_swap", "{company} was founded by {leader}."),
         (CONTRADICTION, "role_swap", "{leader} founded {company}."),
         (NEUTRAL, "role_unstated", "{company} was acquired by {founder}."),
         (NEUTRAL, "role_detail", "{founder} founded {company} with a loan from a bank.")),
    ),
    _Event(
        {"new": _PERSON, "old": _PERSON, "company": _COMPANY,
         "post": _pick("chief executive", "finance director", "head of research", "chair of the board")},
        ("{company} hired {new} to replace {old} as {post}.", "{old} was replaced as {post} of {company} by {new}."),
        ((ENTAILMENT, "role_restated", "{new} replaced {old} as {post}."),
         (ENTAILMENT, "role_voice", "{new} is the new {post} of {company}."),
         (CONTRADICTION, "role_swap", "{old} replaced {new} as {post}."),
         (CONTRADICTION, "role_swap", "{old} was hired as the new {post}."),
         (NEUTRAL, "role_detail", "{old} retired after twenty years at {company}.")),
    ),
    _Event(
        {"director": _PERSON, "composer": _PERSON, "title": _TITLE},
        ("{title} was directed by {director}, with music composed by {composer}.",
         "{director} directed {title}, and {composer} composed its score."),
        ((ENTAILMENT, "role_voice", "{director} directed {title}."),
         (ENTAILMENT, "role_restated", "The music of {title} was composed by {composer}."),
         (CONTRADICTION, "role_swap", "{title} was directed by {composer}."),
         (CONTRADICTION, "role_swap", "{director} composed the music for {title}."),
         (NEUTRAL, "role_unstated", "{title} was produced by {director}.")),
    ),
    _Event(
        {"host": _PERSON, "guest": _PERSON, "show": _pick("podcast", "evening news", "radio programme", "magazine")},
        ("{host} interviewed {guest} for the {show}.",),
        ((ENTAILMENT, "role_voice", "{guest} was interviewed by {host}."),
         (CONTRADICTION, "role_swap", "{guest} interviewed {host}."),
         (CONTRADICTION, "role_swap", "{host} was interviewed by {guest}."),
         (NEUTRAL, "role_detail", "{host} interviewed {guest} for two hours.")),
    ),
)


def role_pairs(n_events: int, per_event: int, rng: random.Random) -> list[SyntheticPair]:
    """`per_event` labelled pairs (at most) for each of `n_events` generated events: entailment, contradiction
    and neutral in turn, so the labels stay balanced; the premise is the event's sentence among 0-3 fillers."""
    out: list[SyntheticPair] = []
    labels = (ENTAILMENT, CONTRADICTION, NEUTRAL)
    for i in range(n_events):
        event = rng.choice(_EVENTS)
        taken: set[str] = set()
        values = {name: draw(rng, taken) for name, draw in event.slots.items()}
        fillers = rng.sample(_FILLERS, rng.randint(0, 3))
        at = rng.randint(0, len(fillers))
        premise = " ".join([*fillers[:at], rng.choice(event.sentences).format(**values), *fillers[at:]])
        for j in range(per_event):
            label = labels[(i + j) % len(labels)]
            _, kind, claim = rng.choice([c for c in event.claims if c[0] == label])
            out.append(SyntheticPair(premise, claim.format(**values), label, kind))
    return out
