"""The scripts under scripts/ and bench/, loaded as modules, for the tests that check what they generate is up to date
or run part of their code."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
BENCH = ROOT / "bench"


def load_script(name: str, folder: Path = SCRIPTS) -> ModuleType:
    """<folder>/<name>.py as a module named `name` (it is not a package: loaded from its path), registered in
    sys.modules, where its dataclasses look their module up."""
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_bench(name: str) -> ModuleType:
    """bench/<name>.py as `python bench/NAME.py` runs it: bench/ on the path, for its helpers (bench/shared_data.py)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return load_script(name, BENCH)
