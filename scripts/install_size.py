"""Measure an install's size on disk, per distribution: the one source of the install sizes the docs quote.

Without `--fresh`, it measures the environment whose python runs it: the files each installed distribution's
RECORD lists, as they are on disk (pip's bytecode included: pip compiles at install and lists the .pyc files).
The venv's own pip and setuptools are counted apart (a venv brings them, not the install). An editable groundwire
is left out (its files are the checkout's).

    .venv-demo/bin/python scripts/install_size.py             # the core install `make demo` builds
    python scripts/install_size.py --fresh . '.[langfuse]'    # a fresh venv per spec: pip install SPEC, measured,
                                                              # then removed; each row against the first spec

    python3.11 scripts/install_size.py --write docs/install_sizes.json            # every install in INSTALLS
    python3.11 scripts/install_size.py --write docs/install_sizes.json demo core  # only these; the rest is kept
    python3 scripts/install_size.py --table docs/install_sizes.json               # docs/observability.md's table

`--write` measures each named install of INSTALLS in a fresh venv, built as that install is built, and writes the
figures to the file the docs take their sizes from (tests/test_docs_complete.py checks every size a doc states
against it). Sizes are in MiB (2**20 bytes), as `du -sm` gives them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import asdict, dataclass
from importlib.metadata import Distribution, distributions
from pathlib import Path
from typing import Any

MIB = 2**20
VENV_SEED = frozenset({"pip", "setuptools", "wheel"})
"""What `python -m venv` installs by itself: not part of what an install adds."""
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Install:
    """One install the docs quote a size for: what it is, in words, and how it is built."""

    means: str
    spec: str
    """What pip installs, from the checkout's root."""
    make_demo: bool = False
    """Built as `make demo` builds .venv-demo: a venv without pip, filled by this python's pip with --no-compile,
    groundwire editable (its files are the checkout's, so not counted); else `pip install SPEC` in a venv with pip
    (bytecode compiled, groundwire counted)."""


INSTALLS: dict[str, Install] = {
    "demo": Install("the core as `make demo` builds `.venv-demo` (`pip install --no-compile -e .`: no bytecode, "
                    "groundwire editable and not counted)", "-e .", make_demo=True),
    "core": Install("the core, `pip install .` in a fresh venv (bytecode compiled, groundwire and its bundled model "
                    "counted)", "."),
    "langfuse": Install("the core and `[langfuse]`, `pip install '.[langfuse]'` in a fresh venv", ".[langfuse]"),
    "phoenix": Install("the core and `[phoenix]`, `pip install '.[phoenix]'` in a fresh venv", ".[phoenix]"),
    "mlflow": Install("the core and `[mlflow]`, `pip install '.[mlflow]'` in a fresh venv", ".[mlflow]"),
    "trulens": Install("the core and `[trulens]`, `pip install '.[trulens]'` in a fresh venv", ".[trulens]"),
}
"""The installs docs/install_sizes.json holds, by key; docs/observability.md's table and the other docs quote them."""


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
        subprocess.run([venv_python, "-m", "pip", "install", "--quiet", spec], check=True, cwd=ROOT)
        out = subprocess.run([venv_python, __file__, "--json"], check=True, capture_output=True, text=True).stdout
    return [Size(**item) for item in json.loads(out)]


def build_and_measure(install: Install, python: str) -> list[Size]:
    """A fresh venv built as `install` says, measured by this script run there, then removed."""
    if not install.make_demo:
        return fresh(install.spec, python)
    with tempfile.TemporaryDirectory(prefix="groundwire-size-") as folder:
        subprocess.run([python, "-m", "venv", "--without-pip", folder], check=True)
        venv_python = str(Path(folder) / "bin" / "python")
        subprocess.run([python, "-m", "pip", "--python", venv_python, "install", "--quiet", "--no-compile",
                        *install.spec.split()], check=True, cwd=ROOT)
        out = subprocess.run([venv_python, __file__, "--json"], check=True, capture_output=True, text=True).stdout
    return [Size(**item) for item in json.loads(out)]


def write(path: Path, keys: list[str], python: str) -> None:
    """Measure each install of `keys` and write its figures into `path` (a JSON object keyed as INSTALLS; the
    installs not measured now keep their entries)."""
    unknown = sorted(set(keys) - set(INSTALLS))
    if unknown:
        raise SystemExit(f"unknown install(s) {', '.join(unknown)}: choose from {', '.join(INSTALLS)}")
    data = json.loads(path.read_text()) if path.exists() else {}
    installs = data.setdefault("installs", {})
    data["unit"] = "MiB (2**20 bytes): the files each distribution's RECORD lists, as on disk; pip and setuptools " \
                   "of the venv left out"
    data["written_by"] = "scripts/install_size.py --write"
    version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"], check=True,
                             capture_output=True, text=True).stdout.strip()
    for key in keys:
        install = INSTALLS[key]
        sizes = build_and_measure(install, python)
        total = sum(size.bytes for size in sizes)
        installs[key] = {
            "means": install.means,
            "mib": round(total / MIB),
            "distributions": len(sizes),
            "sizes": {size.name: round(size.bytes / MIB, 1) for size in sizes},  # biggest first
            "python": version,
            "measured": datetime.date.today().isoformat(),
        }
        print(f"{key}: {installs[key]['mib']} MiB, {len(sizes)} distributions ({install.means})", flush=True)
        data["installs"] = {name: installs[name] for name in INSTALLS if name in installs}
        path.write_text(json.dumps(data, indent=2) + "\n")


TABLE_START = "<!-- install sizes table: scripts/install_size.py --table docs/install_sizes.json -->"
TABLE_END = "<!-- end of install sizes table -->"


def table(data: dict[str, Any]) -> str:
    """docs/observability.md's table of the installs in `data` (what --write wrote), between its two markers: each
    install's size and distributions, an extra's over the core's, and the five biggest (an extra's: of those it
    adds). tests/test_docs_complete.py checks that the doc holds exactly this."""
    installs = data["installs"]
    core = installs.get("core")
    rows = [TABLE_START, "| install | what it is | size | distributions | added over the core | the biggest (MiB; an extra's: of those it adds) |",
            "|---|---|---|---|---|---|"]
    for key, install in installs.items():
        sizes: dict[str, float] = install["sizes"]
        added = ""
        if core is not None and key not in ("core", "demo"):
            sizes = {name: mib for name, mib in sizes.items() if name not in core["sizes"]}
            added = f"+{install['mib'] - core['mib']} MiB, {install['distributions'] - core['distributions']}"
        biggest = ", ".join(f"{name} {mib}" for name, mib in list(sizes.items())[:5])
        rows.append(f"| `{key}` | {install['means']} | {install['mib']} MiB | {install['distributions']} | {added} | "
                    f"{biggest} |")
    return "\n".join([*rows, TABLE_END])


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
    parser.add_argument("--write", nargs="+", metavar="FILE [INSTALL]",
                        help=f"measure INSTALLs (default: all of {', '.join(INSTALLS)}) and write them to FILE")
    parser.add_argument("--table", metavar="FILE", help="print docs/observability.md's table of FILE's installs")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # what --fresh reads
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return
    if args.write:
        write(Path(args.write[0]), args.write[1:] or list(INSTALLS), args.python)
        return
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
