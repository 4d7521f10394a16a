"""One spelling per unit: "5 kilometres", "5 kilometers" and "5 km" name the same quantity.

Read by the figure check (a claim's unit is compared with the context's in this spelling) and by the figure
canonicaliser (figures.py), which writes it into the text the model scores.
"""

from __future__ import annotations

_SPELLINGS: dict[str, tuple[str, ...]] = {
    "km": ("km", "kms", "kilometre", "kilometres", "kilometer", "kilometers"),
    "m": ("metre", "metres", "meter", "meters"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters"),
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters"),
    "mi": ("mi", "mile", "miles"),
    "ft": ("ft", "foot", "feet"),
    "in": ("inch", "inches"),
    "kg": ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes"),
    "g": ("gram", "grams", "gramme", "grammes"),
    "mg": ("mg", "milligram", "milligrams"),
    "lb": ("lb", "lbs"),
    "l": ("litre", "litres", "liter", "liters"),
    "ml": ("ml", "millilitre", "millilitres", "milliliter", "milliliters"),
    "h": ("h", "hr", "hrs", "hour", "hours"),
    "min": ("min", "mins", "minute", "minutes"),
    "s": ("sec", "secs", "second", "seconds"),
    "ms": ("ms", "millisecond", "milliseconds"),
    "gb": ("gb", "gigabyte", "gigabytes"),
    "mb": ("mb", "megabyte", "megabytes"),
    "kb": ("kb", "kilobyte", "kilobytes"),
    "tb": ("tb", "terabyte", "terabytes"),
    "mph": ("mph",),
    "kmh": ("kmh", "kph"),
}
UNIT_SPELLINGS: dict[str, str] = {spelling: unit for unit, spellings in _SPELLINGS.items() for spelling in spellings}
"""Every spelling (lower case) -> the unit's one spelling. Ambiguous short forms ("m": metres or million,
"in": inches or the preposition, "s") are left out as spellings, so they never change meaning."""


def canonical_unit(word: str) -> str:
    """The unit's one spelling, or the word itself (lower case) where it is no unit this table knows."""
    lowered = word.lower()
    return UNIT_SPELLINGS.get(lowered, lowered)
