"""Measure an install's size on disk, per distribution: the figures docs/observability.md quotes.

Without `--fresh`, it measures the environment whose python runs it: the files each installed distribution's
RECORD lists, as they are on disk (pip's bytecode included: pip compiles at install and lists the .pyc files).
The venv's own pip and setuptools are counted apart (a venv brings them, not the install). An editable groundwire
is left out (its files are the checkout's).

    .venv-demo/bin/python scripts/install_size.py             # the core install `make demo` builds
    python scripts/install_size.py --fresh . '.[langfuse]'    # a fresh venv per spec: pip install SPEC, measured,
                                                              # then removed; each row against the first spec

Sizes are in MiB (2**20 bytes), as `du -sm` gives them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import asdict, dataclass
from importlib.metadata import Distribution, distributions
from pathlib import Path

MIB = 2**20
VENV_SEED = frozenset({"pip", "setuptools", "wheel"})
"""What `python -m venv` installs by itself: not part of what an install adds."""


@dataclass(frozen=True)
class Size:
    name: str
    version: str
    bytes: int


def distribution_size(distribution: Distribution) -> Size:
    """The bytes on disk of the files a distribution's RECORD lists (a file missing from disk counts 0)."""
    total = 0
    for file in distribution.files or []:
        path = Path(str(distribution.locate_file(file)))
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return Size(distribution.metadata["Name"], distribution.version, total)


def _editable(distribution: Distribution) -> bool:
    return any(str(file).startswith("__editable__") for file in distribution.files or [])


def measure() -> list[Size]:
    """The running environment's distributions, biggest first (the venv's seed and an editable install left out)."""
    site = sysconfig.get_paths()["purelib"]
    found = [distribution_size(d) for d in distributions(path=[site])
             if not _editable(d) and d.metadata["Name"].lower() not in VENV_SEED]
    return sorted(found, key=lambda size: size.bytes, reverse=True)


def fresh(spec: str, python: str) -> list[Size]:
    """`pip install SPEC` into a new venv of `python`, then this script's measure() run there."""
    with tempfile.TemporaryDirectory(prefix="groundwire-size-") as folder:
        subprocess.run([python, "-m", "venv", folder], check=True)
        venv_python = str(Path(folder) / "bin" / "python")
        subprocess.run([venv_python, "-m", "pip", "install", "--quiet", spec], check=True)
        out = subprocess.run([venv_python, __file__, "--json"], check=True, capture_output=True, text=True).stdout
    return [Size(**item) for item in json.loads(out)]


def _mib(count: int) -> str:
    return f"{count / MIB:.0f} MiB"


def report(spec: str, sizes: list[Size], base: list[Size] | None, top: int) -> None:
    total = sum(size.bytes for size in sizes)
    line = f"{spec}: {_mib(total)}, {len(sizes)} distributions"
    if base is None:
        print(line)
        shown = sizes
    else:
        known = {size.name for size in base}
        added = [size for size in sizes if size.name not in known]
        print(f"{line}; +{_mib(total - sum(size.bytes for size in base))}, {len(added)} more than the first")
        shown = added
    for size in shown[: top or None]:
        print(f"  {size.bytes / MIB:7.1f} MiB  {size.name} {size.version}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", nargs="+", metavar="SPEC", help="measure `pip install SPEC` in fresh venvs")
    parser.add_argument("--python", default=sys.executable, help="the python the fresh venvs are made with")
    parser.add_argument("--top", type=int, default=0, help="list only the N biggest distributions (0: all)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # what --fresh reads
    args = parser.parse_args()
    if args.json:
        print(json.dumps([asdict(size) for size in measure()]))
        return
    if not args.fresh:
        report(sysconfig.get_paths()["purelib"], measure(), None, args.top)
        return
    base = None
    for spec in args.fresh:
        sizes = fresh(spec, args.python)
        report(spec, sizes, base, args.top)
        base = base or sizes


if __name__ == "__main__":
    main()
