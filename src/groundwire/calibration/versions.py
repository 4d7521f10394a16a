"""Versioned profile folders: atomic replacement, rollback, and a history of every replacement and refusal.

A profile folder `DIR` holds one subfolder per version (`v0001/`, `v0002/`, ..., each a whole profile: profile.json,
combiner.json, model/), the symlink `DIR/current` naming the version in force, and `DIR/history.jsonl`, one line per
event. A new version is written in full into a staging folder, renamed to its version's name, and put in force by
`os.replace` of a new `current` link over the old one: one atomic rename on Linux, so a reader (scoring.profile
.load_profile, which resolves `current` once) sees the old version or the new one, never none. Old versions are kept
for rollback. `DIR/profile.json`, `DIR/combiner.json` and `DIR/model` are links through `current`, so the folder
still reads as a profile for tools that do not know versions.

A folder written before versions (its files at the top) is adopted on its first replacement: copied into `v0001`,
recorded as "adopted", then replaced as any other.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.scoring.profile import COMBINER_FILE, CURRENT, MODEL_DIR, PROFILE_FILE

HISTORY_FILE = "history.jsonl"
LINKED = (PROFILE_FILE, COMBINER_FILE, MODEL_DIR)
"""The top-level names that are links through `current` in a versioned folder."""
_VERSION = re.compile(r"^v(\d{4,})$")

Event = Literal["installed", "replaced", "refused", "rolled_back", "adopted"]


def version_name(number: int) -> str:
    return f"v{number:04d}"


def versions(folder: Path) -> list[str]:
    """The folder's versions, oldest first."""
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p.name) for p in folder.iterdir() if p.is_dir() and (m := _VERSION.match(p.name))]
    return [name for _, name in sorted(found)]


def current_version(folder: Path) -> str | None:
    """The version in force; None when the folder has no versions (absent, empty, or written before versions)."""
    pointer = folder / CURRENT
    return os.readlink(pointer) if pointer.is_symlink() else None


def history(folder: Path) -> list[dict[str, object]]:
    """Every recorded event, oldest first (a line that does not parse, e.g. cut by a crash, is skipped)."""
    file = folder / HISTORY_FILE
    if not file.is_file():
        return []
    out: list[dict[str, object]] = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def record(folder: Path, event: Event, *, version: str | None, by: str, reason: str | None = None,
           previous: str | None = None, figures: Mapping[str, object] | None = None,
           labels: Mapping[str, object] | None = None) -> dict[str, object]:
    """Append one event to the folder's history (one write of one line in append mode: lines from concurrent
    writers do not interleave). `figures`: the rates it was judged on; `labels`: the label counts (human and judge
    apart)."""
    entry: dict[str, object] = {
        "time": datetime.now(UTC).isoformat(timespec="seconds"), "event": event, "version": version,
        "previous": previous, "by": by, "reason": reason, "figures": dict(figures) if figures else None,
        "labels": dict(labels) if labels else None,
    }
    folder.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(folder / HISTORY_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return entry


def install(folder: Path, fill: Callable[[Path], None], *, by: str, reason: str | None = None,
            figures: Mapping[str, object] | None = None, labels: Mapping[str, object] | None = None) -> str:
    """Write a new version (`fill` writes the profile's files into the folder it is given), put it in force
    atomically, record it; its name. The old versions stay."""
    folder.mkdir(parents=True, exist_ok=True)
    _adopt_unversioned(folder, by=by)
    previous = current_version(folder)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        fill(staging)
        if not (staging / PROFILE_FILE).is_file():
            raise ValueError(f"a profile version needs its {PROFILE_FILE}")
        version = _rename_to_next(folder, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    switch(folder, version)
    record(folder, "installed" if previous is None else "replaced", version=version, previous=previous, by=by,
           reason=reason, figures=figures, labels=labels)
    return version


def switch(folder: Path, version: str) -> None:
    """Put `version` in force: a new `current` link renamed over the old one (atomic), then the top-level links."""
    if not (folder / version / PROFILE_FILE).is_file():
        raise InputError(f"{folder} has no version {version!r} (it has {', '.join(versions(folder)) or 'none'})",
                         code=ErrorCode.INVALID_PROFILE)
    _link(folder / CURRENT, version)
    for name in LINKED:
        top = folder / name
        if top.is_symlink():
            continue  # already a link through current
        if top.is_dir():  # an adopted folder's model/: no rename replaces a directory by a link
            shutil.rmtree(top)
        _link(top, f"{CURRENT}/{name}")


def rollback(folder: Path, *, to: str | None = None, by: str, reason: str | None = None) -> str:
    """Put another version back in force (`to`; default: the one in force before the version in force, as the history
    says, else the version numbered before it) and record it; the version now in force."""
    now = current_version(folder)
    known = versions(folder)
    if now is None or not known:
        raise InputError(f"{folder} is not a versioned profile: nothing to roll back to",
                         code=ErrorCode.INVALID_PROFILE)
    if to is None:
        to = _in_force_before(folder, now)
    if to is None:
        earlier = known[: known.index(now)] if now in known else []
        if not earlier:
            raise InputError(f"{folder}: {now} is its first version; there is none before it to roll back to",
                             code=ErrorCode.INVALID_OPTION)
        to = earlier[-1]
    if to not in known:
        raise InputError(f"{folder} has no version {to!r} (it has {', '.join(known)})", code=ErrorCode.INVALID_OPTION)
    switch(folder, to)
    record(folder, "rolled_back", version=to, previous=now, by=by, reason=reason)
    return to


def _in_force_before(folder: Path, now: str) -> str | None:
    """The version that was in force when `now` was last put in force (the history's `previous`), if it is kept."""
    for entry in reversed(history(folder)):
        if entry.get("event") in ("installed", "replaced", "rolled_back", "adopted") and entry.get("version") == now:
            previous = entry.get("previous")
            return previous if isinstance(previous, str) and previous in versions(folder) else None
    return None


def _link(path: Path, target: str) -> None:
    """Make `path` a symlink to `target`, replacing what is there in one rename."""
    temporary = path.parent / f".{path.name}-{uuid.uuid4().hex}"
    os.symlink(target, temporary)
    try:
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def _rename_to_next(folder: Path, staging: Path) -> str:
    """Rename the staged folder to the next free version name (another writer may take one meanwhile)."""
    while True:
        known = versions(folder)
        number = int(known[-1][1:]) + 1 if known else 1
        name = version_name(number)
        try:
            os.rename(staging, folder / name)  # fails on an existing (never empty) version
        except OSError:
            if (folder / name).exists():
                continue
            raise
        return name


def _adopt_unversioned(folder: Path, *, by: str) -> None:
    """A folder written before versions: its files copied into the first version, put in force, recorded."""
    top = folder / PROFILE_FILE
    if current_version(folder) is not None or top.is_symlink() or not top.is_file():
        return
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        for name in LINKED:
            source = folder / name
            if source.is_dir():
                shutil.copytree(source, staging / name)
            elif source.is_file():
                shutil.copy2(source, staging / name)
        version = _rename_to_next(folder, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    switch(folder, version)
    record(folder, "adopted", version=version, by=by, reason="the folder's unversioned profile, kept as a version")
