"""The package's shape: every module imports on its own, module-level imports form no cycle (between modules, or
between the top-level subpackages), and the public API and the command list stay what they are."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import groundwire

PACKAGE = Path(groundwire.__file__).parent
FOUNDATION = frozenset({"groundwire.core.errors", "groundwire.core.types", "groundwire.core.textutil"})
"""The shared vocabulary every layer may use; it imports nothing of groundwire but itself."""
PUBLIC_API = {"verify", "Verifier", "Chunk", "Claim", "ClaimResult", "Finding", "InputError", "Report", "Route",
              "Verdict", "REFUSAL_TOKEN", "verify_many", "averify"}
COMMANDS = {"check", "eval", "serve", "generate", "repair", "eval-loop", "batch", "train"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[str]:
    return sorted(_module_name(p) for p in PACKAGE.rglob("*.py"))


def _module_level_imports() -> dict[str, set[str]]:
    """groundwire modules each module imports when it is imported (not inside functions or TYPE_CHECKING)."""
    known = set(_modules())
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        source = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for child in ast.walk(node):
                if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("groundwire"):
                    # `from groundwire.x import y` imports the submodule groundwire.x.y when there is one, and
                    # needs groundwire.x's own namespace only for names that are not submodules.
                    submodules = {f"{child.module}.{a.name}" for a in child.names} & known
                    graph[source].update(submodules)
                    if len(submodules) < len(child.names):
                        graph[source].add(child.module)
                elif isinstance(child, ast.Import):
                    graph[source].update(a.name for a in child.names if a.name.startswith("groundwire"))
    return {m: {t for t in targets if t in known and t != m} for m, targets in graph.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph, or None (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _layer(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "groundwire"


def test_every_module_imports_in_a_fresh_interpreter():
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    # ray_source needs the optional ray extra at import time (the ray engine imports it only when it runs);
    # __main__ runs the command line.
    modules = [m for m in _modules() if m not in ("groundwire.batch.ray_source", "groundwire.__main__")]
    # The Guardrails validator subclasses guardrails' Validator, so it needs its extra at import time; that
    # extra cannot share the dev environment (guardrails-ai 0.11 pins typer<0.20 and openai<3).
    if importlib.util.find_spec("guardrails") is None:
        modules.remove("groundwire.adapters.guardrails")
    for module in modules:  # one interpreter each: a cycle shows only when its module is imported first
        done = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"import {module} failed:\n{done.stderr[-2000:]}"


def test_no_import_cycle_between_modules():
    assert _cycle(_module_level_imports()) is None


def test_no_import_cycle_between_subpackages():
    graph = _module_level_imports()
    assert not any(graph.get(m) for m in FOUNDATION - {"groundwire.core.textutil"})
    assert graph.get("groundwire.core.textutil", set()) <= FOUNDATION
    layers: dict[str, set[str]] = defaultdict(set)
    for source, targets in graph.items():
        for target in targets - FOUNDATION:
            if _layer(source) != _layer(target):
                layers[_layer(source)].add(_layer(target))
    assert _cycle(layers) is None, dict(layers)


def test_the_public_api_is_pinned():
    assert set(groundwire.__all__) == PUBLIC_API
    assert len(groundwire.__all__) == len(PUBLIC_API)
    namespace: dict[str, object] = {}
    exec(f"from groundwire import {', '.join(sorted(PUBLIC_API))}", namespace)  # noqa: S102
    assert all(namespace[name] is not None for name in PUBLIC_API)


def test_help_lists_the_commands():
    done = subprocess.run([sys.executable, "-m", "groundwire", "--help"], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "200", "PATH": "", "TERM": "dumb"})
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("Commands")[1].splitlines()[1:]
    listed = {line.strip("│ ").split()[0] for line in commands if line.strip("│ ─╰╯")}
    assert listed == COMMANDS
