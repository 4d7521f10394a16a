"""A report as a few lines a person reads in a test failure or a validator's error: the decision, and each claim
that is not supported with its verdict, score, the checks that fired and the best evidence found for it.

Used by the pytest plugin (`assert_grounded`) and the Guardrails validator; the text is plain (no markup).
`format_threshold` is how every surface (these lines, the CLI, the adapters' reasons, the eval report) prints an
accept_at or reject_at.
"""

from __future__ import annotations

from groundwire.foundation.types import ClaimResult, Report, Verdict

EVIDENCE_CHARS = 200
"""Longer evidence is cut here (with an ellipsis): the failure stays readable, and the report has it all."""


def format_threshold(value: float) -> str:
    """A threshold as it is stored (config.json, groundwire.toml): 0.8314 prints as 0.8314, 0.8 as 0.8, 0 as 0.0.

    Never rounded to a display precision: at 0.79 or 0.795 a reader could not tell why a claim scoring 0.7941
    was escalated, or set the same line elsewhere."""
    return repr(float(value))


def unsupported(report: Report) -> list[ClaimResult]:
    return [result for result in report.claims if result.verdict is not Verdict.SUPPORTED]


def decision_line(report: Report, thresholds: tuple[float, float]) -> str:
    """'decision REJECT by lexical-baseline, answer score 0.05 (accept >= 0.8, reject <= 0.2); 1 of 2 claims
    not supported'."""
    accept_at, reject_at = thresholds
    missing = unsupported(report)
    band = f"accept >= {format_threshold(accept_at)}, reject <= {format_threshold(reject_at)}"
    decide_at = report.meta.thresholds.decide_at if report.meta.thresholds else None
    if decide_at is not None:  # a decided report (route = "decide") names the one threshold it was decided at
        band = f"decided: accept >= {format_threshold(decide_at)}, else reject"
    return (
        f"decision {report.route.value.upper()} by {report.model_id}, answer score {report.score:.2f} "
        f"({band}); {len(missing)} of {len(report.claims)} claims not supported"
    )


def claim_lines(report: Report) -> list[str]:
    """Per claim that is not supported: its text, verdict and score; each check that fired; its best evidence
    (the cited chunk's evidence sentence), or that no chunk offered any."""
    lines: list[str] = []
    for result in unsupported(report):
        lines.append(f'- "{result.claim.text}": {result.verdict.value}, score {result.score:.2f}')
        lines.extend(f"    check {finding.check}: {finding.detail}" for finding in result.checks)
        if result.evidence:
            lines.append(f'    best evidence [{result.chunk_id}]: "{_cut(result.evidence.strip())}"')
        else:
            lines.append("    best evidence: none in the context")
        if result.note:
            lines.append(f"    note: {result.note}")
    lines.extend(f"- answer check {finding.check}: {finding.detail}" for finding in report.findings)
    return lines


def explain(report: Report, thresholds: tuple[float, float]) -> str:
    """The decision line, then one block per claim that is not supported (see claim_lines)."""
    return "\n".join([decision_line(report, thresholds), *claim_lines(report)])


def _cut(text: str) -> str:
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1].rstrip() + "…"
