"""Domain profiles: a deployment's own calibration, fitted on its labelled answers, beside the bundle's.

A profile is a directory holding `profile.json` (the base model it was fitted on, its thresholds, the labels it
saw and its cross-validated rates), when it refits the combiner `combiner.json`, and when it fine-tuned the model
(`adapt --fine-tune`, format 2) that model as an int8 bundle in `model/`. `groundwire adapt` writes it
(groundwire.calibration.adapt); `pipeline.build_verifier` applies it by wrapping the scorer in a `ProfiledScorer`, whose
calibration is the profile's over the base scorer's (and whose scores are the profile's model's, where it has one),
so the verifier never knows which calibration it runs.

A profile written by `adapt` is versioned (calibration.versions): its files sit in `DIR/v0001/`, `DIR/v0002/`, ...,
and the symlink `DIR/current` names the version in force, replaced atomically; `load_profile` reads the version
that link names, so a replacement is never seen half done. `DIR/profile.json` (a link through `current`) keeps the
folder readable as before. A folder with its files at the top (hand-made, or written before versions) is read as it
is, with no version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Thresholds, ordered
from groundwire.scoring import get_scorer
from groundwire.scoring.base import Calibration, PairScores, Scorer, calibration_of
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner, load_combiner

PROFILE_FILE = "profile.json"
COMBINER_FILE = "combiner.json"
CURRENT = "current"
"""The symlink in a versioned profile's folder naming the version in force (calibration.versions)."""
MODEL_DIR = "model"
"""Where a fine-tuned profile keeps its model bundle (profile.json's model.dir)."""
PROFILE_FORMAT = 1
"""Bumped when profile.json changes incompatibly; a profile of another format is refused."""
TUNED_FORMAT = 2
"""A profile with a fine-tuned model: a version that knows only format 1 refuses it rather than score with the base
model and route by thresholds fitted on the tuned one's scores."""
FORMATS = (PROFILE_FORMAT, TUNED_FORMAT)


class ProfileError(InputError):
    """A profile that cannot be used: not one (invalid_profile), or fitted on another model (profile_model_mismatch)."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A loaded profile: what it changes in the base scorer's calibration, and what it was fitted on."""

    name: str
    """The directory's name: what a report names as the profile that routed the answer."""
    path: Path
    base_model: str
    """The model id of the scorer it was fitted on (`Scorer.model_id`); any other scorer refuses it."""
    thresholds: Thresholds
    task_thresholds: Mapping[str, Thresholds]
    decide_at: float | None
    combiner: LogisticCombiner | TaskCombiner | None
    """The refitted combiner; None keeps the base scorer's."""
    canonical_figures: bool
    meaning: bool
    document: Mapping[str, object]
    """profile.json as written (labels, targets, cross-validated rates with their intervals)."""
    model: Path | None = None
    """The fine-tuned model's bundle directory (`adapt --fine-tune`), which scores in place of the base's; None:
    the base model scores."""
    version: str | None = None
    """The version in force when it was read ("v0003", `DIR/current`); None for a folder without versions."""

    def calibration_over(self, base: Calibration) -> Calibration:
        """The base scorer's calibration with this profile's thresholds (and combiner, where it has one)."""
        return replace(
            base,
            thresholds=self.thresholds,
            task_thresholds=dict(self.task_thresholds),
            decide_at=self.decide_at,
            combiner=self.combiner or base.combiner,
            canonical_figures=self.canonical_figures,
            meaning=self.meaning,
        )


def _pair(value: object, where: str) -> Thresholds:
    if not (isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, int | float) for v in value)):
        raise ValueError(f"{where} must be [accept_at, reject_at]")
    pair = float(value[0]), float(value[1])
    if not all(0.0 <= threshold <= 1.0 for threshold in pair):
        raise ValueError(f"{where} must lie in [0, 1], got {list(pair)}")
    try:
        return ordered(pair)  # the one order rule (settings, verifier, profile)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def in_force(folder: Path) -> tuple[Path, str | None]:
    """The directory holding the files of the version in force, and its name (None: an unversioned folder).
    The link is resolved once, so every file is read from the same version even if it is replaced meanwhile."""
    pointer = folder / CURRENT
    if pointer.is_symlink():
        target = pointer.resolve()
        return target, target.name
    return folder, None


def load_profile(path: str | Path) -> Profile:
    """The profile in directory `path` (its version in force); a missing or malformed one is an InputError saying
    what is wrong."""
    top = Path(path)
    folder, version = in_force(top)
    file = folder / PROFILE_FILE
    if not file.is_file():
        raise ProfileError(
            f"{top} is not a profile: it has no {PROFILE_FILE} (make one with `groundwire adapt "
            "LABELLED.jsonl --out DIR`)",
            code=ErrorCode.INVALID_PROFILE,
        )
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
        if document.get("format") not in FORMATS:
            raise ValueError(
                f"format {document.get('format')!r} is not one of {list(FORMATS)}: rebuild it with this "
                "version's `groundwire adapt`"
            )
        routing = document["calibration"]
        combiner_file = routing.get("combiner")
        model = document.get("model")
        model_dir = folder / str(model["dir"]) if isinstance(model, Mapping) else None
        if model_dir is not None and not (model_dir / "model.onnx").is_file():
            raise ValueError(f"its fine-tuned model {model_dir / 'model.onnx'} is missing")
        return Profile(
            name=top.resolve().name,
            path=top,
            base_model=str(document["base_model"]),
            thresholds=_pair(routing["thresholds"], "calibration.thresholds"),
            task_thresholds={
                str(k): _pair(v, f"calibration.task_thresholds.{k}")
                for k, v in routing.get("task_thresholds", {}).items()
            },
            decide_at=None if routing.get("decide_at") is None else float(routing["decide_at"]),
            combiner=load_combiner(folder / combiner_file) if combiner_file else None,
            canonical_figures=bool(routing.get("canonical_figures", True)),
            meaning=bool(routing.get("meaning", False)),
            document=document,
            model=model_dir,
            version=version,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ProfileError(
            f"{file} cannot be read as a profile: {type(error).__name__}: {error}", code=ErrorCode.INVALID_PROFILE
        ) from None


class ProfiledScorer:
    """A scorer routed by a profile: the base scorer's scores, the profile's calibration over its own.

    Without a model of its own the model id stays the base's (pair scores, caches and logs are the model's); with
    one (`adapt --fine-tune`) it scores with that model, whose id (base id + a digest of its weights) keeps its
    pair scores apart from the base's. The profile is named in each report (`pipeline.check`)."""

    def __init__(self, base: Scorer, profile: Profile) -> None:
        if profile.base_model != base.model_id:
            raise ProfileError(
                f"profile {profile.path} was fitted on {profile.base_model!r}, not on the scorer in use "
                f"({base.model_id!r}): its thresholds mean nothing for this model; use the scorer it "
                "was built on, or build a profile for this one with `groundwire adapt --scorer`",
                code=ErrorCode.PROFILE_MODEL_MISMATCH,
            )
        self.base = base
        self.profile = profile
        self.scores_with: Scorer = base if profile.model is None else _tuned(profile.model)
        self.model_id = self.scores_with.model_id
        self.max_tokens = self.scores_with.max_tokens
        self._calibration = profile.calibration_over(calibration_of(base))

    @property
    def calibration(self) -> Calibration:
        return self._calibration

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.scores_with.count_tokens(texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        return self.scores_with.score(pairs)


def _tuned(bundle: Path) -> Scorer:
    """The profile's fine-tuned int8 bundle (one form: the tune exports int8 only)."""
    return get_scorer(f"onnx:{bundle}")  # by the registry, which loads onnxruntime only when it is asked for


def profile_of(scorer: Scorer) -> Profile | None:
    """The profile routing a scorer's answers, None for a plain scorer."""
    return scorer.profile if isinstance(scorer, ProfiledScorer) else None


def unprofiled(scorer: Scorer) -> Scorer:
    """The model under a profile (the scorer itself when no profile routes it): what another profile, or a refit, is
    applied over, sharing the loaded model."""
    return scorer.base if isinstance(scorer, ProfiledScorer) else scorer
