"""`pip install groundwire` alone, in a fresh virtualenv: the CLI starts and `check` runs the bundled ONNX model on
the examples (issue 22).

Offline and quick, so CI runs it on every change:
  - groundwire itself is built into a wheel from this checkout (pip, no build isolation: this environment's
    setuptools) and installed by pip into a new venv, so packaging mistakes (a model file left out of the wheel,
    a broken entry point) fail here;
  - its dependencies are the distributions this environment already resolved for it, and only those: the closure
    of the wheel's own Requires-Dist (extras left out), linked file by file into the new venv's site-packages, as
    `pip install --no-deps` of the same versions would lay them out. Nothing comes from an index, so the test
    needs no network; a module imported on the `check` path that is not a core dependency fails here.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import groundwire.adapters

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EXTRAS = ("fastapi", "uvicorn", "sqlalchemy", "ray", "torch", "transformers", "sklearn", "scipy", "pandas",
          "matplotlib", "deepeval", "ragas", "llama_index", "langchain_core", "haystack", "opentelemetry")
"""Top-level modules of the optional extras: none of them may be importable in the core venv."""

pytestmark = pytest.mark.slow  # about 15 s on 2 shared cores, most of it building the wheel


def core_closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions these requirements need, transitively, without any extra."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        distribution = importlib.metadata.distribution(requirement.name)
        assert distribution.version in requirement.specifier, f"{requirement} but {distribution.version} is installed"
        found[name] = distribution
        pending.extend(Requirement(text) for text in distribution.requires or [])
    return list(found.values())


def link_distribution(distribution: importlib.metadata.Distribution, site_packages: Path) -> None:
    """Lay out an installed distribution's files (its RECORD) in another site-packages, as symbolic links."""
    origin = Path(str(distribution.locate_file(""))).resolve()
    for file in distribution.files or []:
        source = Path(str(distribution.locate_file(file))).resolve()
        if not source.is_relative_to(origin) or not source.is_file():
            continue  # console scripts live outside site-packages
        target = site_packages / source.relative_to(origin)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("core-venv")
    tree = work / "tree"  # a copy, so that the build leaves nothing (build/, *.egg-info) in the checkout
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", str(tree), "-w",
                    str(work / "wheels")], check=True, timeout=300)
    wheel = next((work / "wheels").glob("groundwire-*.whl"))
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300)
    site_packages = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                        capture_output=True, text=True, check=True).stdout.strip())
    metadata = importlib.metadata.PathDistribution(next(site_packages.glob("groundwire-*.dist-info")))
    for distribution in core_closure(metadata.requires or []):
        link_distribution(distribution, site_packages)
    return venv


def run_in(venv: Path, *command: str) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH (a developer's may point at src/) and no user site: only the venv's own packages count.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env |= {"PYTHONNOUSERSITE": "1", "COLUMNS": "200", "TERM": "dumb"}
    return subprocess.run(list(command), capture_output=True, text=True, timeout=300, env=env, cwd=venv)


def test_the_core_venv_holds_no_extra(core_venv):
    probe = ("import importlib.util, json, sys\n"
             "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None]))")
    done = run_in(core_venv, str(core_venv / "bin" / "python"), "-c", probe, *EXTRAS)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_core_install_checks_the_examples_with_the_bundled_model(core_venv):
    done = run_in(core_venv, str(core_venv / "bin" / "groundwire"), "check", "--context",
                  str(EXAMPLES / "refund_policy.md"), "--context", str(EXAMPLES / "shipping.md"), "--answer",
                  f"@{EXAMPLES / 'answer.txt'}", "--question", (EXAMPLES / "question.txt").read_text().strip(),
                  "--json")
    assert done.returncode == 1, done.stderr  # rejected: CommandOutcome.NOT_GROUNDED
    report = json.loads(done.stdout)
    assert report["model_id"].startswith("groundwire")  # the bundled ONNX verifier, not the lexical fallback
    assert report["route"] == "reject"  # the fabricated shipping price is caught
    fabricated = [claim for claim in report["claims"] if "25 euros" in claim["claim"]["text"]]
    assert fabricated and fabricated[0]["verdict"] == "CONTRADICTED"
    assert sum(claim["verdict"] == "SUPPORTED" for claim in report["claims"]) >= 4


def test_core_install_adapts_a_profile_as_the_readme_says(core_venv):
    """Issue 56: `groundwire adapt labelled.jsonl --out p` with the bundled model refits its combiner without scipy."""
    done = run_in(core_venv, str(core_venv / "bin" / "groundwire"), "adapt", str(EXAMPLES / "labelled.jsonl"),
                  "--out", "profile")
    assert done.returncode == 0, done.stderr
    document = json.loads((core_venv / "profile" / "profile.json").read_text())
    assert document["recipe"] == "combiner" and document["base_model"].startswith("groundwire")
    assert (core_venv / "profile" / "combiner.json").is_file()


def test_core_install_help_lists_every_command(core_venv):
    done = run_in(core_venv, str(core_venv / "bin" / "python"), "-m", "groundwire", "--help")
    assert done.returncode == 0, done.stderr
    for command in ("check", "eval", "serve", "batch", "train", "eval-loop", "generate", "repair"):
        assert f" {command} " in done.stdout


def test_core_install_serve_names_its_extra(core_venv):
    done = run_in(core_venv, str(core_venv / "bin" / "groundwire"), "serve", "--port", "0")
    assert done.returncode == 2
    assert "pip install 'groundwire[serve]'" in done.stderr


ADAPTERS_WITHOUT_A_FRAMEWORK = {
    "common": "the adapters' one rule, on the core alone",
    "evaluations": "the observability adapters' shared records, on the core alone",
    "trulens": "imports no TruLens code: TruLens calls the provider's methods",
}
"""Adapter modules that import in the core venv; every other one needs the extra named after it."""
PROBE_IMPORT = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as error:
        found[name] = [type(error).__name__, str(error)]
    else:
        found[name] = ["imported", ""]
print(json.dumps(found))
"""


def test_every_adapter_imported_without_its_extra_names_the_extra(core_venv):
    adapters = sorted(module.name for module in pkgutil.iter_modules(groundwire.adapters.__path__))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(ADAPTERS_WITHOUT_A_FRAMEWORK) <= set(adapters) and len(adapters) >= 12
    done = run_in(core_venv, str(core_venv / "bin" / "python"), "-c", PROBE_IMPORT,
                  *(f"groundwire.adapters.{name}" for name in adapters))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for name in adapters:
        kind, message = found[f"groundwire.adapters.{name}"]
        if name in ADAPTERS_WITHOUT_A_FRAMEWORK:
            assert kind == "imported", message
            continue
        assert name in extras, f"groundwire.adapters.{name} has no extra of its name in pyproject.toml"
        assert kind == "MissingExtraError", message
        assert message.startswith(f"groundwire.adapters.{name} needs "), message
        assert message.endswith(f"pip install 'groundwire[{name}]'"), message


PROBE_EXTRAS = """
import json
from groundwire.foundation.errors import InputError
found = {}

def probe(name, call):
    try:
        call()
    except ImportError as error:
        found[name] = [isinstance(error, InputError) and error.code.value, str(error)]

def frames():
    from groundwire import verify_many
    verify_many([{"answer": "a", "context": ["a"]}])

def serve():
    from groundwire.service import create_app
    create_app

def store():
    from groundwire.data.store import Store
    Store

def hf():
    from groundwire.scoring import get_scorer
    get_scorer("hf:/no/such/model")

def entities():
    from groundwire.config import CheckSettings
    from groundwire.pipeline import build_verifier
    build_verifier(CheckSettings(scorer="lexical", entities=True))

def ray(tmp=__import__("tempfile").mkdtemp()):
    from groundwire.batch import run_batch
    run_batch(tmp + "/in.jsonl", tmp + "/out", engine="ray")

def charts():
    from groundwire.evaluation.charts import element_id, _figure
    with _figure("t", (1, 1)):
        pass

for call in (frames, serve, store, hf, entities, ray, charts):
    probe(call.__name__, call)
print(json.dumps(found))
"""


def test_the_library_names_the_extra_of_every_optional_dependency(core_venv):
    done = run_in(core_venv, str(core_venv / "bin" / "python"), "-c", PROBE_EXTRAS)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    extras = {"frames": "frames", "serve": "serve", "store": "serve", "hf": "hf", "entities": "entities", "ray": "ray",
              "charts": "eval"}
    for name, extra in extras.items():
        code, message = found[name]
        assert code == "missing_extra" and message.endswith(f"pip install 'groundwire[{extra}]'"), (name, message)
