"""The form trial's timings, kept per CPU, bundle and onnxruntime in a small file in the user's cache, so that the
trial (scoring/forms.py: each form timed on a CPU without VNNI; its cost: docs/speed.md) runs once per machine
rather than in every process that loads the model.

The file is $XDG_CACHE_HOME/groundwire/form-trials.json (~/.cache/groundwire/ without XDG_CACHE_HOME), one entry
per key: the CPU's model name, the threads the scorer runs on, its batch size, onnxruntime's version and the
bundle (its config.json's content and each form file's size and modification time, so a retrained or reinstalled
bundle is timed again). Where the file cannot be read, or holds timings of other forms, the forms are timed again;
where it cannot be written (a read-only home), each process times the forms as before, and the form's reason says
why.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["TRIALS_FILE", "FormTrials", "Trial", "groundwire_cache_dir"]

TRIALS_FILE = "form-trials.json"
MAX_ENTRIES = 32
"""The file keeps the newest this many keys (one per CPU model, bundle and onnxruntime met)."""
_log = logging.getLogger(__name__)


def groundwire_cache_dir() -> Path:
    """groundwire's folder in the user's cache: $XDG_CACHE_HOME/groundwire, else ~/.cache/groundwire."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "groundwire"


@dataclass(frozen=True, slots=True)
class Trial:
    """Seconds each form (by name) took on the trial pairs, and when they were timed (UTC, ISO 8601)."""

    seconds: Mapping[str, float]
    timed_at: str


@dataclass(frozen=True, slots=True)
class FormTrials:
    """Where one scorer's trial is kept: `key_fields` say what the timings hold for."""

    path: Path
    key_fields: Mapping[str, str]

    @classmethod
    def for_bundle(
        cls,
        bundle: Path,
        model_files: Sequence[str],
        *,
        cpu_model: str,
        threads: int,
        batch_size: int | None,
        onnxruntime_version: str,
    ) -> FormTrials:
        """The trial record of `bundle`'s forms (their `model_files`) on this CPU, in the user's cache."""
        digest = hashlib.sha256((bundle / "config.json").read_bytes())
        for name in sorted(model_files):
            try:
                stat = (bundle / name).stat()
                digest.update(f"\0{name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
            except OSError:  # loading the form says what is wrong with it
                digest.update(f"\0{name}\0missing".encode())
        return cls(
            groundwire_cache_dir() / TRIALS_FILE,
            {
                "cpu": cpu_model,
                "threads": str(threads),
                "batch_size": str(batch_size) if batch_size else "the form's",
                "onnxruntime": onnxruntime_version,
                "bundle": f"{bundle.resolve()} {digest.hexdigest()[:16]}",
            },
        )

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(dict(self.key_fields), sort_keys=True).encode()).hexdigest()[:24]

    def recall(self) -> Trial | None:
        """The timings kept for this key, or None (none kept, or a file that cannot be read)."""
        entry = self._entries().get(self.key)
        if not isinstance(entry, dict):
            return None
        try:
            seconds = {str(name): float(s) for name, s in entry["seconds"].items()}
            return Trial(seconds, str(entry["timed_at"]))
        except (AttributeError, KeyError, TypeError, ValueError):  # written by an older groundwire: time again
            return None

    def keep(self, seconds: Mapping[str, float]) -> str | None:
        """Keep these timings for this key; None when kept, else why they could not be (the caller goes on)."""
        trial = Trial(dict(seconds), datetime.now(UTC).isoformat(timespec="seconds"))
        entries = self._entries()
        entries.pop(self.key, None)
        entries[self.key] = {**asdict(trial), **self.key_fields}
        kept = dict(list(entries.items())[-MAX_ENTRIES:])  # insertion order: the newest last
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _replace(self.path, json.dumps(kept, indent=1))
        except OSError as error:
            _log.info("the form trial's timings could not be kept in %s: %s", self.path, error)
            return str(error.strerror or error)
        return None

    def _entries(self) -> dict[str, object]:
        try:
            entries = json.loads(self.path.read_text())
        except (OSError, ValueError):  # no file yet, unreadable, or not JSON: time the forms again
            return {}
        return entries if isinstance(entries, dict) else {}


def _replace(path: Path, text: str) -> None:
    """Write `text` to a file beside `path`, then move it over `path`: a reader never sees half a file."""
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(scratch, path)
    except OSError:
        Path(scratch).unlink(missing_ok=True)
        raise
