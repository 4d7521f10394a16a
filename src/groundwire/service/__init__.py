"""The HTTP service and its web page (`groundwire serve`). Needs the `serve` extra (FastAPI, uvicorn).

`import groundwire` never imports this package; only `groundwire serve` and callers of create_app do.
create_app loads on first use, so that `groundwire.service.settings` (the CLI's defaults) imports no FastAPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groundwire.foundation.extras import optional_import
from groundwire.service.settings import ServiceSettings

if TYPE_CHECKING:
    from groundwire.service.app import create_app

__all__ = ["ServiceSettings", "create_app"]


def __getattr__(name: str) -> Any:  # PEP 562: FastAPI loads only when create_app is asked for
    if name == "create_app":
        with optional_import("serve", needed_by="groundwire.service.create_app"):
            from groundwire.service.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
