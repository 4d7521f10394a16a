"""A fixed set of pairs whose fp32 outputs are recorded at export time, to check the shipped int8 model."""

from __future__ import annotations

import json
from pathlib import Path

from groundwire.train.export import torch_probs

_P1 = ("Northwind Traders accepts returns within 30 days of delivery. Refunds are paid to the original card "
       "within 5 business days. Items marked final sale cannot be returned.")
_P2 = ("The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres tall and was "
       "the tallest man-made structure in the world until 1930.")
_P3 = ("Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891, where she studied physics and "
       "mathematics at the Sorbonne. She won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.")
_P4 = ("Tinker's Burgers is in Summerland, CA. Outdoor seating: yes. WiFi: no. Takes reservations: no. "
       "Reviewers praise the sourdough bacon cheeseburger but complain about slow service.")
_P5 = ("The study followed 2,400 adults for ten years. Participants who walked at least 7,000 steps a day had "
       "a 50 percent lower risk of death than those who walked fewer steps.")

PAIRS: tuple[tuple[str, str], ...] = (
    (_P1, "Returns are accepted within 30 days of delivery."),
    (_P1, "Refunds are paid within 5 business days."),
    (_P1, "Returns are accepted within 60 days of delivery."),
    (_P1, "Final sale items can be returned."),
    (_P1, "Refunds are paid in cash at any store."),
    (_P1, "Northwind Traders offers free return shipping."),
    (_P2, "The Eiffel Tower was completed in 1889."),
    (_P2, "The Eiffel Tower is 330 metres tall."),
    (_P2, "The Eiffel Tower was completed in 1901."),
    (_P2, "The Eiffel Tower is located in London."),
    (_P2, "The tower was built for the World's Fair."),
    (_P2, "It took more than ten thousand workers to build the tower."),
    (_P3, "Marie Curie was born in Warsaw."),
    (_P3, "She won two Nobel Prizes."),
    (_P3, "Marie Curie was born in Paris in 1867."),
    (_P3, "She never won a Nobel Prize."),
    (_P3, "She studied at the Sorbonne."),
    (_P3, "She was the first woman to teach at Oxford."),
    (_P4, "Tinker's Burgers has outdoor seating."),
    (_P4, "Tinker's Burgers offers free WiFi."),
    (_P4, "The restaurant is located in Summerland, California."),
    (_P4, "Reviewers love the fast service."),
    (_P4, "The restaurant is open 24 hours a day."),
    (_P5, "The study followed 2,400 adults."),
    (_P5, "The study lasted ten years."),
    (_P5, "Walking 7,000 steps a day was linked to a 50 percent lower risk of death."),
    (_P5, "The study followed 24,000 adults."),
    (_P5, "Walking more had no effect on the risk of death."),
    (_P5, "The study was funded by a shoe company."),
    ("a", "b"),
)


def write_fixture(model_dir: str | Path, path: str | Path, *, max_length: int) -> None:
    probs = torch_probs(model_dir, PAIRS, max_length=max_length)
    Path(path).write_text(json.dumps({"max_length": max_length, "pairs": [list(p) for p in PAIRS],
                                      "fp32_probs": [[round(x, 6) for x in row] for row in probs]}, indent=1) + "\n")
