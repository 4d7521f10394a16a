"""`groundwire serve` refuses bad settings at start-up with exit status 2 and a one-line reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")


@pytest.mark.parametrize("args, message", [
    (["--high-risk", "("], "not a valid regex"),
    (["--api-key", "no-scope-here"], "KEY:SCOPE"),
    (["--api-key", "k1:a", "--api-key", "k1:b"], "given twice"),
])
def test_bad_serve_options_exit_2_before_listening(tmp_path: Path, args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from groundwire.cli.main import main; main()", "serve", "--port", "0",
         "--db", str(tmp_path / "x.db"), "--scorer", "lexical", *args],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert message in " ".join(result.stderr.split())
    assert not (tmp_path / "x.db").exists()  # nothing was opened
