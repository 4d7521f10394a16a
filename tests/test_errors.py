"""The registry of error codes (groundwire.foundation.errors): every code is unique and complete, has an exit status
in the CLI's table (cli/exit_status.py) and an HTTP status in the service's (service/http_status.py), every raise in
the package names one, docs/errors.md lists exactly the registry, and a code reaches the CLI's user with its exit
status and the service's caller with its HTTP status."""

from __future__ import annotations

import ast
import contextlib
import io
import pickle
import re
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from types import ModuleType

import pytest

import groundwire
from groundwire.cli.exit_status import EXIT_STATUS, CommandOutcome
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.service.http_status import HTTP_STATUS
from repo_scripts import load_script

PACKAGE = Path(groundwire.__file__).parent
ROOT = Path(__file__).resolve().parents[1]

# The codes the service sent before the registry existed, with their HTTP statuses: clients match on them.
SERVICE_CODES_BEFORE = {
    "missing_api_key": 401, "invalid_api_key": 401, "read_only_key": 403, "request_not_found": 404,
    "document_not_found": 404, "not_found": 404, "method_not_allowed": 405, "header_timeout": 408,
    "body_timeout": 408, "payload_too_large": 413, "too_much_work": 413, "rate_limited": 429,
    "invalid_request": 422, "invalid_input": 422, "judge_not_available": 422, "internal_error": 500,
    "llm_unavailable": 502, "llm_not_configured": 503, "not_ready": 503, "busy": 503,
}
# The CLI's exit statuses before the registry (docs/cli.md: 0 OK, 1 not grounded, 2 bad input, 3 LLM, 4 internal).
EXIT_STATUSES_BEFORE = {"ok": 0, "not_grounded": 1, "llm_fallback": 1, "interrupted": 130}
# Issue 34: a batch with rows in error was 2, the status of a usage error too; now apart from it and from "all rows".
BATCH_STATUSES = {"rows_in_error": 5, "all_rows_in_error": 6}
# Issue 49: check fails an escalated answer with a status of its own, apart from a rejected one (1); by default since issue 57.
GATE_STATUSES = {"escalated": 7}


# --- the registry ----------------------------------------------------------------------------------------------


def test_every_code_is_unique_snake_case_and_has_a_meaning() -> None:
    names = [code.value for code in ErrorCode]
    assert len(names) == len(set(names))
    for code in ErrorCode:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", code.value), code
        assert code.name == code.value.upper(), code  # ErrorCode.EMPTY_ANSWER is "empty_answer"
        assert code.meaning.strip() and "\n" not in code.meaning and "|" not in code.meaning, code


@pytest.mark.parametrize(("surface", "table"), [("cli/exit_status.py EXIT_STATUS", EXIT_STATUS),
                                                ("service/http_status.py HTTP_STATUS", HTTP_STATUS)])
def test_every_code_has_a_row_in_each_surfaces_status_table(surface: str, table: object) -> None:
    # A new code without a status on either surface fails here, not when a user first meets it (a KeyError).
    assert isinstance(table, Mapping)
    missing = [code.value for code in ErrorCode if code not in table]
    assert missing == [], f"give these codes a row in {surface}: {missing}"
    assert set(table) == set(ErrorCode)  # and no row for anything else


def test_the_statuses_are_of_their_kind() -> None:
    assert all(EXIT_STATUS[code] in (2, 3, 4) for code in ErrorCode)
    # 499 is nginx's "client closed request", which HTTP does not name: only /metrics and the logs see it.
    known = {status.value for status in HTTPStatus} | {499}
    assert all(HTTP_STATUS[code] in known and HTTP_STATUS[code] >= 400 for code in ErrorCode)


def test_the_codes_clients_already_match_on_are_kept_with_their_statuses() -> None:
    assert {name: HTTP_STATUS[ErrorCode(name)] for name in SERVICE_CODES_BEFORE} == SERVICE_CODES_BEFORE
    assert EXIT_STATUS[ErrorCode.LLM_UNAVAILABLE] == 3 and EXIT_STATUS[ErrorCode.INTERNAL_ERROR] == 4
    assert {outcome.value: outcome.exit_status for outcome in CommandOutcome} == EXIT_STATUSES_BEFORE | BATCH_STATUSES | GATE_STATUSES


def test_an_input_error_defaults_to_the_generic_code_and_keeps_its_code_across_processes() -> None:
    assert InputError("x").code is ErrorCode.INVALID_INPUT
    error = pickle.loads(pickle.dumps(InputError("no rows", code=ErrorCode.NO_ROWS)))
    assert str(error) == "no rows" and error.code is ErrorCode.NO_ROWS
    assert isinstance(error, ValueError)


# --- every raise names a code ----------------------------------------------------------------------------------


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                found.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", node))
    return found


def _registry_member(node: ast.expr | None) -> bool:
    """`ErrorCode.SOME_NAME`, naming a member of the registry."""
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ErrorCode"
            and node.attr in ErrorCode.__members__)


def test_every_input_error_raised_in_the_package_names_its_code() -> None:
    # The generic code too must be written out (code=ErrorCode.INVALID_INPUT): falling back to it is a choice.
    calls = _calls("InputError")
    assert len(calls) > 80  # the scan sees the package's raises
    unnamed = [where for where, call in calls
               if not _registry_member(next((k.value for k in call.keywords if k.arg == "code"), None))]
    assert unnamed == []
    assert sum(1 for _, call in calls if ast.unparse(call).endswith("code=ErrorCode.INVALID_INPUT)")) < len(calls) / 4


def test_every_service_error_and_error_response_takes_its_code_from_the_registry() -> None:
    inline = []
    for name in ("ServiceError", "error_response", "error_body"):
        calls = _calls(name)
        assert calls, name
        for where, call in calls:
            first = call.args[0] if call.args else None
            # ErrorCode.X, or a code passed on (exc.code, _code_for(status)): never a string or a number.
            if first is None or isinstance(first, ast.Constant) or (
                isinstance(first, ast.Attribute) and ast.unparse(first).startswith("ErrorCode.")
                and not _registry_member(first)
            ):
                inline.append(where)
    assert inline == []


def test_the_service_writes_no_code_as_a_string_literal() -> None:
    codes = {code.value for code in ErrorCode}
    literals = [f"{path.name}:{node.lineno} {node.value}" for path in sorted((PACKAGE / "service").rglob("*.py"))
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Constant) and node.value in codes]
    assert literals == []


# --- the docs --------------------------------------------------------------------------------------------------


def _errors_doc_script() -> ModuleType:
    return load_script("errors_doc")


def test_docs_errors_md_lists_exactly_the_registry() -> None:
    script = _errors_doc_script()
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert text == script.rendered(text), "docs/errors.md is out of date: run python scripts/errors_doc.py"
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d+) \| (\d+) \|", text, flags=re.MULTILINE)
    assert [(name, int(exit_status), int(http)) for name, exit_status, http in rows] == [
        (code.value, EXIT_STATUS[code], HTTP_STATUS[code]) for code in ErrorCode
    ]


def test_the_readme_and_the_service_doc_link_the_table() -> None:
    assert "docs/errors.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "errors.md" in (ROOT / "docs" / "service.md").read_text(encoding="utf-8")


# --- a code reaches the user -----------------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    from groundwire.cli.main import run_cli

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = run_cli(list(args))
    return status, err.getvalue()


def test_the_cli_prints_the_code_with_the_message_and_exits_with_its_status(tmp_path: Path) -> None:
    context = tmp_path / "ctx.txt"
    context.write_text("The Pro plan costs $19 per month.", encoding="utf-8")
    status, err = _cli("check", "-c", str(context), "-a", "   ", "--scorer", "lexical")
    assert status == EXIT_STATUS[ErrorCode.EMPTY_ANSWER] == 2
    assert "error [empty_answer]: the answer is empty" in err  # the brackets are printed, not read as markup
    status, err = _cli("check", "-c", str(tmp_path / "missing.txt"), "-a", "x", "--scorer", "lexical")
    assert status == 2 and f"error [file_not_found]: {tmp_path / 'missing.txt'}: no such file" in err
    status, err = _cli("check", "--config", str(tmp_path / "none.toml"), "-c", str(context), "-a", "x")
    assert status == 2 and "error [config_not_found]: config file not found" in err


def test_the_cli_exit_status_is_the_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Whatever a code's exit status is, the CLI exits with it: a code with another status would give that one.
    import groundwire.core.verifier as verifier_module

    def refuse(*_: object, **__: object) -> None:
        raise InputError("a code whose exit status is not 2", code=ErrorCode.LLM_UNAVAILABLE)

    monkeypatch.setattr(verifier_module.Verifier, "run", refuse)
    context = tmp_path / "ctx.txt"
    context.write_text("The Pro plan costs $19 per month.", encoding="utf-8")
    status, err = _cli("check", "-c", str(context), "-a", "The Pro plan costs $19 per month.", "--scorer", "lexical")
    assert status == EXIT_STATUS[ErrorCode.LLM_UNAVAILABLE] == 3
    assert "error [llm_unavailable]: a code whose exit status is not 2" in err


def test_the_service_answers_an_input_error_with_its_code_and_http_status(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings, create_app

    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", api_keys={"key": "scope"},
                               check=CheckSettings(scorer="lexical"))
    app = create_app(settings)

    @app.get("/test/llm-not-configured")
    def not_configured() -> None:  # an input error whose code is not a 422
        raise InputError("needs an LLM", code=ErrorCode.LLM_NOT_CONFIGURED)

    headers = {"Authorization": "Bearer key"}
    chunks = [{"id": "S1", "text": "The Pro plan costs $10 a month."}]
    with TestClient(app, raise_server_exceptions=False) as client:
        empty = client.post("/v1/verify", json={"answer": "  ", "chunks": chunks}, headers=headers)
        blank = client.post("/v1/ingest", json={"documents": [{"doc_id": "d1", "text": "   "}]}, headers=headers)
        llm = client.get("/test/llm-not-configured")
        route = client.get("/v1/no-such-route", headers=headers)
    for response, code in ((empty, ErrorCode.EMPTY_ANSWER), (blank, ErrorCode.INVALID_DOCUMENT),
                           (llm, ErrorCode.LLM_NOT_CONFIGURED), (route, ErrorCode.NOT_FOUND)):
        assert response.status_code == HTTP_STATUS[code], response.text
        assert response.json()["error"]["status"] == HTTP_STATUS[code]
        assert response.json()["error"]["code"] == code.value
    assert "the answer is empty" in empty.json()["error"]["message"]
    assert blank.json()["error"]["message"] == "document 'd1' has no text; send its text, or leave it out"
