"""Continuous refit per scope (`serve --profiles DIR --learn`): every `every` new verdicts in a scope, its profile is
refitted from its logged labels in the background (calibration.learn.refit_scope: adapt's fit, the guard, a new
version or a recorded refusal).

Never on a request's path: the feedback route only counts, and a daemon thread hands the refit to a process of its
own (spawned, niced where the OS allows: `refit_in_process`), so that the refit's CPU-bound Python never holds the
interpreter lock the requests need. One refitter per scope at a time: in this process a scope's second trigger while it runs is folded into one
more run after it; across replicas, an exclusive, non-blocking `flock` on `DIR/<scope>/.refit.lock` (replicas share
the profiles folder, or they would not see each other's refits): a replica that finds it held skips the refit, the
next trigger tries again. The counts are per process: with several replicas, a scope is refitted after `every`
verdicts reached any one of them.

The LLM judge as a teacher (`serve --judge-labels`): `judge_settlement` reads, from a request's report, whether the
judge settled an escalated answer and how; the service keeps that as a label of kind "judge" (Store.add_judge_label),
counted toward the scope's next refit, which then fits on both kinds (`refit_labels`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from groundwire.calibration.adapt import DEFAULT_JUDGE_WEIGHT, Targets, base_settings
from groundwire.calibration.judge_error import JudgeError
from groundwire.calibration.learn import Learned, refit_scope
from groundwire.core.settings import CheckSettings
from groundwire.data.labelled import LabelUse
from groundwire.data.store import Store
from groundwire.foundation.types import Report, Route, Verdict
from groundwire.pipeline import build_verifier
from groundwire.scoring.profile import PROFILE_FILE, ProfileError, unprofiled

_log = logging.getLogger(__name__)

LOCK_FILE = ".refit.lock"


@dataclass(frozen=True, slots=True)
class Settlement:
    """The judge's verdict on an escalated answer it settled: faithful (it accepted every escalated claim) or not,
    and the claims (indexes) it did not find supported."""

    faithful: bool
    unfaithful_claims: tuple[int, ...]


def judge_settlement(report: Report) -> Settlement | None:
    """How the judge settled this answer, or None when it did not: it was asked (the answer was escalated), it ruled
    on every escalated claim (none `not_judged`), and the answer left the band: accepted (faithful) or rejected (a
    claim it did not find supported). An answer still escalated after it, for a finding of its own, is not settled.
    Before the judge such an answer had no rejected claim (a rejected claim rejects the answer, and the judge is
    asked only of escalated answers), so the verdict is the judge's alone."""
    judged = report.meta.judge
    if judged is None or not judged.decided or judged.not_judged or report.route is Route.ESCALATE:
        return None
    unsupported = tuple(o.claim for o in judged.outcomes if o.error is None and o.verdict is not Verdict.SUPPORTED)
    return Settlement(report.route is Route.ACCEPT, () if report.route is Route.ACCEPT else unsupported)


def refit_labels(judge_labels: bool) -> LabelUse:
    """The labels a scope's refit fits on: the reviewers' alone, or with `--judge-labels` the judge's too."""
    return "both" if judge_labels else "human"


class Learner:
    """Counts verdicts per scope and runs `refit(scope)` in the background after each `every`."""

    def __init__(self, every: int, folder_of: Callable[[str], Path | None], refit: Callable[[str, Path], Learned]):
        if every < 1:
            raise ValueError(f"refit every {every} verdicts: give at least 1")
        self.every = every
        self._folder_of = folder_of
        self._refit = refit
        self._counts: Counter[str] = Counter()
        self._running: set[str] = set()
        self._again: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.done: deque[Learned] = deque(maxlen=100)
        """The last 100 refits this process ran, oldest first (the profile's history.jsonl keeps them all)."""

    def verdict_added(self, scope: str) -> None:
        """Count a new verdict in `scope`; at each `every`-th, start its refit (or fold it into the running one)."""
        with self._lock:
            self._counts[scope] += 1
            if self._counts[scope] < self.every:
                return
            self._counts[scope] = 0
        self.start(scope)

    def start(self, scope: str) -> None:
        """Refit `scope` now in the background (a scope whose name is no folder of the profiles is skipped)."""
        folder = self._folder_of(scope)
        if folder is None:
            return
        with self._lock:
            if scope in self._running:
                self._again.add(scope)
                return
            self._running.add(scope)
            thread = threading.Thread(target=self._run, args=(scope, folder), name=f"refit-{scope}", daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the refits running now (tests; shutdown)."""
        for thread in list(self._threads):
            thread.join(timeout)

    def _run(self, scope: str, folder: Path) -> None:
        _lower_priority()
        while True:
            try:
                self._once(scope, folder)
            except Exception:  # a refit that fails must not take the service down: the scope keeps its profile
                _log.exception("scope %s: the refit of its profile failed; it keeps the profile in force", scope)
            with self._lock:
                if scope not in self._again:
                    self._running.discard(scope)
                    return
                self._again.discard(scope)

    def _once(self, scope: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / LOCK_FILE, "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                _log.info("scope %s: another process is refitting its profile; skipped", scope)
                return
            try:
                learned = self._refit(scope, folder)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        with self._lock:
            self.done.append(learned)
        if learned.version is None:
            _log.warning("scope %s: the refit was refused, the profile in force stays: %s", scope, learned.reason)
        else:
            _log.info("scope %s: refitted profile %s in force: %s", scope, learned.version, learned.reason)


def _lower_priority() -> None:
    """Nice this thread (Linux: a thread's own priority) so a refit yields the CPU to the requests."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


@dataclass(frozen=True, slots=True)
class RefitJob:
    """A scope's refit as `serve --learn` runs it in a process of its own (`refit_in_process`): plain values that
    cross the process boundary. `settings`: the service's check settings; `judge_error`: a stated rate, or "auto",
    measured in the child, where the store is opened (calibration.judge_error)."""

    db_url: str
    scope: str
    folder: Path
    settings: CheckSettings
    targets: Targets
    use: LabelUse = "human"
    judge_weight: float = DEFAULT_JUDGE_WEIGHT
    judge_error: JudgeError = 0.0


def refit_in_process(job: RefitJob) -> Learned:
    """calibration.learn.refit_scope in the process the service spawned for it (niced): a refit is CPU-bound Python,
    and in a thread of the server it holds the interpreter lock the requests need (bench/refit_time.py). It opens
    its own store and model; the routing in force is the scope's profile where it loads, else the base model's
    calibration, as the service routes the scope (refit_scope reads only the in-force verifier's scorer and
    calibration)."""
    with contextlib.suppress(OSError):
        os.nice(10)
    base = build_verifier(base_settings(job.settings))
    in_force = base
    if (job.folder / PROFILE_FILE).is_file():
        with contextlib.suppress(ProfileError):  # a profile of another model: the service routes by its own
            in_force = build_verifier(base_settings(job.settings).model_copy(update={"profile": str(job.folder)}),
                                      scorer=unprofiled(base.scorer))
    store = Store(job.db_url)
    try:
        return refit_scope(store, scope=job.scope, folder=job.folder, in_force=in_force, settings=job.settings,
                           targets=job.targets, use=job.use, judge_weight=job.judge_weight,
                           judge_error=job.judge_error)
    finally:
        store.close()
