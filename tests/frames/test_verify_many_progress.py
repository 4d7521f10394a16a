"""verify_many's progress bar (issue 37): rows done out of the frame's rows, on stderr; shown by default only where
stderr is a terminal, and `progress=` forces it on or off."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from groundwire import Verifier
from groundwire.frames import averify_many, verify_many
from groundwire.scoring import get_scorer

pd = pytest.importorskip("pandas")

REFUND = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
ROWS = [
    {"retrieved_contexts": [REFUND], "response": "Refunds are accepted within 30 days of purchase."},
    {"retrieved_contexts": [REFUND], "response": "Shipping takes 5 business days."},
    {"retrieved_contexts": [REFUND], "response": 3},  # unreadable: an error row, still counted as done
]


class Terminal(io.StringIO):
    """A stderr that says it is a terminal, and keeps what is written to it."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def lexical() -> Verifier:
    return Verifier(get_scorer("lexical"))


def test_forced_on_shows_the_rows_done_out_of_the_frames_rows(lexical: Verifier, capsys) -> None:
    results = verify_many(pd.DataFrame(ROWS), verifier=lexical, progress=True)
    assert len(results) == 3 and results["error_code"].tolist()[2] == "invalid_row"
    captured = capsys.readouterr()
    assert "verify_many" in captured.err and "3/3 rows" in captured.err  # stderr is not a terminal: the last state
    assert captured.out == ""


def test_by_default_only_on_a_terminal(lexical: Verifier, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame(ROWS)
    verify_many(frame, verifier=lexical)  # pytest's captured stderr is no terminal
    assert capsys.readouterr().err == ""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    verify_many(frame, verifier=lexical)
    assert "3/3" in terminal.getvalue() and "verify_many" in terminal.getvalue()
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    verify_many(frame, verifier=lexical, progress=False)
    asyncio.run(averify_many(frame, verifier=lexical, progress=False))
    assert quiet.getvalue() == ""


def test_averify_many_passes_progress_on(lexical: Verifier, capsys) -> None:
    asyncio.run(averify_many(pd.DataFrame(ROWS), verifier=lexical, progress=True))
    assert "3/3 rows" in capsys.readouterr().err
