"""The one helper for optional dependencies (groundwire.foundation.extras): a missing one is a MissingExtraError, both an
InputError (code missing_extra) and a ModuleNotFoundError, whose message names the extra (issue 49). Each surface is
checked in a real core-only environment by tests/cli/test_core_venv.py."""

from __future__ import annotations

import pickle
import sys

import pytest

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import MissingExtraError, optional_import, require_extra


def test_an_import_in_the_block_that_fails_names_the_extra_and_the_missing_module() -> None:
    with pytest.raises(ImportError) as raised, optional_import("langchain", needed_by="groundwire.adapters.x"):
        from no_such_framework.runnables import Runnable  # type: ignore[import-not-found]  # noqa: F401
    error = raised.value
    assert isinstance(error, MissingExtraError) and isinstance(error, InputError)
    assert error.code is ErrorCode.MISSING_EXTRA and error.name == "no_such_framework" and error.extra == "langchain"
    assert str(error) == "groundwire.adapters.x needs no_such_framework: pip install 'groundwire[langchain]'"
    assert isinstance(error.__cause__, ModuleNotFoundError)


def test_an_installed_module_imports_and_other_errors_pass_through() -> None:
    with optional_import("frames", needed_by="x"):
        import json  # noqa: F401
    with pytest.raises(ZeroDivisionError), optional_import("frames", needed_by="x"):
        1 / 0  # noqa: B018


def test_require_extra_names_every_missing_module_and_imports_none() -> None:
    require_extra("frames", "json", needed_by="x")
    with pytest.raises(MissingExtraError) as raised:
        require_extra("ray", "json", "no_such_module_a", "no_such_module_b", needed_by="groundwire batch --engine ray")
    assert str(raised.value) == ("groundwire batch --engine ray needs no_such_module_a, no_such_module_b: "
                                 "pip install 'groundwire[ray]'")
    assert "no_such_module_a" not in sys.modules


def test_the_error_crosses_a_process_boundary_intact() -> None:
    error = pickle.loads(pickle.dumps(MissingExtraError("ray", ("ray", "pyarrow"), "groundwire batch")))
    assert (str(error), error.code, error.name, error.modules) == (
        "groundwire batch needs ray, pyarrow: pip install 'groundwire[ray]'", ErrorCode.MISSING_EXTRA, "ray",
        ("ray", "pyarrow"))
