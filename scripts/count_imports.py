"""Count the imports that sit inside function bodies, split into groundwire's own, third-party and standard library.

Issue 18 item 3 tracks these figures; tests/test_architecture.py says which of them are allowed (a named list of
heavy third-party packages, and a few listed places that import groundwire lazily). An import counts once per
statement; imports under `if TYPE_CHECKING:` never run and are not counted.

    python scripts/count_imports.py                   # src/groundwire: the three counts and the total
    python scripts/count_imports.py --list groundwire # also list the imports of one kind (groundwire, third-party, stdlib)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

KINDS = ("groundwire", "third-party", "stdlib")


def _kind(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.ImportFrom) and node.level:
        return "groundwire"  # a relative import is the package's own
    name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
    top = (name or "").split(".")[0]
    if top == "groundwire":
        return "groundwire"
    return "stdlib" if top in sys.stdlib_module_names else "third-party"


def imports_in_functions(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    def walk(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                yield child
            yield from walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    return walk(tree, False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path("src/groundwire"))
    parser.add_argument("--list", nargs="*", choices=KINDS, metavar="KIND", help="list the imports of these kinds")
    options = parser.parse_args()
    root: Path = options.root
    shown = set(options.list or [])

    counts: Counter[str] = Counter({kind: 0 for kind in KINDS})
    for path in sorted(root.rglob("*.py")):
        for node in imports_in_functions(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            kind = _kind(node)
            counts[kind] += 1
            if kind in shown:
                print(f"  {path}:{node.lineno} {ast.unparse(node)}")
    for kind in KINDS:
        print(f"{kind:<16}{counts[kind]:>4}")
    print(f"{'total':<16}{sum(counts.values()):>4}")


if __name__ == "__main__":
    main()
