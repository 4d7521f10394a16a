"""Every script under bench/ and scripts/ imports against today's groundwire. They run by hand (the figures in the
notes come from them), so a renamed or removed name they import would otherwise go unnoticed until someone runs one
(bench/evidence_windows.py imported a constant the verifier no longer had, for two releases)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_IMPORT_EACH = """
import importlib.util, sys
from pathlib import Path
folder = Path(sys.argv[1])
sys.path.insert(0, str(folder))  # the scripts import their siblings (bench/shared_data.py, ...)
for path in sorted(folder.glob("*.py")):
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses read their module from sys.modules
    try:
        spec.loader.exec_module(module)  # their __name__ is not "__main__": nothing runs
        print(f"ok {path.name}")
    except BaseException as error:
        print(f"FAILED {path.name}: {type(error).__name__}: {error}")
"""


@pytest.mark.parametrize("folder", ["bench", "scripts"])
def test_every_script_imports(folder: str) -> None:
    done = subprocess.run([sys.executable, "-c", _IMPORT_EACH, str(ROOT / folder)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(list((ROOT / folder).glob("*.py"))) > 0, done.stdout + done.stderr
    assert [line for line in lines if not line.startswith("ok ")] == []


def test_no_bench_edits_sys_path() -> None:
    """A bench runs as `python bench/NAME.py` with groundwire installed: bench/ is already on the path, so its helpers
    import by name, and a bench that patched sys.path would measure whichever source it pointed at."""
    edit = re.compile(r"sys\.path\s*(\.(insert|append|extend)\(|\[|\+?=)")
    patched = [path.name for path in sorted((ROOT / "bench").glob("*.py")) if edit.search(path.read_text())]
    assert patched == []


def test_every_bench_has_a_row_in_the_index() -> None:
    """bench/README.md is the index: each bench, what it measures, the figure it prints, how long it takes."""
    index = (ROOT / "bench" / "README.md").read_text()
    missing = [path.name for path in sorted((ROOT / "bench").glob("*.py")) if f"`{path.name}`" not in index]
    assert missing == []
