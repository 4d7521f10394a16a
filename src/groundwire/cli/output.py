"""Printing user and model text literally: never as rich markup, emoji codes or terminal control sequences.

Every piece of text that came from a file, a flag, a model or an exception goes through `literal()` (a
rich Text, which is never parsed for markup); JSON goes to stdout through `print_json()`, untouched by rich.
`render_report` prints a Report for people; every command that shows one uses it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from groundwire.core.explain import format_threshold
from groundwire.foundation.types import Chunk, Report, Route, Verdict

console = Console()
"""stdout, for what people read (tables, one-line results); JSON goes through print_json."""

# C0/C1 control characters other than newline and tab: shown as \xNN so an answer cannot drive the terminal.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def literal(text: object, style: str = "") -> Text:
    """`text` exactly as written (control characters made visible), in one optional style."""
    return Text(_CONTROL_RE.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text)), style=style)


def styled(*parts: str | tuple[object, str]) -> Text:
    """A line of literal pieces; a (text, style) pair is styled, a bare string is plain."""
    line = Text()
    for part in parts:
        line.append_text(literal(*part) if isinstance(part, tuple) else literal(part))
    return line


def print_json(payload: dict[str, Any] | list[Any]) -> None:
    """One JSON document on stdout; json.dumps escapes every control character, rich never sees it."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    sys.stdout.flush()


_VERDICT_STYLE = {Verdict.SUPPORTED: "green", Verdict.CONTRADICTED: "red", Verdict.NOT_FOUND: "yellow",
                  Verdict.UNRESOLVED: "cyan"}
_ROUTE_STYLE = {Route.ACCEPT: "bold green", Route.ESCALATE: "bold yellow", Route.REJECT: "bold red"}


def render_report(report: Report, chunks: list[Chunk]) -> None:
    from rich.table import Table

    table = Table(show_lines=True, title=literal(f"groundwire — {report.model_id}"))
    for column in ("#", "claim", "verdict", "score", "cites", "evidence / checks"):
        table.add_column(column, overflow="fold")
    for number, result in enumerate(report.claims, start=1):
        style = _VERDICT_STYLE[result.verdict]
        notes = [f"{f.check}: {f.detail}" for f in result.checks]
        if result.note:
            notes.append(result.note)
        evidence = result.evidence or ""
        table.add_row(str(number), literal(result.claim.text), literal(result.verdict.value, style),
                      f"{result.score:.2f}", literal(result.chunk_id or "-"),
                      literal("\n".join([_shorten(evidence), *notes])))
    console.print(table)
    if stages := report.meta.cascade:  # which model decided, after which escalated
        console.print(literal("cascade: " + " -> ".join(
            f"{stage.model_id} {stage.route.value} ({stage.score:.2f})" for stage in stages)))
    for finding in report.findings:
        console.print(styled((finding.check, "red"), f": {finding.detail}"))
    for warning in report.warnings:
        console.print(styled(("warning", "yellow"), f": {warning}"))
    label = "abstained" if report.abstained else report.route.value.upper()
    thresholds = report.meta.thresholds
    band = (f"accept >= {format_threshold(thresholds.accept_at)}, "
            f"reject <= {format_threshold(thresholds.reject_at)}; ") if thresholds else ""
    if thresholds and thresholds.decide_at is not None:  # route = "decide": one threshold, nothing escalated
        band = f"decided: accept >= {format_threshold(thresholds.decide_at)}, else reject; "
    console.print(styled("answer score ", (f"{report.score:.2f}", "bold"), " -> ", (label, _ROUTE_STYLE[report.route]),
                         f"  ({band}{_count(len(report.claims), 'claim')}, {_count(len(chunks), 'chunk')}, "
                         f"{report.timings.get('total', 0):.2f}s)"))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _shorten(text: str, limit: int = 240) -> str:
    # Display only: the JSON output always carries the full evidence.
    return text if len(text) <= limit else text[: limit - 1] + "…"
