"""Helpers shared by the CLI's command modules: reading context files and building a Verifier from config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groundwire.core.errors import InputError
from groundwire.core.types import Chunk


def read_chunks(paths: list[Path] | None) -> list[Chunk]:
    """One chunk per context file, ids S1..Sn in the order given."""
    from groundwire.data.rows import read_text

    if not paths:
        raise InputError("give at least one --context FILE (each file is one retrieved chunk)")
    return [Chunk(id=f"S{i}", text=read_text(path), doc_id=path.name) for i, path in enumerate(paths, start=1)]


def build_verifier(
    config: Any,
    scorer: str | None = None,
    *,
    accept_at: float | None = None,
    reject_at: float | None = None,
    client: Any = None,
) -> Any:
    """The Verifier that flags override and groundwire.toml ([verify]) describes."""
    from groundwire.core.verifier import Verifier

    decomposer = None
    if config.verify.decomposer == "llm":
        if client is None:
            raise InputError('[verify] decomposer = "llm" needs an LLM: configure [llm] in groundwire.toml')
        from groundwire.llm.decompose import LLMDecomposer

        decomposer = LLMDecomposer(client)
    try:
        return Verifier(
            scorer or config.verify.scorer,
            accept_at=config.verify.accept_at if accept_at is None else accept_at,
            reject_at=config.verify.reject_at if reject_at is None else reject_at,
            decomposer=decomposer,
        )
    except ValueError as error:
        raise InputError(str(error)) from None


def require_llm(config: Any, needed_by: str) -> None:
    """Every command that needs an LLM and finds none configured fails the same way: exit 2, this message."""
    if not config.llm_configured:
        raise InputError(
            f"{needed_by} needs an LLM endpoint: set [llm] base_url and model in groundwire.toml "
            "(or GROUNDWIRE_LLM_BASE_URL / GROUNDWIRE_LLM_MODEL)"
        )
