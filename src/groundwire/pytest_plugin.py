"""groundwire in any test suite: `assert_grounded(answer, chunks)` fails a test whose answer is not grounded in
its chunks, with a message that lists each unsupported claim (text, verdict, score, the checks that fired and
the best evidence found).

Installed with groundwire, pytest loads this module through the `pytest11` entry point; `-p
groundwire.pytest_plugin` loads it explicitly (and `-p no:groundwire.pytest_plugin` turns it off). It adds:

- the function `assert_grounded`, importable as `from groundwire.pytest_plugin import assert_grounded`;
- a fixture of the same name, bound to the scorer `--groundwire-scorer` (or the ini option `groundwire_scorer`)
  names, the bundled model when neither is set.

Passing follows groundwire's routing: an ACCEPT passes, a REJECT fails, and an ESCALATE fails too, saying it
was escalated, because a test has no judge to settle it: an escalated answer is never passed silently. An
abstention (NOT_IN_CONTEXT) asserts nothing and passes. Importing this module is cheap: the verifier (and its
model) load on the first assertion, so a suite that never asserts grounding pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Unpack

import pytest

from groundwire.core.explain import explain
from groundwire.foundation.types import Chunk, Report, Route

if TYPE_CHECKING:
    from groundwire.pipeline import CheckOptions

AssertGrounded = Callable[..., Report]


class NotGroundedError(AssertionError):
    """The answer was not accepted; `report` is the full check."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def assert_grounded(
    answer: str,
    chunks: Sequence[Chunk | str],
    *,
    question: str | None = None,
    task: str | None = None,
    require_citations: bool = False,
    **options: Unpack[CheckOptions],
) -> Report:
    """Check `answer` against `chunks` and return the report when it is accepted; raise NotGroundedError (an
    AssertionError) with the claims that are not supported otherwise. `options` (CheckOptions, as verify()'s:
    `settings`, with any of its fields given as keywords put over them, or a `verifier`, not both) pick the check;
    none means the shared verifier of the bundled model. `require_citations` as verify()'s."""
    __tracebackhide__ = True  # the failure points at the test's line, not at this function
    from groundwire.core.plan import as_chunks
    from groundwire.pipeline import CheckItem, check, checker_for

    checker = checker_for("assert_grounded()", **options)
    item = CheckItem(answer, as_chunks(chunks), question=question, task=task, require_citations=require_citations)
    report = check(checker.verifier, item, judge=checker.judge)
    if report.route is Route.ACCEPT:
        return report
    why = {
        Route.REJECT: "the answer is not grounded in its chunks",
        Route.ESCALATE: "the answer was escalated: the check could not settle it, and a test has no judge",
    }[report.route]
    raise NotGroundedError(f"{why}\n{explain(report, checker.verifier.thresholds_for(task))}", report)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("groundwire", "grounding checks (groundwire)")
    group.addoption(
        "--groundwire-scorer",
        default=None,
        help="scorer the assert_grounded fixture checks with (e.g. hhem:<path>); default: the bundled model",
    )
    parser.addini("groundwire_scorer", "scorer the assert_grounded fixture checks with", default="")


@pytest.fixture(name="assert_grounded")
def assert_grounded_fixture(request: pytest.FixtureRequest) -> AssertGrounded:
    """`assert_grounded` bound to the scorer the command line or the ini file names."""
    scorer = request.config.getoption("groundwire_scorer") or request.config.getini("groundwire_scorer") or None

    def bound(answer: str, chunks: Sequence[Chunk | str], **options: object) -> Report:
        __tracebackhide__ = True
        if "verifier" not in options and "scorer" not in options:
            options["scorer"] = scorer
        return assert_grounded(answer, chunks, **options)  # type: ignore[arg-type]

    return bound
