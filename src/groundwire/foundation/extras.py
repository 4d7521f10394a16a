"""Optional dependencies: the one way groundwire reaches a package an extra installs, and the one error it gives
when the package is missing, naming the extra to install (`pip install 'groundwire[EXTRA]'`).

A module whose imports need an extra wraps them, so that importing it without the extra says what to install
instead of ending in a bare ModuleNotFoundError:

    with optional_import("langchain", needed_by=__name__):
        from langchain_core.runnables import Runnable

A command or a function that reaches an extra only later checks for it before any work, without importing it:

    require_extra("ray", "ray", "pyarrow", needed_by="groundwire batch --engine ray")

Both raise MissingExtraError: an InputError (code missing_extra; the CLI exits 2 with its message, the service
answers with its HTTP status) and a ModuleNotFoundError, so that `except ImportError` around an optional import
keeps working. This module imports only the foundation (foundation/errors.py): every layer may use it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager

from groundwire.foundation.errors import ErrorCode, InputError


class MissingExtraError(InputError, ModuleNotFoundError):
    """`needed_by` needs `modules`, which the extra `extra` installs; the message says `pip install` it."""

    def __init__(self, extra: str, modules: tuple[str, ...], needed_by: str) -> None:
        super().__init__(
            f"{needed_by} needs {', '.join(modules)}: pip install 'groundwire[{extra}]'", code=ErrorCode.MISSING_EXTRA
        )
        self.name = modules[0]  # ModuleNotFoundError's attribute: the (first) module that is missing
        self.extra = extra
        self.modules = modules
        self.needed_by = needed_by

    def __reduce__(self) -> tuple[type[MissingExtraError], tuple[str, tuple[str, ...], str]]:
        # The constructor's own arguments, so the error crosses a process boundary (Ray, a process pool) intact.
        return type(self), (self.extra, self.modules, self.needed_by)


def require_extra(extra: str, *modules: str, needed_by: str) -> None:
    """Raise MissingExtraError unless every one of `modules` (top-level names) can be imported; imports none."""
    if missing := tuple(name for name in modules if importlib.util.find_spec(name) is None):
        raise MissingExtraError(extra, missing, needed_by)


@contextmanager
def optional_import(extra: str, *, needed_by: str) -> Iterator[None]:
    """Imports made inside the block that fail for a missing module raise MissingExtraError naming `extra`."""
    try:
        yield
    except MissingExtraError:
        raise
    except ModuleNotFoundError as error:
        raise MissingExtraError(extra, ((error.name or str(error)).partition(".")[0],), needed_by) from error
