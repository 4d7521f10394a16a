"""A scope's domain profile under `serve --profiles DIR`: its versions and history, and a rollback
(calibration.versions, the code `groundwire adapt rollback` runs). The caller's key names the scope."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi import Depends
from pydantic import BaseModel, ConfigDict, Field

from groundwire.calibration import versions
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.scoring.profile import PROFILE_FILE
from groundwire.service.auth import caller_scope, writer_scope
from groundwire.service.errors import ServiceError
from groundwire.service.routing import service_router, service_runtime
from groundwire.service.runtime import Runtime

router = service_router()


class ProfileState(BaseModel):
    scope: str
    version: str | None = Field(description="The version in force (null: a profile folder without versions).")
    versions: list[str] = Field(description="Every version kept, oldest first.")
    history: list[dict[str, object]] = Field(
        description="Every install, replacement, refusal and rollback, oldest first (the folder's history.jsonl).")
    labels: dict[str, object] | None = Field(
        None, description="What the version in force was fitted on: `labels` (human, judge or both), `label_kinds` "
                          "(how many human and judge labels, counted apart), `judge_weight` (how much a judge's "
                          "label counted; null when none was used), `judge_error` (the judge's error rate corrected "
                          "for) and `judge_error_from` (\"stated\", or what `--judge-error auto` measured it on). "
                          "Null for a profile that does not say.")


class RollbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: str | None = Field(None, description="The version to put back in force; null: the one in force before it (the history's), undoing the last change.")
    reason: str | None = Field(None, max_length=2000, description="Why, for the history.")


def _folder(runtime: Runtime, scope: str) -> Path:
    folder = runtime.profile_folder(scope)
    if folder is None:
        raise ServiceError(ErrorCode.PROFILE_NOT_FOUND, f"scope {scope!r} has no domain profile: the service routes it "
                           "by its own settings (start it with --profiles DIR, DIR/<scope> a profile folder)")
    return folder


def _state(folder: Path, scope: str) -> ProfileState:
    return ProfileState(scope=scope, version=versions.current_version(folder), versions=versions.versions(folder),
                        history=versions.history(folder), labels=_labels_in_force(folder))


def _labels_in_force(folder: Path) -> dict[str, object] | None:
    """The version in force's record of its labels (profile.json's labels_from), kinds apart."""
    try:
        document = json.loads((folder / PROFILE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    source = document.get("labels_from") if isinstance(document, dict) else None
    if not isinstance(source, dict) or "label_kinds" not in source:
        return None
    return {key: source.get(key) for key in ("labels", "label_kinds", "judge_weight", "judge_error",
                                              "judge_error_from")}


@router.get("/v1/profile", response_model=ProfileState, tags=["profile"])
def profile_state(scope: str = Depends(caller_scope), runtime: Runtime = Depends(service_runtime)) -> ProfileState:
    """Your scope's domain profile: the version in force, the versions kept, and its history."""
    return _state(_folder(runtime, scope), scope)


@router.post("/v1/profile/rollback", response_model=ProfileState, tags=["profile"])
def profile_rollback(body: RollbackRequest, scope: str = Depends(writer_scope),
                     runtime: Runtime = Depends(service_runtime)) -> ProfileState:
    """Put an earlier version of your scope's profile back in force (atomically; recorded in its history). The next
    check is routed by it."""
    folder = _folder(runtime, scope)
    try:
        versions.rollback(folder, to=body.to, by=f"api (scope {scope})", reason=body.reason)
    except InputError as error:
        raise ServiceError(ErrorCode.INVALID_REQUEST, str(error)) from None
    return _state(folder, scope)
