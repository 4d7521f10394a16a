"""groundwire: catch and repair fabricated claims in RAG answers.

    from groundwire import verify
    report = verify(answer, chunks, question=None)   # the bundled verifier; scorer="lexical" for the baseline
    results = verify_many(df)                        # a DataFrame (RAGAS / DeepEval column names recognised)
    report = await averify(answer, chunks)           # in a worker thread, for async servers

Importing groundwire is cheap: models, torch, onnxruntime and servers load only when used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import (
    REFUSAL_TOKEN,
    Chunk,
    Claim,
    ClaimResult,
    Finding,
    Report,
    ReportMeta,
    Route,
    RoutedThresholds,
    Verdict,
)
from groundwire.version import __version__ as __version__

if TYPE_CHECKING:
    from groundwire.core.settings import CheckSettings
    from groundwire.core.verifier import Verifier
    from groundwire.frames import averify_many, verify_many
    from groundwire.pipeline import averify, verify

_LAZY = {
    "verify": "groundwire.pipeline", "Verifier": "groundwire.core.verifier",
    "averify": "groundwire.pipeline", "verify_many": "groundwire.frames", "averify_many": "groundwire.frames",
    "CheckSettings": "groundwire.core.settings",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'groundwire' has no attribute {name!r}")


__all__ = [
    "REFUSAL_TOKEN", "CheckSettings", "Chunk", "Claim", "ClaimResult", "ErrorCode", "Finding", "InputError", "Report",
    "ReportMeta", "Route", "RoutedThresholds", "Verdict",
    "Verifier", "averify", "averify_many", "verify", "verify_many",
]
