"""The test suite's live-server helpers, for the benches that start a service or a scripted LLM.

They live in tests/ (the tests are their first user); a bench loads them by file rather than adding tests/ to the
import path, so that no bench changes where another module is imported from.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _load(relative: str) -> ModuleType:
    path = TESTS / relative
    spec = importlib.util.spec_from_file_location(f"tests_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass reads its module from sys.modules
    spec.loader.exec_module(module)
    return module


free_port = _load("service/live_server.py").free_port
ScriptedLLMServer = _load("llm/scripted_llm.py").ScriptedLLMServer
