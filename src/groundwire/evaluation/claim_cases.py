"""Claim-level cases: one claim against its chunks, with the verdict a reader would give and the kind of case.

The bundled set (tests/fixtures/claim_cases.jsonl) is written from the taxonomy of issue 21 -- paraphrase,
number, unit and date formats, entity and role swaps, negation, hedges, evidence at the end of a long
chunk, evidence in a second chunk -- not from any dev file's errors. `bench/claim_cases.py` prints the pass
rate per kind; the tests assert only what must hold whatever the scorer (cases a deterministic check decides).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundwire.core.plan import as_chunks
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Verdict
from groundwire.pipeline import CheckItem, Judge, check


@dataclass(frozen=True, slots=True)
class ClaimCase:
    id: str
    kind: str
    chunks: tuple[str, ...]
    claim: str
    expected: Verdict
    check: str | None = None
    """The deterministic check that must decide this case ("figures", "roles"), whatever the scorer."""


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: ClaimCase
    verdict: Verdict
    checks: tuple[str, ...]
    """The names of the findings on the case's claims."""

    @property
    def passed(self) -> bool:
        return self.verdict is self.case.expected


def load_cases(path: Path) -> list[ClaimCase]:
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        raw = json.loads(line)
        try:
            cases.append(
                ClaimCase(
                    id=raw["id"],
                    kind=raw["kind"],
                    chunks=tuple(raw["chunks"]),
                    claim=raw["claim"],
                    expected=Verdict(raw["expected"]),
                    check=raw.get("check"),
                )
            )
        except (KeyError, ValueError) as error:
            raise ValueError(f"{path}:{number}: not a claim case ({error})") from None
    return cases


def run_case(verifier: Verifier, case: ClaimCase, *, task: str | None = None, judge: Judge | None = None) -> CaseResult:
    """The case's verdict: its claim's, or where the answer splits into several claims, the worst of theirs
    (CONTRADICTED, then NOT_FOUND, then any other verdict short of SUPPORTED, then SUPPORTED). `task` is the
    verify() task type the case is checked as (None: none given, the pooled thresholds); with a `judge`, the
    LLM judge decides the claims the verifier leaves UNRESOLVED, as in a check with --judge."""
    report = check(verifier, CheckItem(case.claim, as_chunks(case.chunks), task=task), judge=judge)
    verdict = min((result.verdict for result in report.claims), key=_severity, default=Verdict.SUPPORTED)
    checks = tuple(finding.check for result in report.claims for finding in result.checks)
    return CaseResult(case, verdict, checks)


def _severity(verdict: Verdict) -> int:
    order = {Verdict.CONTRADICTED: 0, Verdict.NOT_FOUND: 1, Verdict.SUPPORTED: 3}
    return order.get(verdict, 2)


def pass_rates(results: Iterable[CaseResult]) -> dict[str, tuple[int, int]]:
    """Per kind (and "overall"): (passed, cases)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        for key in (result.case.kind, "overall"):
            counts[key][0] += result.passed
            counts[key][1] += 1
    return {key: (passed, total) for key, (passed, total) in counts.items()}


def decided(results: Iterable[CaseResult]) -> tuple[int, int, int]:
    """(cases, decided, decided correctly): a case is decided when its verdict is not UNRESOLVED. UNRESOLVED is
    the verifier's doubt, routed to an LLM judge when one is configured, so the pass rate counts it a miss;
    how often a verdict the verifier does commit to is right is the other half of the picture."""
    total = committed = right = 0
    for result in results:
        total += 1
        if result.verdict is not Verdict.UNRESOLVED:
            committed += 1
            right += result.passed
    return total, committed, right


def kinds(cases: Sequence[ClaimCase]) -> list[str]:
    return list(dict.fromkeys(case.kind for case in cases))
