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

    wrap(auth, "scope_for_key", "scope resolutions")
    wrap(plan, "as_chunks", "chunk conversions (as_chunks)")
    wrap(runtime.Runtime, "_sent", "chunk conversions (ChunkIn -> Chunk)")
    wrap(runtime, "chunk_out", "chunk conversions (Chunk -> ChunkOut, per chunk)")
    wrap(limits, "enforce_work_limits", "work-limit checks")
    wrap(limits, "enforce_plan_limits", "plan-limit checks (one per cascade stage)")
    wrap(types.Report, "to_dict", "report reshapes (Report.to_dict)")
    wrap(models.BaseModel, "model_dump", "reshapes (model_dump)")
    wrap(routing, "serialize_response", "reshapes (FastAPI validates and dumps the response model)")
    wrap(JSONResponse, "render", "JSON renders")
    try:
        yield counts
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def counts_of_one_verify(tmp: Path, *, cascade: bool = False) -> Counter[str]:
    """What one POST /v1/verify of ESCALATED does, on a warm service (lexical scorer; `cascade`: lexical twice)."""
    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    check = CheckSettings(scorer="lexical", cascade="lexical" if cascade else None)
    settings = ServiceSettings(db_url=f"sqlite:///{tmp / 'counts.db'}", api_keys=dict(KEYS), check=check,
                               review_audit_share=0.0)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert client.post("/v1/verify", headers=ALPHA, json=ESCALATED).status_code == 200  # warm
        with counting() as counts:
            response = client.post("/v1/verify", headers=ALPHA, json=ESCALATED)
        assert response.status_code == 200, response.text
    return counts


if __name__ == "__main__":
    import tempfile

    for cascade in (False, True):
        with tempfile.TemporaryDirectory() as folder:
            counted = counts_of_one_verify(Path(folder), cascade=cascade)
        print(f"one POST /v1/verify{' (a two-stage cascade, escalated)' if cascade else ''}:")
        for label, n in sorted(counted.items()):
            print(f"  {n:3d}  {label}")
