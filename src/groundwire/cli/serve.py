"""`groundwire serve`: run the HTTP service and its web page with uvicorn."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer

from groundwire.cli.common import require_extra
from groundwire.core.errors import ErrorCode, InputError
from groundwire.service.settings import ServiceSettings, parse_api_keys

# One place for the limits' defaults: the settings' own fields (read, not built: building loads the settings).
_DEFAULTS: dict[str, Any] = {item.name: item.default for item in dataclasses.fields(ServiceSettings)}

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: Annotated[str, typer.Option(
        help="Interface to bind; keep 127.0.0.1 unless API keys are set.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
    db: Annotated[str, typer.Option(
        help="SQLAlchemy URL, or an SQLite file path, for the request log and documents.")] = "groundwire.db",
    api_key: Annotated[list[str] | None, typer.Option(
        "--api-key", envvar="GROUNDWIRE_API_KEYS",
        help="KEY:SCOPE, or KEY:SCOPE:ro for a read-only key (verify and read; no ingest, feedback or eval runs); "
             "repeat for several keys. Without any, access is open in one 'default' scope.")] = None,
    config: Annotated[Path | None, typer.Option(
        help="groundwire.toml (default: $GROUNDWIRE_CONFIG or ./groundwire.toml).")] = None,
    scorer: Annotated[str | None, typer.Option(
        help="Scorer name or model path (default: from the config, else the default scorer).")] = None,
    max_body_bytes: Annotated[int, typer.Option(min=1, help="Larger request bodies get 413.")] = 1_000_000,
    body_timeout: Annotated[float, typer.Option(
        min=0.01, help="Seconds a request body may take to arrive; a client that sends less than its "
                       "Content-Length then gets 408 and is disconnected.")] = 30.0,
    header_timeout: Annotated[float, typer.Option(
        min=0.01, help="Seconds a connection may take to send a request's headers; a client that never finishes "
                       "them gets 408 and is disconnected.")] = _DEFAULTS["header_timeout_s"],
    max_claims: Annotated[int, typer.Option(min=1, help="Answers with more claims get 413.")] = _DEFAULTS["max_claims"],
    max_pairs: Annotated[int, typer.Option(
        min=1, help="Requests whose claims x context windows exceed this get 413, before any scoring.")] = _DEFAULTS["max_pairs"],
    workers: Annotated[int | None, typer.Option(
        min=1, help="Checks (verify, repair, generate) run at once; default: the usable cores, at least 2.")] = None,
    max_waiting: Annotated[int, typer.Option(
        min=0, help="Checks that may wait for a worker; more get 503 busy at once.")] = _DEFAULTS["max_waiting"],
    review_threshold: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="Requests scoring below this go to the review queue.")] = 0.5,
    high_risk: Annotated[list[str] | None, typer.Option(
        "--high-risk", help="Regex; a request whose question or answer matches goes to the review queue.")] = None,
    release: Annotated[str, typer.Option(help="Release tag written on every request-log row.")] = "dev",
    llm: Annotated[bool, typer.Option(
        "--llm/--no-llm", help="Use the LLM endpoint of groundwire.toml: /v1/generate, judge, repair edits.")] = False,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    rate_limit: Annotated[str | None, typer.Option(
        help="Requests per API key (or per client address without keys), e.g. '60/minute'; over it: 429 with "
             "Retry-After. Default: [serve] rate_limit in groundwire.toml, else no limit.")] = None,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", help="Serve a non-loopback address without API keys (anyone who can reach it can "
                                   "read the log).")] = False,
) -> None:
    """Serve the verification API (/v1/...), its OpenAPI spec (/docs) and the web page (/)."""
    # Lazy: uvicorn and the service (FastAPI, SQLAlchemy) load only when this command runs.
    require_extra("serve", "serve", "fastapi", "uvicorn", "sqlalchemy")
    import uvicorn

    from groundwire.config import load_config
    from groundwire.service import create_app
    from groundwire.service.headertimeout import header_timeout_protocol

    loaded = load_config(config)
    if loaded.verify.decomposer == "llm" and not llm:
        raise InputError('[verify] decomposer = "llm" needs an LLM: start with --llm and configure [llm] in groundwire.toml',
                         code=ErrorCode.LLM_NOT_CONFIGURED)
    keys, read_only_keys = parse_api_keys(_split_env_list(api_key or []))
    if not keys and host not in LOOPBACK:
        if not insecure_no_auth:
            raise InputError(f"refusing to serve {host} without API keys: give --api-key KEY:SCOPE, bind 127.0.0.1, "
                             "or pass --insecure-no-auth", code=ErrorCode.INVALID_OPTION)
        typer.echo(f"warning: serving on {host} without API keys; anyone who can reach it can read the log", err=True)
    settings = ServiceSettings(
        db_url=db if "://" in db else f"sqlite:///{Path(db).resolve()}",
        api_keys=keys,
        read_only_keys=read_only_keys,
        check=loaded.verify.overridden(scorer=scorer),
        max_body_bytes=max_body_bytes,
        body_timeout_s=body_timeout,
        header_timeout_s=header_timeout,
        workers=workers,
        max_waiting=max_waiting,
        max_claims=max_claims,
        max_pairs=max_pairs,
        review_threshold=review_threshold,
        high_risk_patterns=tuple(high_risk or ()),
        release=release,
        config=loaded,
        use_llm=llm,
        rate_limit=rate_limit if rate_limit is not None else loaded.serve.rate_limit,
    )
    # uvicorn's own timeouts leave a connection whose headers never finish open: this protocol closes it.
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level,
                http=header_timeout_protocol(settings.header_timeout_s))


def _split_env_list(values: list[str]) -> list[str]:
    # From GROUNDWIRE_API_KEYS the keys arrive as one comma-separated string.
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
