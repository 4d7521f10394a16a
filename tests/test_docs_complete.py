"""The docs are whole and agree with the measured figures: no doc ends inside a sentence or inside an open code
block, and every install size a doc states is the one docs/install_sizes.json holds for the install it names.

An install size is written after a marker naming its install, a key of docs/install_sizes.json (which
`scripts/install_size.py --write` measures): `<!-- size: core -->308 MiB`. The marker does not show on the rendered
page; the words around the figure say which install it is. A figure in MB or MiB next to `.venv-demo` or
`pip install .` without a marker fails the test, so a size cannot be restated by hand. docs/observability.md's
table of every install is the script's `--table` rendering of the file."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md")])
SIZES = ROOT / "docs" / "install_sizes.json"
FENCE = re.compile(r"^ *```")
COMMENT = re.compile(r"<!--.*?-->", re.S)
SENTENCE_END = re.compile(r"""[.!?:][)"'*`_]*$""")
LIST_ITEM = re.compile(r"^ *(?:[-*+]|\d+\.) ")
MARKED_SIZE = re.compile(r"<!-- size: (?P<install>[\w-]+) -->(?P<mib>\d+) MiB")
SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?(?:MB|MiB)\b")
INSTALL_WORDS = re.compile(r"\.venv-demo|pip install \.(?![\w\[])")
NEAR = 40
"""Characters either side of an install's name within which an unmarked size counts as that install's."""


def unfinished(text: str) -> str | None:
    """Why a document does not end as a whole one does (None: it does): an open code block, or a last paragraph
    that stops inside a sentence (no closing punctuation, or an unclosed bracket or code span)."""
    lines = text.splitlines()
    fences = [number for number, line in enumerate(lines, 1) if FENCE.match(line)]
    if len(fences) % 2:
        return f"the code block opened at line {fences[-1]} is never closed"
    body = COMMENT.sub("", text).rstrip()
    if not body:
        return "it is empty"
    last = body.splitlines()[-1]
    if FENCE.match(last) or last.lstrip().startswith("|"):  # a closed block or a table row
        return None
    paragraph = body.split("\n\n")[-1]
    if paragraph.count("(") > paragraph.count(")") or paragraph.count("[") > paragraph.count("]"):
        return f"it ends inside brackets: {last!r}"
    if paragraph.count("`") % 2:
        return f"it ends inside a code span: {last!r}"
    item = [line for line in paragraph.splitlines() if LIST_ITEM.match(line)]
    if item or SENTENCE_END.search(last):  # a list's last item need not end with a full stop
        return None
    return f"it ends inside a sentence: {last!r}"


@pytest.mark.parametrize("text, why", [
    ("Intro.\n\nIt fails the test with `NotGroundedError` (an\n", "it ends inside brackets"),
    ("Intro.\n\n```python\nprint(1)\n", "the code block opened at line 3 is never closed"),
    ("Intro.\n\nThe service answers within\n", "it ends inside a sentence"),
    ("Intro.\n\nUse `groundwire check\n", "it ends inside a code span"),
])
def test_the_check_finds_a_doc_cut_short(text: str, why: str) -> None:
    found = unfinished(text)
    assert found is not None and found.startswith(why)


@pytest.mark.parametrize("text", [
    "A sentence.\n", "A list:\n\n- one\n- the last item, without a stop\n", "```python\nx = 1\n```\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n<!-- end of generated tables -->\n", "Read (this).\n",
])
def test_the_check_passes_a_whole_doc(text: str) -> None:
    assert unfinished(text) is None


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_doc_ends_inside_a_sentence_or_a_code_block(doc: Path) -> None:
    assert unfinished(doc.read_text()) is None, f"{doc.relative_to(ROOT)}: {unfinished(doc.read_text())}"


def stated_sizes() -> list[tuple[str, int, str, int]]:
    """Every marked install size in the docs: (doc, line, install, MiB)."""
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            for match in MARKED_SIZE.finditer(line):
                found.append((str(doc.relative_to(ROOT)), number, match["install"], int(match["mib"])))
    return found


def test_every_stated_install_size_is_the_measured_one() -> None:
    installs = json.loads(SIZES.read_text())["installs"]
    stated = stated_sizes()
    assert {"README.md", "docs/speed.md", "docs/observability.md"} <= {doc for doc, *_ in stated}
    assert {"demo", "core"} <= {install for _, _, install, _ in stated}
    wrong = [f"{doc}:{line}: {install} {mib} MiB, measured {installs[install]['mib']} MiB"
             for doc, line, install, mib in stated if install not in installs or installs[install]["mib"] != mib]
    assert wrong == []


def test_no_install_size_is_stated_without_its_marker() -> None:
    script = install_size_script()
    unmarked = []
    for doc in DOCS:
        text = doc.read_text()
        if script.TABLE_START in text:  # the generated table: checked whole, against the file, below
            before, _, rest = text.partition(script.TABLE_START)
            text = before + "\n" * rest.partition(script.TABLE_END)[0].count("\n") + rest.partition(script.TABLE_END)[2]
        for number, line in enumerate(text.splitlines(), 1):
            bare = MARKED_SIZE.sub("", line)
            for install in INSTALL_WORDS.finditer(bare):
                near = bare[max(0, install.start() - NEAR): install.end() + NEAR]
                unmarked += [f"{doc.relative_to(ROOT)}:{number}: {size}" for size in SIZE.findall(near)]
    assert unmarked == []


@functools.cache
def install_size_script() -> ModuleType:
    """scripts/install_size.py, imported (its dataclasses need it in sys.modules while they are made)."""
    spec = importlib.util.spec_from_file_location("install_size", ROOT / "scripts" / "install_size.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_sizes_file_holds_every_install_and_says_what_each_is() -> None:
    data = json.loads(SIZES.read_text())
    assert data["written_by"] == "scripts/install_size.py --write" and data["unit"].startswith("MiB")
    assert list(data["installs"]) == list(install_size_script().INSTALLS)
    for key, install in data["installs"].items():
        assert install["means"] == install_size_script().INSTALLS[key].means, key
        assert install["distributions"] == len(install["sizes"]), key
        assert abs(install["mib"] - sum(install["sizes"].values())) <= 1 + len(install["sizes"]) * 0.05, key


def test_observabilitys_table_is_the_sizes_file() -> None:
    script = install_size_script()
    expected = script.table(json.loads(SIZES.read_text()))
    text = (ROOT / "docs" / "observability.md").read_text()
    assert text.count(script.TABLE_START) == 1, "the table's opening marker"
    shown = text[text.index(script.TABLE_START): text.index(script.TABLE_END) + len(script.TABLE_END)]
    assert shown == expected, "run: python3 scripts/install_size.py --table docs/install_sizes.json"
