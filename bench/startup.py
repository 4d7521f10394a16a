"""Start-up of the command line and the library, each in a fresh process, against the 0.5 s target (issue 22).

    .venv/bin/python bench/startup.py             # 5 runs of each (the figures: min and median)
    .venv/bin/python bench/startup.py --runs 10
    .venv/bin/python bench/startup.py --instructions   # once each under valgrind: instructions, not seconds

Measured, with this checkout's src/ first on the path:
  - `python -c "import groundwire"`             the library
  - `python -c "import groundwire.cli.main"`    the command line, before any command runs
  - `groundwire --help`
  - `groundwire check --scorer lexical` on the demo (examples/answer.txt against examples/*.md), whole run
  - `groundwire check` on the demo with the bundled ONNX model, whole run (not a start-up target: for scale)
Wall time is what a user waits; CPU time (user + sys of the child) moves less when other jobs share the cores,
so on a loaded machine read the CPU column, and the load average printed with it. The ratio is min wall / target.
On 2 shared cores even the CPU time moves by 10-20 % with the load: --instructions counts the instructions each
command executes (valgrind's callgrind, every thread of the process), the same from run to run, to compare a change.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TARGET_S = 0.5
"""`groundwire --help` and a lexical `check` of the demo start in at most this (issue 22)."""


def groundwire_command() -> list[str]:
    script = Path(sys.executable).parent / "groundwire"
    return [str(script)] if script.exists() else [sys.executable, "-m", "groundwire"]


def demo_check(scorer: str) -> list[str]:
    return [*groundwire_command(), "check", "--context", str(EXAMPLES / "refund_policy.md"), "--context",
            str(EXAMPLES / "shipping.md"), "--answer", f"@{EXAMPLES / 'answer.txt'}", "--scorer", scorer]


CASES: dict[str, tuple[list[str], bool]] = {
    "import groundwire": ([sys.executable, "-c", "import groundwire"], False),
    "import groundwire.cli.main": ([sys.executable, "-c", "import groundwire.cli.main"], False),
    "groundwire --help": ([*groundwire_command(), "--help"], True),
    "check --scorer lexical (demo)": (demo_check("lexical"), True),
    "check --scorer bundled (demo)": (demo_check("bundled"), False),
}
"""name -> (command, whether the 0.5 s target applies)."""


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `command`; a failing run stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=300, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(command: list[str], env: dict[str, str]) -> int:
    """Instructions one run of `command` executes, counted by callgrind; a failing run stops the benchmark."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out.%p", *command],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800,
                              check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode} under valgrind: {done.stderr.strip()[-400:]}")
    counts = re.findall(r"Collected : (\d+)", done.stderr)
    if not counts:
        sys.exit(f"valgrind printed no instruction count: {done.stderr.strip()[-400:]}")
    return sum(int(count) for count in counts)


def count_instructions(env: dict[str, str]) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (apt-get install valgrind)")
    print(f"python {sys.version.split()[0]}; instructions of one run (valgrind --tool=callgrind)")
    for name, (command, _) in CASES.items():
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300,
                       check=False)  # writes the .pyc files, as the timed mode's warm-up does
        print(f"{name:34} {instructions(command, env) / 1e6:8.0f} M")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--instructions", action="store_true", help="count instructions (valgrind) instead of timing")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    # As installed: the bytecode is cached (the warm-up run writes it), not compiled from source on every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.instructions:
        count_instructions(env)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.runs} runs each")
    print(f"{'command':34} {'wall min':>9} {'wall med':>9} {'CPU min':>8} {'min/target':>11}")
    for name, (command, has_target) in CASES.items():
        timed_run(command, env)  # warm-up: writes the .pyc files, and reads every file once into the page cache
        runs = [timed_run(command, env) for _ in range(args.runs)]
        walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
        ratio = f"{min(walls) / TARGET_S:.2f}" if has_target else "-"
        print(f"{name:34} {min(walls):8.3f}s {statistics.median(walls):8.3f}s {min(cpus):7.3f}s {ratio:>11}")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}; target {TARGET_S} s")


if __name__ == "__main__":
    main()
