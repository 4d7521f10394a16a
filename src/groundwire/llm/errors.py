"""The LLM tier's base error, in a module of its own: the CLI catches it for every command, and importing it
must not load httpx or pydantic (groundwire.llm.client, which raises it and its subclasses, re-exports it)."""

from __future__ import annotations

from groundwire.redact import redact


class LLMError(RuntimeError):
    """The LLM endpoint could not give a usable reply. The message says why and what to check."""

    attempts: int = 1
    """How many HTTP requests were made before giving up."""

    def __init__(self, message: str) -> None:
        # The message may quote the server's reply, which may echo the Authorization header.
        super().__init__(redact(message))

    @property
    def kind(self) -> str:
        """The failure without the endpoint's address or reply, for those who did not configure the endpoint (a
        service's API callers): the message names both."""
        return "it could not be reached"
