"""Synthetic pairs over sentences that give two named entities different roles (issue 21, item 2).

The role-swap perturbation (train/perturb.py) needs a context sentence that states two roles, and the
training contexts hold few: 117 in 60,371 pairs of the v2 mix. This module writes such sentences itself
(seeded, fictional names), from the relations the role-swap check reads (core.roles): who wrote, reviewed,
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

from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL

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


@dataclass(frozen=True, slots=True)
class RolePair:
    premise: str
    hypothesis: str
    label: str
    kind: str


@dataclass(frozen=True, slots=True)
class _Event:
    sentence: str
    claims: tuple[tuple[str, str, str], ...]
    """(label, kind, claim) for every claim the event supports, contradicts or leaves open."""


def _person(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        surname = name.split()[1]
        if name not in taken and not any(surname in other for other in taken):
            taken.add(name)
            return name


def _company(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)}"
        if not any(name.split()[0] in other for other in taken):
            taken.add(name)
            return name


def _team(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{rng.choice(_TOWNS)} {rng.choice(_TEAMS)}"
        if not any(name.split()[0] in other for other in taken):
            taken.add(name)
            return name


def _document(rng: random.Random) -> _Event:
    taken: set[str] = set()
    a, b, doc = _person(rng, taken), _person(rng, taken), rng.choice(_DOCUMENTS)
    second, second_past = rng.choice((("reviewed", "reviewed"), ("edited", "edited"), ("approved", "approved")))
    sentence = rng.choice((
        f"The {doc} was written by {a} and {second} by {b}.",
        f"{a} wrote the {doc}, which was then {second} by {b}.",
        f"The {doc}, written by {a}, was {second} by {b} before publication.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_restated", f"{a} wrote the {doc}."),
        (ENTAILMENT, "role_restated", f"The {doc} was {second} by {b}."),
        (ENTAILMENT, "role_voice", f"{b} {second_past} the {doc}."),
        (CONTRADICTION, "role_swap", f"The {doc} was written by {b}."),
        (CONTRADICTION, "role_swap", f"{b} wrote the {doc}."),
        (CONTRADICTION, "role_swap", f"The {doc} was {second} by {a}."),
        (NEUTRAL, "role_unstated", f"The {doc} was translated by {b}."),
        (NEUTRAL, "role_detail", f"{a} wrote the {doc} in two weeks."),
    ))


def _acquisition(rng: random.Random) -> _Event:
    taken: set[str] = set()
    buyer, bought, year = _company(rng, taken), _company(rng, taken), rng.randint(1995, 2024)
    sentence = rng.choice((
        f"{buyer} acquired {bought} in {year}.",
        f"In {year}, {bought} was bought by {buyer}.",
        f"{bought} was acquired by {buyer} in {year}, after months of talks.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{bought} was acquired by {buyer}."),
        (ENTAILMENT, "role_voice", f"{buyer} bought {bought}."),
        (ENTAILMENT, "role_restated", f"{buyer} purchased {bought} in {year}."),
        (CONTRADICTION, "role_swap", f"{bought} acquired {buyer}."),
        (CONTRADICTION, "role_swap", f"{buyer} was acquired by {bought}."),
        (NEUTRAL, "role_detail", f"{buyer} acquired {bought} for ${rng.randint(2, 90)} million."),
        (NEUTRAL, "role_unstated", f"{buyer} sued {bought}."),
    ))


def _match(rng: random.Random) -> _Event:
    taken: set[str] = set()
    winner, loser = _team(rng, taken), _team(rng, taken)
    high = rng.randint(1, 5)
    low = rng.randint(0, high - 1)
    stage = rng.choice(("final", "semi-final", "opening match", "cup tie"))
    sentence = rng.choice((
        f"{winner} beat {loser} {high}-{low} in the {stage}.",
        f"In the {stage}, {loser} were defeated {high}-{low} by {winner}.",
        f"{winner} defeated {loser} in the {stage}, winning {high}-{low}.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{loser} lost to {winner}."),
        (ENTAILMENT, "role_voice", f"{loser} were beaten by {winner}."),
        (ENTAILMENT, "role_restated", f"{winner} won the {stage}."),
        (CONTRADICTION, "role_swap", f"{loser} beat {winner}."),
        (CONTRADICTION, "role_swap", f"{winner} lost to {loser} in the {stage}."),
        (NEUTRAL, "role_detail", f"{winner} beat {loser} after extra time."),
    ))


def _lawsuit(rng: random.Random) -> _Event:
    taken: set[str] = set()
    plaintiff, defendant = _company(rng, taken), _company(rng, taken)
    matter = rng.choice(("a patent dispute", "unpaid invoices", "a breach of contract", "a trademark"))
    sentence = rng.choice((
        f"{plaintiff} sued {defendant} over {matter}.",
        f"{defendant} was sued by {plaintiff} over {matter}.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{defendant} was sued by {plaintiff}."),
        (ENTAILMENT, "role_restated", f"{plaintiff} took legal action against {defendant}."),
        (CONTRADICTION, "role_swap", f"{defendant} sued {plaintiff}."),
        (CONTRADICTION, "role_swap", f"{plaintiff} was sued by {defendant}."),
        (NEUTRAL, "role_detail", f"{plaintiff} won its lawsuit against {defendant}."),
    ))


def _founding(rng: random.Random) -> _Event:
    taken: set[str] = set()
    founder, leader = _person(rng, taken), _person(rng, taken)
    company, year = _company(rng, taken), rng.randint(1970, 2020)
    sentence = rng.choice((
        f"{company} was founded by {founder} in {year} and is now led by {leader}.",
        f"{founder} founded {company} in {year}; today the company is led by {leader}.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{founder} founded {company}."),
        (ENTAILMENT, "role_restated", f"{leader} leads {company}."),
        (CONTRADICTION, "role_swap", f"{company} was founded by {leader}."),
        (CONTRADICTION, "role_swap", f"{leader} founded {company}."),
        (NEUTRAL, "role_unstated", f"{company} was acquired by {founder}."),
        (NEUTRAL, "role_detail", f"{founder} founded {company} with a loan from a bank."),
    ))


def _succession(rng: random.Random) -> _Event:
    taken: set[str] = set()
    new, old, company = _person(rng, taken), _person(rng, taken), _company(rng, taken)
    post = rng.choice(("chief executive", "finance director", "head of research", "chair of the board"))
    sentence = rng.choice((
        f"{company} hired {new} to replace {old} as {post}.",
        f"{old} was replaced as {post} of {company} by {new}.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_restated", f"{new} replaced {old} as {post}."),
        (ENTAILMENT, "role_voice", f"{new} is the new {post} of {company}."),
        (CONTRADICTION, "role_swap", f"{old} replaced {new} as {post}."),
        (CONTRADICTION, "role_swap", f"{old} was hired as the new {post}."),
        (NEUTRAL, "role_detail", f"{old} retired after twenty years at {company}."),
    ))


def _film(rng: random.Random) -> _Event:
    taken: set[str] = set()
    director, composer = _person(rng, taken), _person(rng, taken)
    title = f"The {rng.choice(('Silent', 'Last', 'Northern', 'Hidden', 'Long'))} {rng.choice(('Harbor', 'Winter', 'Road', 'Garden', 'Signal'))}"
    sentence = rng.choice((
        f"{title} was directed by {director}, with music composed by {composer}.",
        f"{director} directed {title}, and {composer} composed its score.",
    ))
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{director} directed {title}."),
        (ENTAILMENT, "role_restated", f"The music of {title} was composed by {composer}."),
        (CONTRADICTION, "role_swap", f"{title} was directed by {composer}."),
        (CONTRADICTION, "role_swap", f"{director} composed the music for {title}."),
        (NEUTRAL, "role_unstated", f"{title} was produced by {director}."),
    ))


def _interview(rng: random.Random) -> _Event:
    taken: set[str] = set()
    host, guest = _person(rng, taken), _person(rng, taken)
    show = rng.choice(("podcast", "evening news", "radio programme", "magazine"))
    sentence = f"{host} interviewed {guest} for the {show}."
    return _Event(sentence, (
        (ENTAILMENT, "role_voice", f"{guest} was interviewed by {host}."),
        (CONTRADICTION, "role_swap", f"{guest} interviewed {host}."),
        (CONTRADICTION, "role_swap", f"{host} was interviewed by {guest}."),
        (NEUTRAL, "role_detail", f"{host} interviewed {guest} for two hours."),
    ))


_EVENTS: tuple[Callable[[random.Random], _Event], ...] = (
    _document, _acquisition, _match, _lawsuit, _founding, _succession, _film, _interview,
)


def role_pairs(n_events: int, per_event: int, rng: random.Random) -> list[RolePair]:
    """`per_event` labelled pairs (at most) for each of `n_events` generated events: entailment, contradiction
    and neutral in turn, so the labels stay balanced; the premise is the event's sentence among 0-3 fillers."""
    out: list[RolePair] = []
    labels = (ENTAILMENT, CONTRADICTION, NEUTRAL)
    for i in range(n_events):
        event = rng.choice(_EVENTS)(rng)
        fillers = rng.sample(_FILLERS, rng.randint(0, 3))
        at = rng.randint(0, len(fillers))
        premise = " ".join([*fillers[:at], event.sentence, *fillers[at:]])
        for j in range(per_event):
            label = labels[(i + j) % len(labels)]
            options = [c for c in event.claims if c[0] == label]
            _, kind, claim = rng.choice(options)
            out.append(RolePair(premise, claim, label, kind))
    return out
