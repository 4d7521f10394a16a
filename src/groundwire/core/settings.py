"""The settings of a check, as one value: what groundwire.toml's [verify] section says, what every surface hands to
`groundwire.pipeline.build_verifier`, and what a `Verifier` reads (`Verifier(scorer, settings)`).

It lives in core, below groundwire.config (which reads it from the file and the environment), so that the verifier
can hold it whole. Names in it (`scorer`, `cascade`, `pruner`, decomposer = "llm") are resolved by
`pipeline.build_verifier`; the verifier itself receives objects.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import RouteMode, ordered

__all__ = [
    "RENAMED_OPTIONS",
    "CheckSettings",
    "Section",
    "moved_settings_error",
    "option_error",
    "refuse_unknown_options",
]


class Section(BaseModel):
    """A section of groundwire.toml: frozen, and extra="forbid", so a misspelt key is an error, not a silently
    ignored setting."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckSettings(Section):
    """How a check is assembled: the [verify] section of groundwire.toml, and what every surface (check, eval,
    batch, serve, repair, generate, eval-loop) hands to `groundwire.pipeline.build_verifier`."""

    accept_at: float | None = Field(None, ge=0.0, le=1.0)
    """None: the scorer's calibrated threshold, else 0.8."""
    reject_at: float | None = Field(None, ge=0.0, le=1.0)
    """None: the scorer's calibrated threshold, else 0.2."""
    route: RouteMode = "three-way"
    """"three-way": accept / escalate / reject, the band between the thresholds left to the judge or a person.
    "decide": every answer and claim gets a committed verdict at one threshold (`decide_at`): accept at or above
    it, reject below; nothing is escalated or UNRESOLVED. Excludes `judge` and `cascade`, which resolve the band."""
    decide_at: float | None = Field(None, ge=0.0, le=1.0)
    """The threshold of route = "decide". None: the scorer's calibrated one, else the midpoint of accept_at and
    reject_at (the report warns). It must lie above reject_at, where the checks cap a claim."""
    scorer: str | None = None
    """Scorer name or path; None lets the verifier pick its default."""
    require_citations: bool = False
    decomposer: Literal["rules", "llm"] = "rules"
    """How answers are split into claims: the rule-based splitter, or the [llm] endpoint (rules as fallback)."""
    pruner: Literal["none", "lexical", "embedding"] = "none"
    """Pair pruning (groundwire.core.pruning): "none" scores the exact claims x windows matrix."""
    canonical_figures: bool = True
    """The scorer and the overlap features read figures in one spelling ("3,600" as "3600", "five" as "5", "12
    kilometres" as "12 km") in context and claim alike. On since calibration v6, which was fitted this way (what
    it changed: docs/accuracy.md)."""
    meaning: bool | None = None
    """The meaning layer (core.meaning): each claim aligned to its best evidence sentence by all-MiniLM-L6-v2, the
    paraphrase gate and the combiner's meaning features. None: as the scorer was calibrated (on for the bundled
    model when its calibration says so, off for an uncalibrated scorer such as "lexical")."""
    entities: bool = False
    """The opt-in entities check (core/checks/entities.py, `pip install groundwire[entities]`): names of a claim
    found nowhere in the context, and agent/patient swaps beyond core/checks/roles.py, read by spaCy's small English
    pipeline. Signals (they cap a claim mid-band). Off by default, for its cost per process and what it fires on
    (docs/how-it-works.md, "The meaning layer")."""
    judge: bool = False
    """Send escalated claims to the [llm] judge (the CLI's --judge; the service decides per request)."""
    cascade: str | None = None
    """A second, larger scorer (name or path, e.g. "onnx:/models/larger-bundle") that checks again every answer the
    first escalates, with the same claims and its own calibrated thresholds (accept_at / reject_at above apply to
    the first stage only). The judge, when on, then sees what the second stage leaves open. None: no cascade."""
    profile: str | None = None
    """A domain profile directory (`groundwire adapt`): thresholds, and a combiner, fitted on this deployment's own
    labelled answers, over the scorer's calibration; refused when it was built on another model. None: the scorer's."""

    @model_validator(mode="after")
    def _ordered(self) -> CheckSettings:
        if self.accept_at is not None and self.reject_at is not None:
            ordered((self.accept_at, self.reject_at))
        return self

    @model_validator(mode="after")
    def _decided(self) -> CheckSettings:
        # Decided verdicts leave no band: a judge or a cascade stage would never be asked, so both are refused.
        if self.route == "decide" and self.judge:
            raise ValueError(
                'route = "decide" and the judge exclude each other: decided verdicts leave nothing escalated for the '
                'judge; use route = "three-way" with the judge, or drop the judge (--judge, [verify] judge)'
            )
        if self.route == "decide" and self.cascade is not None:
            raise ValueError(
                'route = "decide" and cascade exclude each other: decided verdicts leave nothing escalated for a '
                'second stage; use route = "three-way" with the cascade, or drop [verify] cascade'
            )
        return self

    def next_stage(self) -> CheckSettings:
        """The settings of a cascade's second stage: these, less what belongs to the first stage alone (its
        thresholds and routing: the second stage keeps its own calibrated ones) and the cascade itself."""
        return self.model_copy(
            update={"accept_at": None, "reject_at": None, "route": "three-way", "decide_at": None, "cascade": None}
        )

    def named_parts(self) -> frozenset[str]:
        """The parts these settings name and a verifier receives as objects, made by `pipeline.build_verifier`: an
        LLM "decomposer", a "pruner", a "cascade" stage."""
        named = {
            "decomposer": self.decomposer == "llm",
            "pruner": self.pruner != "none",
            "cascade": self.cascade is not None,
        }
        return frozenset(part for part, is_named in named.items() if is_named)

    def overridden(self, **flags: object) -> CheckSettings:
        """These settings with the command-line flags that were given (None = not given) put over them."""
        given = {key: value for key, value in flags.items() if value is not None}
        if not given:
            return self
        try:
            return self.model_validate({**self.model_dump(), **given})
        except ValidationError as exc:
            raise InputError(f"invalid check settings: {exc}", code=ErrorCode.INVALID_SETTINGS) from None


RENAMED_OPTIONS: Mapping[str, str] = {
    "threshold": "accept_at",  # an adapter's one cut (release 0.1): routing has two thresholds, accept_at / reject_at
    "route_mode": "route",
    "checks_on": "entities",  # checks_on=("entities",) is entities=True
    "score": "metric",  # an adapter's quantity (release 0.1: score="share" / "min"); `score` is the answer score
}
"""Keywords an entry point took once, and the option that replaced each: named in the TypeError that refuses them."""

_WHY_RENAMED = {
    "accept_at": " (and reject_at=): passing follows groundwire's routing, which accepts at or above accept_at, "
    "rejects at or below reject_at and escalates the band between; there is no single threshold (docs/adapters.md)",
    "metric": ' (score="share" is metric="supported_share", score="min" is metric="score"): on every groundwire '
    "surface `score` is the answer score, the weakest claim's (docs/adapters.md)",
}


def option_error(where: str, name: str, accepted: Collection[str], *, checked_by: str | None = None) -> TypeError:
    """The one error for a keyword an entry point does not take (every library call, `Verifier`, every adapter): a
    TypeError that names the option that replaced it, or the closest one it takes. A bad value of a known option
    is a ValueError instead (pydantic's, or `InputError`). `checked_by`: for a call that logs results checked
    already (Phoenix, Langfuse), the call whose option it is ("verify_many()")."""
    replacement = RENAMED_OPTIONS.get(name, name)
    why = _WHY_RENAMED.get(replacement, "")
    if replacement in accepted and replacement != name:
        return TypeError(f"{where} takes no {name}=: use {replacement}={why}")
    if checked_by is not None and replacement in CheckSettings.model_fields:
        return TypeError(
            f"{where} takes no {name}=: it logs results checked already; give {replacement}= to the "
            f"{checked_by} call that checks them"
        )
    close = difflib.get_close_matches(name, accepted, n=1)
    hint = f"; did you mean {close[0]}=?" if close else ""
    takes = ", ".join(f"{option}=" for option in sorted(accepted))
    return TypeError(f"{where} got an unexpected keyword argument {name!r}{hint} (it takes {takes})")


def moved_settings_error(moved: Iterable[str], accepted: Collection[str]) -> TypeError:
    """Verifier's keywords that are settings (those of release 0.1 among them): they go in its CheckSettings, which
    the error says; any other keyword, `option_error` against what Verifier() takes (`accepted`)."""
    moved = list(moved)
    if unknown := [name for name in moved if RENAMED_OPTIONS.get(name, name) not in CheckSettings.model_fields]:
        return option_error("Verifier()", unknown[0], accepted)
    names = ", ".join(f"{name}=" for name in moved)
    fields = ", ".join(f"{RENAMED_OPTIONS.get(name, name)}=..." for name in moved)
    return TypeError(
        f"Verifier({names}) moved into the settings: write Verifier(scorer, CheckSettings({fields})) "
        "(route_mode= is route=, checks_on=('entities',) is entities=True, threshold= is accept_at=)"
    )


def refuse_unknown_options(where: str, given: Iterable[str], accepted: Collection[str]) -> None:
    """Raise `option_error` for the first keyword in `given` that is not in `accepted`, so that no option is ignored."""
    for name in given:
        if name not in accepted:
            raise option_error(where, name, accepted)
