"""One domain profile per scope (`serve --profiles DIR`): DIR/<scope>/profile.json routes that scope's checks.

Each profile is read at start and read again when its profile.json changes (the file its version in force resolves to
and its modification time, looked at on each check: a new version, a rollback or an edit in place), so a tenant's
refitted profile takes effect without a restart; the model is loaded once and shared
(only the calibration differs between scopes). A scope without a profile is routed by the service's own settings.
A profile that fails to load at start stops the start; one that fails later (changed, or added while serving) is
logged and the scope keeps the routing it had.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from groundwire.calibration.versions import HISTORY_FILE
from groundwire.config import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.foundation.errors import ErrorCode
from groundwire.pipeline import build_verifier
from groundwire.scoring.profile import PROFILE_FILE, ProfileError, unprofiled

_log = logging.getLogger(__name__)


class ScopeProfiles:
    def __init__(self, folder: str | Path, settings: CheckSettings) -> None:
        self.folder = Path(folder)
        self._root = self.folder.resolve()  # resolved once: each check compares its scope's folder against it
        self.settings = settings
        self._held: dict[str, tuple[tuple[str, int], Verifier]] = {}
        self._lock = threading.Lock()

    def load_all(self, base: Verifier, *, refit_mismatched: bool = False) -> list[str]:
        """Read every scope's profile now (a bad one raises); the scopes whose profile was fitted on another model
        than the one loaded. Those raise (profile_model_mismatch: the service does not start) unless
        `refit_mismatched` (`serve --learn`): then the scope is routed by the service's own settings until a refit
        from its logged labels replaces the profile (or is refused, and says why in the profile's history)."""
        if not self.folder.is_dir():
            raise ProfileError(f"--profiles {self.folder}: no such directory (one folder per scope, each holding "
                               f"a {PROFILE_FILE})")
        scopes = sorted(p.name for p in self.folder.iterdir() if (p / PROFILE_FILE).is_file())
        mismatched = []
        for scope in scopes:
            try:
                self._refresh(scope, base, strict=True)
            except ProfileError as error:
                if not refit_mismatched or error.code is not ErrorCode.PROFILE_MODEL_MISMATCH:
                    raise
                _log.warning("scope %s: %s; it is routed by the service's settings until a refit replaces it",
                             scope, error)
                file = (self.folder / scope / PROFILE_FILE).resolve()
                with self._lock:  # not tried again on each check: only a new version is read
                    self._held[scope] = ((str(file), file.stat().st_mtime_ns), base)
                mismatched.append(scope)
        return mismatched

    def folder_for(self, scope: str) -> Path | None:
        """Where the scope's profile is (or will be) written; None for a scope name that is a path out of the
        folder."""
        folder = self.folder / scope
        return folder if folder.resolve().parent == self._root else None

    def verifier_for(self, scope: str, base: Verifier) -> Verifier:
        """The scope's verifier: routed by its profile when it has one, else `base`."""
        return self._refresh(scope, base, strict=False)

    def folder_of(self, scope: str) -> Path | None:
        """The scope's profile folder, None when it has neither a profile nor a history (refits refused before its
        first version) (a scope name is never a path out of the folder)."""
        folder = self.folder_for(scope)
        if folder is None or not ((folder / PROFILE_FILE).is_file() or (folder / HISTORY_FILE).is_file()):
            return None
        return folder

    def _refresh(self, scope: str, base: Verifier, *, strict: bool) -> Verifier:
        folder = self.folder / scope
        if folder.resolve().parent != self._root:  # a scope name is never a path out of the folder
            return base
        try:
            file = (folder / PROFILE_FILE).resolve(strict=True)
            stamp = (str(file), file.stat().st_mtime_ns)
        except OSError:
            return base
        with self._lock:
            held = self._held.get(scope)
            if held is not None and held[0] == stamp:
                return held[1]
            try:
                verifier = build_verifier(self.settings.model_copy(update={"profile": str(folder)}),
                                          scorer=unprofiled(base.scorer))
            except ProfileError:
                if strict:
                    raise
                _log.exception("scope %s: its profile could not be loaded; it keeps the routing it had", scope)
                return base if held is None else held[1]
            self._held[scope] = (stamp, verifier)
            return verifier
