"""The one helper for optional dependencies (groundwire.foundation.extras): a missing one is a MissingExtraError, both an
InputError (code missing_extra) and a ModuleNotFoundError, whose message names the extra (issue 49). Each surface is
checked in a real core-only environment by tests/cli/test_core_venv.py."""

from __future__ import annotations

import importlib.util
import pickle
import sys
from pathlib import Path

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


@pytest.mark.skipif(importlib.util.find_spec("trulens") is not None, reason="TruLens is installed here")
def test_the_documented_trulens_use_without_its_extra_names_the_extra() -> None:
    """docs/observability.md's TruLens block, run where TruLens is missing (.venv: trulens-core pins rich<14): its
    first line, groundwire's provider, says what to install instead of a bare `No module named 'trulens'`."""
    text = (Path(__file__).parent.parent / "docs" / "observability.md").read_text()
    block = text.split("## TruLens (`[trulens]`)", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    sys.modules.pop("groundwire.adapters.trulens", None)
    with pytest.raises(MissingExtraError) as raised:
        exec(compile(block, "observability.md", "exec"), {})
    assert str(raised.value) == "groundwire.adapters.trulens needs trulens: pip install 'groundwire[trulens]'"
