"""Where the bench scripts find the shared data (/work/shared/data's layout: dev/, train/, ...): the nearest
`shared/data` folder above this checkout, so a script finds it from the main checkout and from a worktree alike
(a worktree sits one level deeper). Every bench script imports DATA or DEV from here; --dev overrides it."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve()
DATA = next((p / "shared" / "data" for p in _HERE.parents if (p / "shared" / "data").is_dir()),
            _HERE.parents[2] / "shared" / "data")
"""The shared data folder; where none exists above the checkout, the place beside it (a script then says so)."""
DEV = DATA / "dev"
"""The grounding-eval dev files (`dev/*.jsonl`)."""
