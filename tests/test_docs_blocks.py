"""Every code block in README.md and docs/*.md runs, as written, or says why it cannot.

The grammar of a fenced block, by its language:
- `python`: run. A file's Python blocks run in order in one fresh interpreter, sharing one namespace (as a reader
  following the page would), with a copy of the repository's examples/ in the working directory (one directory per
  test). When a block prints, the
  `# ` comment lines that end it are what it prints: every printed line matches one of them (`...` in a comment
  line matches anything; the order is free, as in `rows in the order they finish`). A DeprecationWarning raised by a
  block's own code fails it.
- `bash`, `sh`, `shell`: run by bash with `set -e -o pipefail`, in the same working directory (so every command
  exits 0).
- `console`: a transcript. Lines starting with `$ ` are commands (a trailing backslash continues one); the lines
  after a command are its output (stdout and stderr), compared line by line with trailing spaces and times
  (`0.34s`) set aside. rich's tables are printed at 100 columns.
- `text`, `json`, `toml`, `jsonl`, `http`: not code (a diagram, an output, a file's format); never run. They may not
  hold a `groundwire` command line, so that a command cannot hide in one.
- A block preceded by `<!-- not run: REASON -->` (installs packages, starts a server, needs an LLM endpoint or
  the dev sets...) is not run, and its reason is counted. Its Python must still compile, its `groundwire` command
  lines must name real commands and options, and a test or example its reason names must exist.
A block with no language, or one not listed, fails the test: so every runnable block either runs or is marked.

A block that sends a request to `http://127.0.0.1:8000` runs against a `groundwire serve` this test starts on a
free loopback port (the URL in the block is pointed at it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "service"))
from live_server import LiveServer  # the helper tests/service's tests import the same way

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
RUN = {"python", "bash", "sh", "shell", "console"}
NOT_CODE = {"text", "json", "jsonl", "toml", "http"}
SERVICE_URL = "http://127.0.0.1:8000"
MARKER = re.compile(r"<!--\s*not run:\s*(?P<reason>.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
TIME = re.compile(r"\b\d+(\.\d+)?s\b")
BLOCK_SEPARATOR = "=== groundwire docs block ==="


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    not_run: str | None  # the reason, for a marked block

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.fullmatch(previous.strip())
        indent = len(opening["indent"])
        code = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        found.append(Block(path, i + 1, opening["lang"], code, marker["reason"] if marker else None))
        i = end + 1
    return found


ALL = [block for path in DOCS for block in blocks(path)]


def _normal(line: str) -> str:
    return TIME.sub("<time>s", line.rstrip())


def _matches(pattern: str, line: str) -> bool:
    return re.fullmatch(".*".join(re.escape(part) for part in _normal(pattern).split("...")), _normal(line)) is not None


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory of its own per test holding a copy of examples/, where the blocks run: what one writes (such as
    the groundwire.toml of `eval --target-far`) stays there."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    """groundwire as installed beside this interpreter, importing this checkout's code."""
    env = {**os.environ, "GROUNDWIRE_CONFIG": "", "HF_HUB_OFFLINE": "1", "COLUMNS": "100", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    for name in ("GROUNDWIRE_API_KEYS", "TERM"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # `groundwire serve` as the README starts it (its default scorer, no key), on a free port.
    with LiveServer(tmp_path_factory.mktemp("serve"), api_keys={}, extra_args=("--scorer", "bundled")) as live:
        yield live.url


def _needs_service(block: Block) -> bool:
    return SERVICE_URL in block.code


# --- the grammar -------------------------------------------------------------------------------------------------


def test_every_block_is_run_or_says_why_not() -> None:
    unknown = [f"{b.where} ```{b.lang}" for b in ALL if b.lang not in RUN | NOT_CODE]
    assert not unknown, f"give these blocks a language ({sorted(RUN | NOT_CODE)}): {unknown}"
    empty_reasons = [b.where for b in ALL if b.not_run is not None and not b.not_run]
    assert not empty_reasons
    # A reason that names what runs the block instead (a test, an example) names a file that exists.
    named = [(b.where, path) for b in ALL for path in re.findall(r"[\w./-]+/[\w.-]+\.py", b.not_run or "")]
    assert not [(where, path) for where, path in named if not (ROOT / path).exists()]
    hidden = [b.where for b in ALL if b.lang in NOT_CODE and re.search(r"^\$? ?groundwire \w", b.code, re.M)]
    assert not hidden, f"a command line in a block that is not run: {hidden}"
    run = [b for b in ALL if b.lang in RUN and b.not_run is None]
    marked = [b for b in ALL if b.not_run is not None]
    # The README's examples all run: its only marked blocks install packages, build environments or start a server.
    readme = [b for b in ALL if b.path.name == "README.md"]
    assert sum(b.not_run is None for b in readme if b.lang in RUN) >= 3
    assert len(run) >= 10, "the parser found fewer runnable blocks than the docs hold"
    print(f"{len(run)} blocks run, {len(marked)} marked not run, {len(ALL) - len(run) - len(marked)} not code")


@pytest.mark.parametrize("block", [b for b in ALL if b.not_run is not None and b.lang == "python"],
                         ids=lambda b: b.where)
def test_a_python_block_that_is_not_run_still_compiles(block: Block) -> None:
    compile(block.code, block.where, "exec")


def _command_lines(code: str) -> Iterator[list[str]]:
    """The `groundwire ...` command lines of a shell block or transcript, as words (continuations joined)."""
    text = re.sub(r"\\\n\s*", " ", code)
    for line in text.splitlines():
        line = line.removeprefix("$ ").split("#", 1)[0]
        for part in re.split(r"&&|\|\||;|\|", line):
            words = shlex.split(part.strip(), posix=True) if part.strip() else []
            while words and "=" in words[0] and not words[0].startswith("-"):  # VAR=value before the command
                words = words[1:]
            if words and Path(words[0]).name == "groundwire":  # groundwire, or .venv/bin/groundwire
                yield [word.strip("[]") for word in words[1:]]


@pytest.mark.parametrize("block", [b for b in ALL if b.not_run is not None and b.lang in RUN - {"python"}
                                   and "groundwire" in b.code], ids=lambda b: b.where)
def test_a_command_that_is_not_run_still_exists(block: Block) -> None:
    # A marked block's `groundwire` commands name a real command and only options it has: docs that drift from
    # the command line fail here even where they cannot run.
    import typer.main

    from groundwire.cli.main import app  # its commands are registered when it is imported

    group = typer.main.get_command(app)
    for words in _command_lines(block.code):
        command = group.commands.get(words[0]) if words else None  # type: ignore[attr-defined]
        assert command is not None, f"{block.where}: no command {words[:1]}"
        subcommands = getattr(command, "commands", None)
        if subcommands:  # a group (`adapt`): its subcommand, or the command it runs by default (`adapt FILE`: fit)
            named = subcommands.get(words[1]) if len(words) > 1 else None
            command, words = (named, words[1:]) if named is not None else (subcommands.get("fit", command), words)
        options = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
        flags = [flag for word in words[1:] if word.startswith("-") for flag in word.split("=", 1)[0].split("/")]
        unknown = [flag for flag in flags if flag not in options]  # `--llm/--no-llm` names both
        assert not unknown, f"{block.where}: groundwire {words[0]} has no {unknown}"


# --- running them ------------------------------------------------------------------------------------------------

_RUNNER = r"""
import json, sys, traceback, warnings
warnings.filterwarnings("error", category=DeprecationWarning, module="__main__")
namespace = {"__name__": "__main__"}
for where, code in json.load(open(sys.argv[1], encoding="utf-8")):
    print(SEPARATOR, flush=True)
    try:
        exec(compile(code, where, "exec"), namespace)
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        print("FAILED " + where, flush=True)
        sys.exit(1)
    sys.stdout.flush()
""".replace("SEPARATOR", repr(BLOCK_SEPARATOR))


def _expected_output(code: str) -> list[str] | None:
    """The `# ` lines that end a block that prints, as lines it prints; None when the block does not print."""
    if "print(" not in code:
        return None
    lines = code.rstrip("\n").splitlines()
    tail: list[str] = []
    while lines and (lines[-1] == "#" or lines[-1].startswith("# ")):
        tail.insert(0, lines.pop()[2:])
    return tail


def _check_printed(block: Block, printed: list[str]) -> None:
    expected = _expected_output(block.code)
    if expected is None:
        return
    unmatched = list(printed)
    for pattern in (line for line in expected if line.strip()):  # blank lines are set aside, as in `printed`
        hit = next((line for line in unmatched if _matches(pattern, line)), None)
        assert hit is not None, f"{block.where}: nothing printed matches {pattern!r}; it printed {printed}"
        unmatched.remove(hit)
    assert not unmatched, f"{block.where}: printed lines its comments do not show: {unmatched}"


def _point_at(code: str, url: str) -> str:
    return code.replace(SERVICE_URL, url)


@pytest.mark.parametrize("path", [p for p in DOCS if any(b.lang == "python" and b.not_run is None
                                                            for b in blocks(p))], ids=lambda p: p.name)
def test_the_python_blocks_run(path: Path, workdir: Path, env: dict[str, str]) -> None:
    run = [b for b in blocks(path) if b.lang == "python" and b.not_run is None]
    script, program = workdir / f"{path.stem}.blocks.json", workdir / "run_blocks.py"
    script.write_text(json.dumps([[b.where, b.code] for b in run]), encoding="utf-8")
    program.write_text(_RUNNER, encoding="utf-8")
    done = subprocess.run([sys.executable, str(program), str(script)], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=600)
    outputs = done.stdout.split(BLOCK_SEPARATOR + "\n")[1:]
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert len(outputs) == len(run)
    for block, output in zip(run, outputs, strict=True):
        _check_printed(block, [line for line in output.splitlines() if line.strip()])


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in {"bash", "sh", "shell"} and b.not_run is None],
                         ids=lambda b: b.where)
def test_the_shell_blocks_run(block: Block, workdir: Path, env: dict[str, str],
                              request: pytest.FixtureRequest) -> None:
    code = _point_at(block.code, request.getfixturevalue("service")) if _needs_service(block) else block.code
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def _transcript(code: str) -> list[tuple[str, list[str]]]:
    """(command, output lines) per `$ ` command of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"a transcript starts each step with '$ ': {lines[i]!r}"
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + " " + lines[i].lstrip("> ").strip()
        i += 1
        output: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        steps.append((command, output))
    return steps


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "console" and b.not_run is None],
                         ids=lambda b: b.where)
def test_the_transcripts_print_what_they_show(block: Block, workdir: Path, env: dict[str, str],
                                              request: pytest.FixtureRequest) -> None:
    code = _point_at(block.code, request.getfixturevalue("service")) if _needs_service(block) else block.code
    steps = _transcript(code)
    script = "".join(f"echo '{BLOCK_SEPARATOR}'\n{command}\n" for command, _ in steps)
    done = subprocess.run(["bash", "-c", script], cwd=workdir, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    outputs = done.stdout.split(BLOCK_SEPARATOR + "\n")[1:]
    assert len(outputs) == len(steps), done.stdout
    for (command, shown), output in zip(steps, outputs, strict=True):
        printed = [_normal(line) for line in output.rstrip("\n").splitlines()]
        assert printed == [_normal(line) for line in shown], f"{block.where}: $ {command}\n{output}"


# --- links -------------------------------------------------------------------------------------------------------

LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_every_relative_link_resolves() -> None:
    # The README's sections moved to docs/ (issue 46): a link to a file or a heading that is gone fails here.
    broken = []
    for path in [*DOCS, ROOT / "CONTRIBUTING.md", ROOT / "MODEL_CARD.md"]:
        for match in LINK.finditer(path.read_text(encoding="utf-8")):
            target = match["target"]
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            if not resolved.exists() or (anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved)):
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken
