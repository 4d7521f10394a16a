"""Charts as inline SVG, drawn by matplotlib (Agg, offline): the `eval --html` report's ROC, precision-recall
and score-histogram panels, and the eval-loop report's line charts. Text stays <text> (svg.fonttype none), so
the page can be searched and read by a screen reader. matplotlib is imported only here (the `eval` extra)."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from groundwire.core.explain import format_threshold
from groundwire.foundation.extras import optional_import

if TYPE_CHECKING:
    from collections.abc import Iterator

    from matplotlib.axes import Axes

    from groundwire.evaluation.metrics import Curve

COLOURS = ("#1b7f3b", "#2563eb", "#b45309", "#b91c1c", "#7c3aed", "#0f766e", "#52525b")
"""The eval-loop line charts' series, in order."""

# The `eval --html` page gives each thing one colour in every chart: the two labels, the three routes, and
# one per curve ("all", then the tasks). Curve colours avoid the label and route hues, so a task's line is
# never read as "faithful" or "reject".
LABEL_COLOURS = {"faithful": "#1b7f3b", "hallucinated": "#b91c1c"}
ROUTE_COLOURS = {"ACCEPT": "#14532d", "ESCALATE": "#f59e0b", "REJECT": "#7f1d1d"}
ALL_CURVE = "#111111"
TASK_CURVES = ("#2563eb", "#7c3aed", "#0891b2", "#c026d3", "#4d7c0f", "#52525b", "#1e3a8a")
_PAD = 0.04
"""Axes run this far past 0 and 1, so a line at 0.00 or 1.00 is not hidden under a spine."""


def curve_colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per curve name, fixed for the whole page: "all" is black, the tasks take turns in order."""
    tasks = [name for name in dict.fromkeys(names) if name != "all"]
    return {"all": ALL_CURVE} | {name: TASK_CURVES[i % len(TASK_CURVES)] for i, name in enumerate(tasks)}


def element_id(*parts: str) -> str:
    """An SVG id (matplotlib's gid) from a chart key and a name, for readers and tests to find an element."""
    return ":".join(re.sub(r"[^A-Za-z0-9_-]+", "_", part) for part in parts)


@contextmanager
def _figure(title: str, size: tuple[float, float]) -> Iterator[tuple[Axes, list[str]]]:
    """A figure whose SVG text lands in the list the caller gets back (after the block)."""
    with optional_import("eval", needed_by="groundwire's charts (eval --html, the eval-loop report)"):
        import matplotlib

        matplotlib.use("Agg")  # no display, no GUI toolkit
        import matplotlib.pyplot as plt

    out: list[str] = []
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "groundwire", "font.size": 9}):
        figure, axes = plt.subplots(figsize=size)
        try:
            axes.set_title(literal(title), loc="left", fontsize=10)
            yield axes, out
            figure.tight_layout()
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", metadata={"Date": None})  # no timestamp: same input, same bytes
        finally:
            plt.close(figure)
    svg = buffer.getvalue()
    out.append(svg[svg.index("<svg"):])  # drop the XML prolog and doctype: the SVG is inlined in HTML


def roc_chart(curves: Mapping[str, tuple[Curve, float | None]], *, colours: Mapping[str, str], key: str,
              title: str = "ROC") -> str:
    """One line per label: (curve, its AUROC for the legend), in the page's colour for that label."""
    with _figure(title, (4.2, 3.6)) as (axes, out):
        axes.plot([0, 1], [0, 1], color="#bbbbbb", linestyle="--", linewidth=1, label="chance")
        for label, (curve, area) in curves.items():
            name = literal(label if area is None else f"{label} (AUROC {area:.3f})")
            axes.step(curve.x, curve.y, where="post", color=colours[label], linewidth=2 if label == "all" else 1.2,
                      label=name, gid=element_id(key, "curve", label))
        axes.set(xlabel="false-positive rate (faithful answers flagged)",
                 ylabel="true-positive rate (hallucinations caught)", xlim=(-_PAD, 1 + _PAD), ylim=(-_PAD, 1 + _PAD))
        axes.legend(loc="lower right", fontsize=7)
    return out[0]


def pr_chart(curves: Mapping[str, tuple[Curve, float]], *, colours: Mapping[str, str], key: str,
             title: str = "Precision-recall") -> str:
    """One line per label: (curve, the share of hallucinated answers, drawn as that label's baseline)."""
    with _figure(title, (4.2, 3.6)) as (axes, out):
        for label, (curve, base_rate) in curves.items():
            axes.step(curve.x, curve.y, where="post", color=colours[label], linewidth=2 if label == "all" else 1.2,
                      label=literal(label), gid=element_id(key, "curve", label))
            axes.axhline(base_rate, color=colours[label], linestyle=":", linewidth=0.8)
        axes.set(xlabel="recall (hallucinations caught)", ylabel="precision (flagged that are hallucinated)",
                 xlim=(-_PAD, 1 + _PAD), ylim=(-_PAD, 1 + _PAD))
        axes.legend(loc="lower left", fontsize=7)
    return out[0]


def score_histogram(hallucinated: Sequence[float], faithful: Sequence[float], *, accept_at: float,
                    reject_at: float, key: str, title: str) -> str:
    """Answer scores of both classes over the three routes: the escalation band (reject_at, accept_at) shaded,
    the reject and accept thresholds as labelled lines. The x axis is padded past 0 and 1, so a threshold
    at 0.0 or 1.0 stands clear of the frame. The thresholds print as stored (format_threshold)."""
    bins = [i / 20 for i in range(21)]
    with _figure(title, (4.2, 3.0)) as (axes, out):
        band = f"escalate {format_threshold(reject_at)}–{format_threshold(accept_at)}"
        axes.axvspan(reject_at, accept_at, color=ROUTE_COLOURS["ESCALATE"], alpha=0.18, linewidth=0, zorder=0,
                     label=band, gid=element_id(key, "escalation-band"))
        axes.hist(faithful, bins=bins, color=LABEL_COLOURS["faithful"], alpha=0.55,
                  label=f"faithful ({len(faithful)})")
        axes.hist(hallucinated, bins=bins, color=LABEL_COLOURS["hallucinated"], alpha=0.55,
                  label=f"hallucinated ({len(hallucinated)})")
        for route, at, style, text, side in (("REJECT", reject_at, "--", "reject ≤", "left"),
                                             ("ACCEPT", accept_at, "-", "accept ≥", "right")):
            axes.axvline(at, color=ROUTE_COLOURS[route], linestyle=style, linewidth=1.6, zorder=3,
                         label=f"{text} {format_threshold(at)}", gid=element_id(key, route.lower() + "-line"))
            # the value beside its line, inside the frame: reject's to the right, accept's to the left
            axes.annotate(f"{text.split()[0]} {format_threshold(at)}", (at, 1.0), xycoords=("data", "axes fraction"),
                          xytext=(3 if side == "left" else -3, -3), textcoords="offset points",
                          ha=side, va="top", fontsize=7, color=ROUTE_COLOURS[route])
        axes.spines["left"].set_gid(element_id(key, "y-axis"))
        axes.set(xlabel="answer score", ylabel="answers", xlim=(-_PAD, 1 + _PAD))
        axes.legend(loc="best", fontsize=7)
    return out[0]


def line_chart(series: Mapping[str, Sequence[tuple[str, float | None]]], *, title: str,
               y_max: float | None = 1.0) -> str:
    """Lines over shared, ordered x labels; a None value leaves a gap. The first series is drawn widest, so
    an equal later one cannot hide it; a series with no data is named in the legend as such."""
    labels = list(dict.fromkeys(label for points in series.values() for label, _ in points))
    position = {label: i for i, label in enumerate(labels)}
    with _figure(title, (9.0, 2.8)) as (axes, out):
        for number, ((name, points), colour) in enumerate(zip(series.items(), COLOURS * 3, strict=False)):
            xs = [position[label] for label, _ in points]
            ys = [float("nan") if value is None else value for _, value in points]
            empty = all(value is None for _, value in points)
            axes.plot(xs, ys, color=colour, linewidth=3 if number == 0 else 1.6, marker="o", markersize=3,
                      label=literal(f"{name} (no data)" if empty else name))
        step = max(1, len(labels) // 10)
        axes.set_xticks(range(0, len(labels), step), [literal(labels[i]) for i in range(0, len(labels), step)],
                        fontsize=7)
        if y_max is not None:
            axes.set_ylim(0, y_max)
        else:
            axes.set_ylim(bottom=0)
        axes.grid(axis="y", color="#e5e5e5")
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return out[0]


def literal(text: str) -> str:
    """User text (a release name, a task) shown as it is: matplotlib would read $...$ as math."""
    return text.replace("$", r"\$")


def svg_block(svg: str, *, label: str) -> str:
    """An inline SVG with an accessible name, in a figure a page can lay out."""
    return f"<figure role='img' aria-label='{_attr(label)}'>{svg}</figure>"


def _attr(text: Any) -> str:
    return html.escape(str(text), quote=True)
