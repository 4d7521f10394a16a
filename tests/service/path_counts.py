"""Counts of what one HTTP check does on its way (issue 57, item 2): scope resolutions, chunk conversions, work-limit
checks, report reshapes. A plain module: test_verify_path.py asserts the counts, and running it prints them
(`PYTHONPATH=src python tests/service/path_counts.py`)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # service_common, when run as a script
from service_common import ALPHA, KEYS

CHUNKS = [{"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase."},
          {"id": "S2", "text": "The Team plan costs $25 a month per seat."}]
ESCALATED = {"answer": "The dosage is $10 a month.", "chunks": CHUNKS}
"""An answer the lexical first stage escalates: with a cascade it reaches the second stage."""


SCOPES = "scope resolutions"
CONVERTED = "chunk conversions (ChunkIn -> Chunk, per list)"
WORK_LIMITS = "work-limit checks"
PLAN_LIMITS = "plan-limit checks (one per cascade stage)"


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count, while in the block, each call of the functions that convert, resolve, check or reshape (wherever a
    module holds them by name)."""
    from fastapi import routing
    from starlette.responses import JSONResponse

    from groundwire.core import plan
    from groundwire.foundation import types
    from groundwire.service import auth, limits, models, runtime

    counts: Counter[str] = Counter()
    patched: list[tuple[object, str, object]] = []

    def wrap(owner: object, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        for module in [m for key, m in sys.modules.items() if key.startswith("groundwire") and m is not None]:
            if getattr(module, name, None) is original and module is not owner:
                wrap_one(module, name, original, label)
        wrap_one(owner, name, original, label)

    def wrap_one(owner: object, name: str, original: Callable[..., Any], label: str) -> None:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[label] += 1
            return original(*args, **kwargs)

        patched.append((owner, name, original))
        setattr(owner, name, counted)

    # Today's names and those before issue 57 (a name a module lacks is skipped), so the script prints both.
    wrap(auth, "scope_for_key", SCOPES)
    wrap(plan, "as_chunks", "chunk conversions (as_chunks)")
    wrap(runtime.Runtime, "_sent", CONVERTED)  # before
    wrap(runtime.Runtime, "sent", CONVERTED)
    wrap(runtime, "chunk_out", "chunk conversions (Chunk -> ChunkOut, per chunk)")  # before
    wrap(models, "chunks_json", "chunk serialisations (Chunk -> JSON, per list)")
    wrap(limits, "enforce_work_limits", WORK_LIMITS)
    wrap(limits, "enforce_plan_limits", PLAN_LIMITS)
    wrap(types.Report, "to_dict", "report reshapes (Report.to_dict)")
    wrap(models, "report_json", "report reshapes (models.report_json)")
    wrap(models.BaseModel, "model_dump", "model_dump calls (any model: the review, each sent chunk for the log)")
    wrap(routing, "serialize_response", "reshapes (FastAPI validates and dumps the response model)")
    wrap(JSONResponse, "render", "JSON renders (json.dumps)")
    try:
        yield counts
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def counts_of_one_verify(tmp: Path, *, cascade: bool = False, max_pairs: int = 1_000) -> Counter[str]:
    """What one POST /v1/verify of ESCALATED does, on a warm service (lexical scorer; `cascade`: lexical twice).
    With a `max_pairs` it does not fit, it is refused (413, logged as a failed request)."""
    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    check = CheckSettings(scorer="lexical", cascade="lexical" if cascade else None)
    settings = ServiceSettings(db_url=f"sqlite:///{tmp / 'counts.db'}", api_keys=dict(KEYS), check=check,
                               review_audit_share=0.0, max_pairs=max_pairs)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        client.post("/v1/verify", headers=ALPHA, json=ESCALATED)  # warm
        with counting() as counts:
            response = client.post("/v1/verify", headers=ALPHA, json=ESCALATED)
        assert response.status_code == (200 if max_pairs > 2 else 413), response.text
    return counts


if __name__ == "__main__":
    import tempfile

    for cascade, max_pairs, what in ((False, 1_000, ""), (True, 1_000, " (a two-stage cascade, escalated)"),
                                     (False, 1, " refused by max_pairs (413, logged)")):
        with tempfile.TemporaryDirectory() as folder:
            counted = counts_of_one_verify(Path(folder), cascade=cascade, max_pairs=max_pairs)
        print(f"one POST /v1/verify{what}:")
        for label, n in sorted(counted.items()):
            print(f"  {n:3d}  {label}")
