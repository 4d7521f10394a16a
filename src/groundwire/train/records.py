"""Synthetic pairs over structured contexts: generated business records, rendered as the verifier renders them.

RAGTruth's data2text answers describe JSON business records, and the model saw no structured premise in
v1. No training file holds such records, so this module generates them (seeded, fictional names) and
writes claims about them the way LLM answers do. The premise is a window of the record rendered by
`groundwire.core.structured.render_structured`, exactly what the verifier scores at run time.

The labels teach what answers over records get wrong:
- entailment: an attribute, the hours, the rating, the location or a review's point, stated in prose
- contradiction: a yes read as no (or the reverse), another opening time, rating, city or price level
- neutral: an attribute the record leaves empty ("not given") or does not have, a day the hours do not
  list, a review point no review makes, and a true statement with an invented qualifier
"""

from __future__ import annotations

import json
import random
from typing import TypedDict, cast

from groundwire.core.structured import humanize, render_structured
from groundwire.train.perturb import CONTRADICTION, ENTAILMENT, NEUTRAL, SyntheticPair

_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_STATES = {"CA": "California", "PA": "Pennsylvania", "FL": "Florida", "AZ": "Arizona", "NV": "Nevada",
           "TN": "Tennessee", "IN": "Indiana", "MO": "Missouri", "LA": "Louisiana", "NJ": "New Jersey",
           "ID": "Idaho", "DE": "Delaware", "IL": "Illinois", "AB": "Alberta"}
_CITIES = {"CA": ("Santa Barbara", "Goleta", "Carpinteria"), "PA": ("Philadelphia", "Ardmore", "Media"),
           "FL": ("Tampa", "Clearwater", "Brandon"), "AZ": ("Tucson", "Marana"), "NV": ("Reno", "Sparks"),
           "TN": ("Nashville", "Franklin"), "IN": ("Indianapolis", "Carmel"), "MO": ("Saint Louis", "Kirkwood"),
           "LA": ("New Orleans", "Metairie"), "NJ": ("Cherry Hill", "Haddonfield"), "ID": ("Boise", "Meridian"),
           "DE": ("Wilmington", "Newark"), "IL": ("Edwardsville", "Belleville"), "AB": ("Edmonton", "St. Albert")}
_NAME_A = ("Golden", "Blue", "Little", "Rustic", "Urban", "Sunny", "Old Town", "Harbor", "Maple", "Red Door",
           "Silver", "Corner", "Green Leaf", "Copper", "Lucky", "Main Street", "Twin Oaks", "Bayside")
_NAME_B = {"Pizza": ("Pizzeria", "Pie Co.", "Slice"), "Mexican": ("Taqueria", "Cantina", "Tacos"),
           "Sushi Bars": ("Sushi", "Sushi House"), "Cafes": ("Cafe", "Coffee House"), "Bars": ("Tavern", "Pub", "Bar"),
           "Burgers": ("Burger Joint", "Grill"), "Thai": ("Thai Kitchen", "Thai Bistro"),
           "Breakfast & Brunch": ("Diner", "Brunch Spot"), "Bakeries": ("Bakery", "Bake Shop"),
           "Seafood": ("Oyster Bar", "Fish House"), "Italian": ("Trattoria", "Osteria"), "Chinese": ("Wok", "Garden")}
_EXTRA_CATEGORIES = ("Restaurants", "Food", "Nightlife", "Salad", "Sandwiches", "Vegetarian", "Desserts",
                     "American (New)", "Cocktail Bars", "Food Delivery Services", "Caterers", "Gluten-Free")
# key -> (what a yes says, what a no says)
_BOOL_ATTRS: dict[str, tuple[str, str]] = {
    "OutdoorSeating": ("offers outdoor seating", "does not offer outdoor seating"),
    "RestaurantsReservations": ("takes reservations", "does not take reservations"),
    "RestaurantsTakeOut": ("offers takeout", "does not offer takeout"),
    "RestaurantsDelivery": ("offers delivery", "does not offer delivery"),
    "RestaurantsGoodForGroups": ("is good for groups", "is not a good fit for groups"),
    "GoodForKids": ("is good for kids", "is not suitable for children"),
    "WheelchairAccessible": ("is wheelchair accessible", "is not wheelchair accessible"),
    "BusinessAcceptsCreditCards": ("accepts credit cards", "does not accept credit cards"),
    "HasTV": ("has TVs", "does not have a TV"),
    "DogsAllowed": ("allows dogs", "does not allow dogs"),
    "HappyHour": ("has a happy hour", "does not have a happy hour"),
    "Caters": ("offers catering", "does not offer catering"),
    "Music": ("plays music", "does not provide music"),
    "RestaurantsTableService": ("offers table service", "does not offer table service"),
    "BikeParking": ("has bike parking", "does not have bike parking"),
}
_PARKING = {"garage": "garage parking", "street": "street parking", "validated": "validated parking",
            "lot": "a parking lot", "valet": "valet parking"}
_AMBIENCE = ("casual", "romantic", "intimate", "classy", "trendy", "upscale", "hipster", "divey", "touristy")
_WIFI: dict[str | int, str] = {"free": "offers free Wi-Fi", "paid": "offers paid Wi-Fi", "no": "does not offer Wi-Fi"}
_ALCOHOL: dict[str | int, str] = {"full_bar": "has a full bar", "beer_and_wine": "serves beer and wine", "none": "does not serve alcohol"}
_NOISE: dict[str | int, str] = {"quiet": "is quiet", "average": "has an average noise level", "loud": "is loud"}
_PRICE: dict[str | int, str] = {1: "is inexpensive", 2: "is moderately priced", 3: "is pricey", 4: "is very expensive"}
_LEVELS: tuple[tuple[str, dict[str | int, str]], ...] = (
    ("WiFi", _WIFI), ("Alcohol", _ALCOHOL), ("NoiseLevel", _NOISE), ("RestaurantsPriceRange2", _PRICE))
"""Attributes that take one of a few levels, each level with its phrase."""
# Review aspects: aspect -> (positive sentence, negative sentence) in a review; (praised, criticised) in a claim.
_ASPECTS: dict[str, tuple[str, str, str, str]] = {
    "service": ("The staff were friendly and attentive.", "The service was slow and the staff seemed annoyed.",
                "customers praise the friendly service", "customers complain about slow service"),
    "food": ("The {dish} was delicious and fresh.", "The {dish} was bland and overcooked.",
             "reviewers enjoyed the {dish}", "reviewers found the {dish} disappointing"),
    "price": ("Prices are very reasonable for the portions.", "It is way overpriced for what you get.",
              "customers find the prices reasonable", "customers think it is overpriced"),
    "wait": ("Our order came out fast.", "We waited almost an hour for our food.",
             "food comes out quickly", "diners report long waits for their food"),
    "atmosphere": ("The place has a cozy, relaxed vibe.", "It is cramped and noisy inside.",
                   "reviewers like the cozy atmosphere", "reviewers say the space is cramped and noisy"),
    "cleanliness": ("Everything was spotless.", "The tables and restrooms were dirty.",
                    "reviewers note that it is clean", "reviewers mention dirty tables and restrooms"),
}
_DISHES = ("pizza", "burrito", "ramen", "pad thai", "fish tacos", "pancakes", "clam chowder", "burger",
           "croissants", "lasagna", "dumplings", "salmon", "carnitas", "brisket")
_FILLER = ("We came here on a Friday night.", "I had been meaning to try this place for a while.",
           "My friend recommended it.", "We sat near the window.", "I ordered for pickup.",
           "Parking was easy to find.", "I will definitely be back.", "Not sure I would return.")
_PLAIN = ("customers", "reviewers", "food comes", "diners")
"""Review-point predicates are whole sentences: they take no subject and are never fused."""
_INVENTED = (
    "It has been family-owned since 1998.", "The restaurant is popular with local college students.",
    "It was voted the best brunch spot in town.", "The menu changes with the seasons.",
    "It is known for its live jazz nights.", "The chef trained in Naples before opening it.",
    "It offers a loyalty program for regular customers.", "It recently expanded to a second location.",
    "The restaurant sources its ingredients from local farms.", "It hosts trivia nights every Wednesday.",
)
_QUALIFIERS = (", making it a favourite among locals", ", which is rare in the area", " at no extra charge",
               ", according to its owners", " every day of the week", ", especially on weekends",
               ", which has earned it several local awards", " in a historic building")


Attribute = bool | str | int | dict[str, bool] | None
"""A record attribute: a yes/no, a level ("free", a price 1-4), a group of yes/no, or null (not given)."""


class Review(TypedDict):
    review_stars: float
    review_date: str
    review_text: str
    _aspects: dict[str, bool]
    """What the review praises (True) or criticises (False); dropped before the record is rendered."""
    _dish: str


class BusinessRecord(TypedDict):
    name: str
    address: str
    city: str
    state: str
    categories: str
    hours: dict[str, str]
    attributes: dict[str, Attribute]
    business_stars: float
    review_info: list[Review]


def make_record(rng: random.Random) -> BusinessRecord:
    """One fictional business record in the shape of the Yelp records RAGTruth's data2text answers describe."""
    main = rng.choice(list(_NAME_B))
    state = rng.choice(list(_STATES))
    days = sorted(rng.sample(_DAYS, rng.randint(2, 7)), key=_DAYS.index)
    open_h, close_h = rng.choice((6, 7, 8, 10, 11, 16, 17)), rng.choice((14, 15, 20, 21, 22, 23))
    attrs: dict[str, Attribute] = {}
    for key in rng.sample(list(_BOOL_ATTRS), rng.randint(4, 9)):
        attrs[key] = rng.choices((True, False, None), (0.5, 0.3, 0.2))[0]
    if rng.random() < 0.7:
        attrs["BusinessParking"] = {k: rng.random() < 0.35 for k in _PARKING}
    if rng.random() < 0.6:
        attrs["Ambience"] = {k: rng.random() < 0.15 for k in _AMBIENCE}
    for key, values in _LEVELS:
        if rng.random() < 0.6:
            attrs[key] = rng.choice(list(values)) if rng.random() < 0.9 else None
    return {
        "name": f"{rng.choice(_NAME_A)} {rng.choice(_NAME_B[main])}",
        "address": f"{rng.randint(10, 9999)} {rng.choice(('State', 'Main', 'Oak', 'Market', 'Broad'))} St",
        "city": rng.choice(_CITIES[state]), "state": state,
        "categories": ", ".join(rng.sample([main, *rng.sample(_EXTRA_CATEGORIES, 3)], 4)),
        "hours": {d: f"{open_h}:0-{close_h}:{rng.choice((0, 0, 30))}" for d in days},
        "attributes": attrs,
        "business_stars": rng.choice((2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)),
        "review_info": [_review(rng) for _ in range(rng.randint(1, 3))],
    }


def _review(rng: random.Random) -> Review:
    aspects = {a: rng.random() < 0.6 for a in rng.sample(list(_ASPECTS), rng.randint(1, 3))}
    dish = rng.choice(_DISHES)
    sentences = [_ASPECTS[a][0 if good else 1].format(dish=dish) for a, good in aspects.items()]
    sentences.insert(rng.randint(0, len(sentences)), rng.choice(_FILLER))
    stars = float(min(5, max(1, round(sum(aspects.values()) / len(aspects) * 4 + 1 + rng.choice((-1, 0, 0, 1))))))
    return {"review_stars": stars, "review_date": f"20{rng.randint(15, 22)}-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
            "review_text": " ".join(sentences), "_aspects": aspects, "_dish": dish}


def _subject(record: BusinessRecord, rng: random.Random) -> str:
    return rng.choice((record["name"], record["name"], "The restaurant", "It", "The business"))


def _hours_phrase(day: str, span: str) -> str:
    start, end = span.split("-")
    return f"is open from {_clock(start)} to {_clock(end)} on {day}s"


def _clock(time: str) -> str:
    """"9:0" as "9:00"."""
    parts = time.split(":")
    return f"{int(parts[0])}:{int(parts[1]):02d}"


def _line(*path: str) -> str:
    """The start of the rendered line for a key path, as structured._render writes it."""
    label = " ".join(path)
    return f"{label[:1].upper()}{label[1:]}:"


Fact = tuple[str, str, str, tuple[str, ...]]
"""(label, kind, predicate, rendered lines the premise must hold for the label to be right)."""


def _facts(record: BusinessRecord, rng: random.Random) -> list[Fact]:
    """Labelled predicates about one record; a predicate follows a subject ("It ...")."""
    out: list[Fact] = []
    attrs = record["attributes"]
    for key, (yes, no) in _BOOL_ATTRS.items():
        line = (_line("attributes", humanize(key)),)
        if key not in attrs:
            out.append((NEUTRAL, "absent_attribute", rng.choice((yes, no)), ()))
        elif attrs[key] is None:
            out.append((NEUTRAL, "null_attribute", rng.choice((yes, no)), line))
        else:
            out.append((ENTAILMENT, "attribute", yes if attrs[key] else no, line))
            out.append((CONTRADICTION, "attribute_flip", no if attrs[key] else yes, line))
    for key, values in _LEVELS:
        line = (_line("attributes", humanize(key)),)
        if key not in attrs:
            out.append((NEUTRAL, "absent_attribute", rng.choice(list(values.values())), ()))
        elif attrs[key] is None:
            out.append((NEUTRAL, "null_attribute", rng.choice(list(values.values())), line))
        else:
            out.append((ENTAILMENT, "attribute", values[cast(str | int, attrs[key])], line))
            other = rng.choice([v for k, v in values.items() if k != attrs[key]])
            out.append((CONTRADICTION, "value_swap", other, line))
    for group, phrases in (("BusinessParking", _PARKING), ("Ambience", None)):
        if group not in attrs:
            continue
        for key, value in cast(dict[str, bool], attrs[group]).items():
            thing = phrases[key] if phrases else f"a {key} ambiance"
            line = (_line("attributes", humanize(group), humanize(key)),)
            out.append((ENTAILMENT if value else CONTRADICTION, "attribute" if value else "attribute_flip",
                        f"has {thing}", line))
            if not value:
                out.append((ENTAILMENT, "attribute", f"does not have {thing.removeprefix('a ')}", line))
    hours = record["hours"]
    for day in _DAYS:
        if day in hours:
            line = (_line("hours", humanize(day)),)
            out.append((ENTAILMENT, "hours", _hours_phrase(day, hours[day]), line))
            start, end = hours[day].split("-")
            shifted = f"{(int(start.split(':')[0]) + rng.choice((-2, -1, 1, 2))) % 24}:0-{end}"
            out.append((CONTRADICTION, "hours_swap", _hours_phrase(day, shifted), line))
        else:
            claim = rng.choice((f"is closed on {day}s", _hours_phrase(day, next(iter(hours.values())))))
            out.append((NEUTRAL, "day_not_listed", claim, ()))
    stars = record["business_stars"]
    line = (_line("business stars"),)
    out.append((ENTAILMENT, "rating", f"has a rating of {stars} stars", line))
    other_stars = rng.choice([s for s in (2.5, 3.0, 3.5, 4.0, 4.5) if s != stars])
    out.append((CONTRADICTION, "rating_swap", f"has a rating of {other_stars} stars", line))
    place = (_line("city"), _line("state"))
    out.append((ENTAILMENT, "location", f"is located in {record['city']}, {_STATES[record['state']]}", place))
    other_city = rng.choice([c for cs in _CITIES.values() for c in cs if c != record["city"]])
    out.append((CONTRADICTION, "location_swap", f"is located in {other_city}", place))
    out.append((ENTAILMENT, "category", f"is listed under {record['categories'].split(', ')[0]}",
                (_line("categories"),)))
    out.extend(_review_facts(record, rng))
    return out


def _review_facts(record: BusinessRecord, rng: random.Random) -> list[Fact]:
    said: dict[str, dict[bool, list[int]]] = {}
    for number, review in enumerate(record["review_info"], start=1):
        for aspect, good in review["_aspects"].items():
            said.setdefault(aspect, {}).setdefault(good, []).append(number)
    dish = record["review_info"][0]["_dish"]
    out: list[Fact] = []
    for aspect, (_, _, praised, criticised) in _ASPECTS.items():
        phrases = {True: praised.format(dish=dish), False: criticised.format(dish=dish)}
        if aspect not in said:
            out.append((NEUTRAL, "review_not_said", rng.choice(list(phrases.values())), ()))
        elif len(said[aspect]) == 1 and (aspect != "food" or len(record["review_info"]) == 1):
            # (food sentences name a dish, and another review may rate another dish)
            ((good, numbers),) = said[aspect].items()
            line = (_line(f"review info {rng.choice(numbers)}", "review text"),)
            out.append((ENTAILMENT, "review", phrases[good], line))
            out.append((CONTRADICTION, "review_flip", phrases[not good], line))
    return out


def _sentence(record: BusinessRecord, predicate: str, rng: random.Random) -> str:
    if predicate.startswith(_PLAIN):
        return f"{predicate[0].upper()}{predicate[1:]}."
    return f"{_subject(record, rng)} {predicate}."


def _window(rendered: list[str], required: tuple[str, ...], rng: random.Random,
            words: tuple[int, int]) -> str | None:
    """Consecutive rendered lines of about `words` words that hold every required line; None if they
    cannot fit in the upper bound."""
    need = [i for i, line in enumerate(rendered) if line.startswith(required)] if required else []
    if required and len({p for p in required if any(rendered[i].startswith(p) for i in need)}) < len(required):
        return None
    lo, hi = (min(need), max(need)) if need else ((i := rng.randrange(len(rendered))), i)
    total = sum(len(line.split()) for line in rendered[lo:hi + 1])
    if total > words[1]:
        return None
    budget = max(rng.randint(*words), total)
    while True:
        grow = [i for i in (lo - 1, hi + 1) if 0 <= i < len(rendered) and total + len(rendered[i].split()) <= budget]
        if not grow:
            break
        i = rng.choice(grow)
        lo, hi = min(lo, i), max(hi, i)
        total += len(rendered[i].split())
    return "\n".join(rendered[lo:hi + 1])


def record_pairs(n_records: int, per_record: int, rng: random.Random,
                 words: tuple[int, int] = (20, 160)) -> list[SyntheticPair]:
    """About `per_record` labelled pairs for each of `n_records` generated records."""
    out: list[SyntheticPair] = []
    for _ in range(n_records):
        record = make_record(rng)
        public = {**record, "review_info": [{k: v for k, v in r.items() if not k.startswith("_")}
                                            for r in record["review_info"]]}
        rendered = (render_structured(json.dumps(public)) or "").split("\n")
        facts = _facts(record, rng)
        by_label = {lab: [f for f in facts if f[0] == lab] for lab in (ENTAILMENT, NEUTRAL, CONTRADICTION)}
        for _ in range(per_record):
            label = rng.choices((ENTAILMENT, NEUTRAL, CONTRADICTION), (0.45, 0.3, 0.25))[0]
            if not by_label[label]:
                continue
            # Each kind of a label equally often (one record has many absent attributes but one rating).
            kind = rng.choice(sorted({f[1] for f in by_label[label]}))
            _, kind, predicate, required = rng.choice([f for f in by_label[label] if f[1] == kind])
            hypothesis = _sentence(record, predicate, rng)
            if label == ENTAILMENT and rng.random() < 0.2:
                # A true statement with an invented qualifier: the commonest data2text fabrication.
                hypothesis = hypothesis.rstrip(".") + rng.choice(_QUALIFIERS) + "."
                label, kind = NEUTRAL, "qualifier"
            elif label == NEUTRAL and rng.random() < 0.15:
                hypothesis, kind, required = rng.choice(_INVENTED), "invented", ()
            elif label == ENTAILMENT and rng.random() < 0.25 and not predicate.startswith(_PLAIN):
                # Two true statements fused into one sentence, as answers write them.
                _, _, second, more = rng.choice(by_label[ENTAILMENT])
                if second != predicate and not second.startswith(_PLAIN):
                    hypothesis, kind = f"{_subject(record, rng)} {predicate} and {second}.", "fusion"
                    required = required + more
            premise = _window(rendered, required, rng, words)
            if premise:
                out.append(SyntheticPair(premise, hypothesis, label, kind))
    return out

