"""The command line of a core install (`pip install groundwire`, no extras): it starts, `--help` lists every
command, `check` works, and a command whose extra is missing exits 2 naming the extra to install."""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXTRA_MODULES = ("fastapi", "uvicorn", "starlette", "sqlalchemy", "limits", "ray", "pyarrow", "torch", "transformers",
                 "onnx", "sklearn", "pandas", "matplotlib", "deepeval", "ragas", "llama_index", "langchain_core",
                 "haystack")
"""Top-level modules of the optional extras (serve, ray, hf/train, frames, eval and the five adapters)."""

HEAVY = ("fastapi", "uvicorn", "ray", "torch", "transformers", "onnx", "onnxruntime", "deepeval", "ragas", "llama_index",
         "langchain_core", "haystack")

# A None entry in sys.modules makes `import name` (and `import name.sub`) raise ModuleNotFoundError and
# importlib.util.find_spec(name) return None: to the program, the package is not installed.
_WITHOUT_EXTRAS = """
import runpy, sys
for name in {modules!r}:
    sys.modules[name] = None
sys.argv = ["groundwire", *sys.argv[1:]]
runpy.run_module("groundwire", run_name="__main__", alter_sys=True)
"""


def run_without_extras(*args: str) -> subprocess.CompletedProcess[str]:
    code = _WITHOUT_EXTRAS.format(modules=EXTRA_MODULES)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200", "TERM": "dumb"})


def test_importing_the_cli_loads_no_extra():
    code = ("import sys, groundwire.cli.main\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:]))))")
    done = subprocess.run([sys.executable, "-c", code, *HEAVY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


STARTUP_DEPENDENCIES = ("numpy", "pydantic", "httpx", "onnxruntime", "tokenizers", "pysbd", "sqlalchemy")
"""What the commands need when they run (the verifier, the settings, the LLM client, the model), never to start."""

_MODULES_AFTER = """
import contextlib, io, sys
from groundwire.cli.main import run_cli
with contextlib.redirect_stdout(io.StringIO()):
    status = run_cli(sys.argv[1:])
print(status, ' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({modules!r}))))
"""


def top_level_modules_after(*args: str, among: tuple[str, ...]) -> tuple[int, list[str]]:
    """Run the command line in a fresh interpreter: its exit status, and which of `among` it imported."""
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER.format(modules=among), *args], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    status, *loaded = done.stdout.split()
    return int(status), loaded


def test_importing_the_cli_loads_no_command_dependency():
    # `groundwire --help` starts fast because the verifier (numpy), the settings (pydantic), the LLM client (httpx)
    # and the model (onnxruntime, tokenizers) load only when a command runs (bench/startup.py times it).
    code = ("import sys, groundwire.cli.main\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:]))))")
    done = subprocess.run([sys.executable, "-c", code, *STARTUP_DEPENDENCIES], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_help_loads_no_command_dependency():
    assert top_level_modules_after("--help", among=STARTUP_DEPENDENCIES + HEAVY) == (0, [])


def test_a_lexical_check_loads_neither_the_model_nor_the_llm_client():
    status, loaded = top_level_modules_after(
        "check", "--context", str(EXAMPLES / "refund_policy.md"), "--answer", "Refunds take 5 business days.",
        "--scorer", "lexical", "--json", among=("onnxruntime", "tokenizers", "httpx", *HEAVY))
    assert status == 0
    assert loaded == []


LEXICAL_CHECK_NEVER_LOADS = (
    "groundwire.scoring.onnx", "groundwire.scoring.hf", "groundwire.llm.client", "groundwire.llm.judge",
    "groundwire.llm.repair", "groundwire.llm.decompose", "groundwire.evaluation", "groundwire.service.app",
    "groundwire.data.store", "groundwire.batch.engines", "groundwire.train", "tomlkit",
    "sqlalchemy", "matplotlib", "pandas",
)
"""What a lexical `check` does not use: the model backends, the LLM tier, eval, the service, the provenance store,
the batch engines, training, and tomlkit (it only writes groundwire.toml). Each would add to its start-up. (The
embedder's module may load: pipeline hands it to the embedding pruner; its model loads only when used.)"""

_SUBSYSTEMS_AFTER = """
import contextlib, io, sys
from groundwire.cli.main import run_cli
with contextlib.redirect_stdout(io.StringIO()):
    status = run_cli(sys.argv[1:])
print(status, ' '.join(sorted(set({modules!r}) & set(sys.modules))))
"""


def test_a_lexical_check_loads_no_subsystem_it_does_not_use():
    done = subprocess.run(
        [sys.executable, "-c", _SUBSYSTEMS_AFTER.format(modules=LEXICAL_CHECK_NEVER_LOADS), "check", "--context",
         str(EXAMPLES / "refund_policy.md"), "--context", str(EXAMPLES / "shipping.md"), "--answer",
         f"@{EXAMPLES / 'answer.txt'}", "--scorer", "lexical"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    status, *loaded = done.stdout.split()
    assert (int(status), loaded) == (1, [])  # the example's answer is rejected: CommandOutcome.NOT_GROUNDED


def _command_callbacks(app: typer.Typer) -> list[Callable[..., object]]:
    callbacks = [info.callback for info in app.registered_commands if info.callback is not None]
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        callbacks.append(app.registered_callback.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            callbacks += _command_callbacks(group.typer_instance)
    return callbacks


def test_command_annotations_are_evaluated_once_at_import():
    # Left as strings (postponed annotations), typer evaluates them four times per command, for every command, each
    # time the command line starts: a tenth of a lexical check's instructions (bench/startup.py --instructions).
    from groundwire.cli.main import app

    callbacks = _command_callbacks(app)
    assert len(callbacks) >= 14  # check, eval, serve, batch, generate, repair, eval-loop, train's six, the options
    unevaluated = [f"{callback.__qualname__}: {name}" for callback in callbacks
                   for name, annotation in callback.__annotations__.items() if isinstance(annotation, str)]
    assert unevaluated == []


def test_help_lists_every_command_without_the_extras():
    done = run_without_extras("--help")
    assert done.returncode == 0, done.stderr
    for command in ("check", "eval", "serve", "batch", "train", "eval-loop", "generate", "repair"):
        assert f" {command} " in done.stdout


def test_check_runs_on_the_examples_without_the_extras():
    done = run_without_extras("check", "--context", str(EXAMPLES / "refund_policy.md"), "--context",
                              str(EXAMPLES / "shipping.md"), "--answer", f"@{EXAMPLES / 'answer.txt'}", "--json")
    assert done.returncode == 1, done.stderr  # rejected: CommandOutcome.NOT_GROUNDED
    report = json.loads(done.stdout)
    assert report["route"] == "reject"  # the example's fabricated figure is caught, as with every extra installed
    assert any("25 euros" in c["claim"]["text"] and c["verdict"] != "SUPPORTED" for c in report["claims"])


def test_serve_without_its_extra_exits_2_naming_it():
    done = run_without_extras("serve", "--port", "0")
    assert done.returncode == 2
    assert "pip install 'groundwire[serve]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_train_run_without_its_extra_exits_2_naming_it(tmp_path):
    done = run_without_extras("train", "run", "--data", str(tmp_path))
    assert done.returncode == 2
    assert "pip install 'groundwire[train]'" in done.stderr


def test_eval_html_without_matplotlib_exits_2_naming_the_extra(tmp_path):
    done = run_without_extras("eval", str(tmp_path / "rows.jsonl"), "--html", str(tmp_path / "report.html"))
    assert done.returncode == 2
    assert "pip install 'groundwire[eval]'" in done.stderr
    assert not (tmp_path / "report.html").exists()
