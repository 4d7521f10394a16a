"""The judge's error rate a fit on its labels corrects for (`--judge-error P|auto`): stated, or measured.

A stated rate (`--judge-error 0.1`) is taken as given. `auto` measures it on the scope's own answers that both a
reviewer and the LLM judge labelled (the reviewer's verdict in force and the judge's newest label on the same logged
request): the share where the two disagree on `faithful`, the reviewer taken as right. It is measured when the fit
runs (`adapt --from-log`, a service refit: the store is read there), and recorded with the profile
(`labels_from.judge_error_from`) and in its history, with the overlap it was measured on, so a fit says what it
corrected for and why. Too little overlap: the judge is taken as right (0), and the record says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from groundwire.calibration.adapt import check_judge_error
from groundwire.evaluation.metrics import wilson_interval
from groundwire.foundation.errors import ErrorCode, InputError

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import Store

JudgeError = float | Literal["auto"]
"""`--judge-error`: a stated rate in [0, 0.5), or "auto" (measured on the scope's log)."""
AUTO: Literal["auto"] = "auto"
MIN_OVERLAP = 30
"""The fewest answers labelled by both a reviewer and the judge that `auto` measures the rate on. At 30, a measured rate
of 10% (3 of 30) has the 95% Wilson interval 3%-26%, about +-0.1, and one of a third (10 of 30) 19%-51%: wide, but it
tells a judge that is mostly right from one wrong a third of the time, which is what the correction needs most
(results/learning_loop.md: a judge wrong 10% of the time labelling every reviewed answer cost +0.38 of week-6
escalation on HaluEval when the fit was not told, +0.16 told exactly). Below it, each chance disagreement moves the
rate by more than 3 points; the overlap also grows slowly (a settled answer reaches reviewers only through the audit
share), so a higher minimum would leave most scopes uncorrected for long."""
MAX_RATE = 0.49
"""A measured rate is clipped to at most this: the correction (y - P)/(1 - 2P) is undefined at a half."""
STATED = "stated"
"""`judge_error_from` of a rate given as a number."""


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    """How the judge's labels compare with reviewers' on the answers both labelled."""

    overlap: int
    """Answers with both a reviewer's verdict in force and a judge's label."""
    disagreements: int
    """Those where the judge's `faithful` differs from the reviewer's."""

    @property
    def rate(self) -> float | None:
        """The judge's error rate on the overlap (the reviewer taken as right); None without overlap."""
        return self.disagreements / self.overlap if self.overlap else None

    def interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """The rate's Wilson interval at `level`; None without overlap."""
        return wilson_interval(self.disagreements, self.overlap, level=level)


def judge_agreement(store: Store, *, scope: str) -> JudgeAgreement:
    """The scope's answers labelled by both a reviewer (the verdict in force) and the judge (its newest label), and
    how many of them the two disagree on."""
    reviewed = {record.id: verdict.faithful for record, verdict in store.reviewed(scope=scope)}
    both = [(record.id, label.faithful) for record, label in store.judged(scope=scope) if record.id in reviewed]
    return JudgeAgreement(len(both), sum(reviewed[request] != faithful for request, faithful in both))


@dataclass(frozen=True, slots=True)
class ResolvedJudgeError:
    """The rate a fit corrects for, and where it came from (`record`: profile.json's `judge_error_from`)."""

    rate: float
    record: str | dict[str, object]


def parse_judge_error(text: str) -> JudgeError:
    """A `--judge-error` option's value: "auto", or a rate in [0, 0.5); else a clear error."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        rate = float(text)
    except ValueError:
        raise InputError(f"--judge-error: give a rate in [0, 0.5) (the share of the judge's labels that are wrong) "
                         f"or auto (measured on answers a reviewer also labelled), not {text!r}",
                         code=ErrorCode.INVALID_OPTION) from None
    return check_judge_error(rate)


def resolve_judge_error(error: JudgeError, store: Store, *, scope: str,
                        min_overlap: int = MIN_OVERLAP) -> ResolvedJudgeError:
    """A stated rate as it is; `auto` measured on the scope's overlap (`judge_agreement`), clipped into
    [0, MAX_RATE], or 0 (the judge taken as right) with fewer than `min_overlap` answers in it, the reason recorded."""
    if error != AUTO:
        return ResolvedJudgeError(check_judge_error(float(error)), STATED)
    agreement = judge_agreement(store, scope=scope)
    interval = agreement.interval()
    measured: dict[str, object] = {
        "auto": True, "overlap": agreement.overlap, "disagreements": agreement.disagreements,
        "interval": None if interval is None else [round(interval[0], 4), round(interval[1], 4)]}
    if agreement.rate is None or agreement.overlap < min_overlap:
        return ResolvedJudgeError(0.0, {**measured, "reason": (
            f"{agreement.overlap} answers labelled by both a reviewer and the judge, fewer than the {min_overlap} "
            "needed to measure its error rate: the judge taken as right (0)")})
    rate = min(max(agreement.rate, 0.0), MAX_RATE)
    return ResolvedJudgeError(rate, {**measured, "reason": (
        f"measured: the judge disagreed with reviewers on {agreement.disagreements} of {agreement.overlap} answers "
        "both labelled")})
