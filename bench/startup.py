"""Start-up of the command line and the library, each in a fresh process, against the 0.5 s target (issue 22), and
the first check in a fresh process beside later ones in the same process (issue 49).

    .venv/bin/python bench/startup.py             # 5 runs of each (the figures: min and median)
    .venv/bin/python bench/startup.py --runs 10
    .venv/bin/python bench/startup.py --src /work/main/src   # another checkout's code, to compare before / after
    .venv/bin/python bench/startup.py --fresh-cache    # each run with an empty cache: the form trial runs every time
    .venv/bin/python bench/startup.py --instructions   # once each under valgrind: instructions, not seconds

Measured, with this checkout's src/ first on the path:
  - `python -c "import groundwire"`             the library
  - `python -c "import groundwire.cli.main"`    the command line, before any command runs
  - `groundwire --help`
  - `groundwire check --scorer lexical` on the demo (examples/answer.txt against examples/*.md), whole run
  - `groundwire check` on the demo with the bundled ONNX model, whole run: `make demo`'s command, the first check
    in a fresh process (target: at most 2 s wall, and at most 200 MB peak memory);
  - `python -c` building the default verifier and calling verify() on the demo: the first call (model and lexicon
    loads included) beside the median of later calls in the same process.
Peak memory is the child's own maximum resident set (os.wait4's rusage). A CPU without VNNI times the model's two
forms once per machine and keeps the result in the user's cache (scoring/form_trials.py): the warm-up run keeps it,
so the timed runs read it, as every process after the first does; --fresh-cache gives each run an empty cache.
Wall time is what a user waits; CPU time (user + sys of the child) moves less when other jobs share the cores,
so on a loaded machine read the CPU column, and the load average printed with it. The ratio is min wall / target.
On 2 shared cores even the CPU time moves by 10-20 % with the load: --instructions counts the instructions each
command executes (valgrind's callgrind, every thread of the process), the same from run to run, to compare a change.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from groundwire.cli.exit_status import CommandOutcome

ROOT = Path(__file__).resolve().parents[1]

DECIDED = frozenset(outcome.exit_status for outcome in CommandOutcome)
"""Exit statuses of a command that ran to the end (a check's decision may be one): any other stops the bench."""
EXAMPLES = ROOT / "examples"
TARGET_S = 0.5
"""`groundwire --help` and a lexical `check` of the demo start in at most this (issue 22)."""
FIRST_CHECK_TARGET_S = 2.0
"""`make demo`'s check, in a fresh process, takes at most this (issue 49)."""
FIRST_CHECK_TARGET_MB = 200
"""... and at most this much memory (issue 48)."""


def groundwire_command() -> list[str]:
    script = Path(sys.executable).parent / "groundwire"
    return [str(script)] if script.exists() else [sys.executable, "-m", "groundwire"]


def demo_check(scorer: str) -> list[str]:
    return [*groundwire_command(), "check", "--context", str(EXAMPLES / "refund_policy.md"), "--context",
            str(EXAMPLES / "shipping.md"), "--answer", f"@{EXAMPLES / 'answer.txt'}", "--scorer", scorer]


MAKE_DEMO = [*groundwire_command(), "check", "--context", str(EXAMPLES / "refund_policy.md"), "--context",
             str(EXAMPLES / "shipping.md"), "--answer", f"@{EXAMPLES / 'answer.txt'}",
             "--question", (EXAMPLES / "question.txt").read_text().strip()]
"""`make demo`'s command (the default scorer: the bundled model)."""

CASES: dict[str, tuple[list[str], bool]] = {
    "import groundwire": ([sys.executable, "-c", "import groundwire"], False),
    "import groundwire.cli.main": ([sys.executable, "-c", "import groundwire.cli.main"], False),
    "groundwire --help": ([*groundwire_command(), "--help"], True),
    "check --scorer lexical (demo)": (demo_check("lexical"), True),
}
"""name -> (command, whether the 0.5 s target applies)."""

FIRST_VERIFY = f"""
import json, statistics, time
from pathlib import Path
started = time.perf_counter()
import groundwire
examples = Path({str(EXAMPLES)!r})
context = [(examples / name).read_text() for name in ("refund_policy.md", "shipping.md")]
answer = (examples / "answer.txt").read_text()
question = (examples / "question.txt").read_text().strip()
groundwire.verify(answer, context, question=question)
first = time.perf_counter() - started
later = []
for _ in range(5):
    started = time.perf_counter()
    groundwire.verify(answer, context, question=question)
    later.append(time.perf_counter() - started)
print(json.dumps({{"first_s": first, "later_s": statistics.median(later)}}))
"""
"""The first verify() of a fresh process (import included) and the median of five later ones, as JSON."""


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak resident MB, stdout) of one run of `command`; a failing run stops the
    benchmark."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, not the max over all children
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode not in DECIDED:
            sys.exit(f"{' '.join(command)} exited {child.returncode}: {err.read().strip()[-400:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


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
    for name, command in [*((name, command) for name, (command, _) in CASES.items()), ("make demo's check", MAKE_DEMO)]:
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300,
                       check=False)  # writes the .pyc files, as the timed mode's warm-up does
        print(f"{name:34} {instructions(command, env) / 1e6:8.0f} M")


def runs_of(command: list[str], env: dict[str, str], runs: int, fresh_cache: bool) -> list[tuple[float, float, float, str]]:
    """`runs` timed runs after one warm-up run (which writes the .pyc files, reads every file into the page cache
    and keeps the form trial); with `fresh_cache`, each run has a cache folder of its own, empty."""
    timed_run(command, env)
    if not fresh_cache:
        return [timed_run(command, env) for _ in range(runs)]
    out = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            out.append(timed_run(command, {**env, "XDG_CACHE_HOME": cache}))
    return out


def first_check(env: dict[str, str], runs: int, fresh_cache: bool) -> None:
    """`make demo`'s check and a first verify(), each in a fresh process, against the first-check targets."""
    checks = runs_of(MAKE_DEMO, env, runs, fresh_cache)
    walls, cpus, peaks = [r[0] for r in checks], [r[1] for r in checks], [r[2] for r in checks]
    print(f"{'make demo: groundwire check':34} {min(walls):8.3f}s {statistics.median(walls):8.3f}s {min(cpus):7.3f}s "
          f"{min(walls) / FIRST_CHECK_TARGET_S:>11.2f}   peak RSS {min(peaks):.0f}-{max(peaks):.0f} MB "
          f"(target {FIRST_CHECK_TARGET_MB} MB: x{max(peaks) / FIRST_CHECK_TARGET_MB:.2f})")
    verifies = runs_of([sys.executable, "-c", FIRST_VERIFY], env, runs, fresh_cache)
    timings = [json.loads(out.strip().splitlines()[-1]) for *_, out in verifies]
    first, later = [t["first_s"] for t in timings], [t["later_s"] for t in timings]
    print(f"{'verify(): first, fresh process':34} {min(first):8.3f}s {statistics.median(first):8.3f}s "
          f"{min(r[1] for r in verifies):7.3f}s {min(first) / FIRST_CHECK_TARGET_S:>11.2f}   peak RSS {min(r[2] for r in verifies):.0f}-"
          f"{max(r[2] for r in verifies):.0f} MB")
    print(f"{'verify(): later, same process':34} {min(later):8.3f}s {statistics.median(later):8.3f}s   "
          f"(median of 5 calls after the first, per process; the first is x{statistics.median(first) / statistics.median(later):.0f}; "
          "the CPU column above: the whole process, its 6 calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the groundwire source to measure (default: this checkout's src/)")
    parser.add_argument("--fresh-cache", action="store_true",
                        help="give each run an empty cache folder (XDG_CACHE_HOME): the form trial runs every time")
    parser.add_argument("--instructions", action="store_true", help="count instructions (valgrind) instead of timing")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(args.src.resolve()), os.environ.get("PYTHONPATH", "")])}
    # As installed: the bytecode is cached (the warm-up run writes it), not compiled from source on every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.instructions:
        count_instructions(env)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.runs} runs each; groundwire from {args.src}")
    print(f"{'command':34} {'wall min':>9} {'wall med':>9} {'CPU min':>8} {'min/target':>11}")
    for name, (command, has_target) in CASES.items():
        runs = runs_of(command, env, args.runs, fresh_cache=False)
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        ratio = f"{min(walls) / TARGET_S:.2f}" if has_target else "-"
        print(f"{name:34} {min(walls):8.3f}s {statistics.median(walls):8.3f}s {min(cpus):7.3f}s {ratio:>11}")
    first_check(env, args.runs, args.fresh_cache)
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}; targets: {TARGET_S} s for the "
          f"start-up commands, {FIRST_CHECK_TARGET_S} s and {FIRST_CHECK_TARGET_MB} MB for make demo's check")


if __name__ == "__main__":
    main()
