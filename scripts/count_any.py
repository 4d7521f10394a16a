"""Count public functions whose signature mentions `typing.Any`, per package.

Issue 18 item 4 tracks this figure. A function is public when neither its name, its class, nor any part of its
module path starts with an underscore (dunder methods such as `__init__` of a public class count); functions
nested in other functions are not public. A signature mentions Any when a parameter or the return annotation
contains `Any` anywhere (`dict[str, Any]` counts), including string annotations.

    python scripts/count_any.py                # src/groundwire, one line per package, then the total
    python scripts/count_any.py --list train   # also list the functions in the named packages
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
            if _mentions_any(parsed):
                return True
    return False


def _signature_mentions_any(function: Function) -> bool:
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    parameters += [p for p in (arguments.vararg, arguments.kwarg) if p is not None]
    return _mentions_any(function.returns) or any(_mentions_any(p.annotation) for p in parameters)


def _public_functions(tree: ast.Module) -> Iterator[tuple[str, Function]]:
    """Module-level functions and methods of module-level classes (classes nested in classes included)."""

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, Function]]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_private(node.name):
                yield prefix + node.name, node
            elif isinstance(node, ast.ClassDef) and not _is_private(node.name):
                yield from walk(node.body, f"{prefix}{node.name}.")

    return walk(tree.body, "")


def _package_of(path: Path, root: Path) -> str:
    """The first folder under the root, or the module's own name for a top-level module."""
    first = path.relative_to(root).with_suffix("").parts[0]
    return root.name if first == "__init__" else first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path("src/groundwire"))
    parser.add_argument("--list", nargs="*", metavar="PACKAGE", help="list the functions found in these packages")
    options = parser.parse_args()
    root: Path = options.root
    shown = set(options.list or [])

    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("").parts
        if any(_is_private(part) for part in relative):
            continue
        package = _package_of(path, root)
        counts.setdefault(package, 0)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, function in _public_functions(tree):
            if _signature_mentions_any(function):
                counts[package] += 1
                if package in shown:
                    print(f"  {path}:{function.lineno} {name}")
    for package in sorted(counts):
        print(f"{package:<16}{counts[package]:>4}")
    print(f"{'total':<16}{sum(counts.values()):>4}")


if __name__ == "__main__":
    main()
