"""The HTTP service and its web page (`groundwire serve`). Needs the `serve` extra."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI

    from groundwire.service.settings import ServiceSettings

__all__ = ["create_app"]


def create_app(settings: ServiceSettings | None = None, **kwargs: Any) -> FastAPI:
    """Build the FastAPI app; see groundwire.service.app.create_app."""
    from groundwire.service.app import create_app as _create_app

    return _create_app(settings, **kwargs)
