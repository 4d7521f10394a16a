"""`groundwire serve`: run the HTTP service and its web page with uvicorn."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path
from typing import Annotated, Any

import typer

from groundwire.cli.common import ProfileOption, check_settings
from groundwire.data.rows import read_text
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import require_extra
from groundwire.redact import register_secret
from groundwire.service.settings import ServiceSettings, api_key_file_entries, parse_api_keys

# One place for the defaults: the settings' own fields (read, not built: building loads the settings). Every flag
# that sets a field defaults to it (tests/cli/test_serve_defaults.py).
_DEFAULTS: dict[str, Any] = {item.name: item.default for item in dataclasses.fields(ServiceSettings)}
_SQLITE = "sqlite:///"

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: Annotated[str, typer.Option(
        help="Interface to bind; keep 127.0.0.1 unless API keys are set.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port to listen on (0: any free port).")] = 8000,
    db: Annotated[str, typer.Option(
        help="SQLAlchemy URL, or an SQLite file path, for the request log and documents.",
    )] = _DEFAULTS["db_url"].removeprefix(_SQLITE),
    api_key_file: Annotated[Path | None, typer.Option(
        help="A file of API keys, one KEY:SCOPE (or KEY:SCOPE:ro, a read-only key: verify and read; no ingest, "
             "feedback or eval runs) a line; blank lines and # comments are skipped. Keep it mode 600. Without "
             "any key (here, --api-key or $GROUNDWIRE_API_KEYS), access is open in one 'default' scope.")] = None,
    api_key: Annotated[list[str] | None, typer.Option(
        "--api-key", envvar="GROUNDWIRE_API_KEYS", metavar="KEY:SCOPE",
        help="KEY:SCOPE or KEY:SCOPE:ro, repeatable; from the environment, comma-separated. On the command line a "
             "key is visible to every local user (ps, /proc/PID/cmdline): prefer --api-key-file or "
             "$GROUNDWIRE_API_KEYS.")] = None,
    config: Annotated[Path | None, typer.Option(
        help="groundwire.toml (default: $GROUNDWIRE_CONFIG or ./groundwire.toml).")] = None,
    scorer: Annotated[str | None, typer.Option(
        help="Scorer name or model path (default: from the config, else the default scorer).")] = None,
    profile: ProfileOption = None,
    profiles: Annotated[Path | None, typer.Option(
        "--profiles", metavar="DIR", help="One domain profile per scope: DIR/<scope>/profile.json routes that "
                                          "scope's checks, re-read when it changes (no restart).")] = None,
    learn: Annotated[bool, typer.Option(
        "--learn", help="With --profiles: refit a scope's profile from its logged labels after every --learn-every "
                        "new reviewer verdicts, in the background; the guard keeps it only if it is no worse "
                        "(docs/adapt.md). A profile fitted on another model is then refitted instead of refused.")] = False,
    learn_every: Annotated[int, typer.Option(
        "--learn-every", min=1, help="With --learn: new verdicts in a scope between its refits.")] = 25,
    judge_labels: Annotated[bool, typer.Option(
        "--judge-labels", help="When the LLM judge (a request's judge=true) settles an escalated answer, keep its "
                               "verdict as a label of kind judge, counted apart from reviewers' verdicts; with "
                               "--learn, refits fit on both kinds, a judge's label weighing --judge-weight "
                               "(docs/adapt.md).")] = _DEFAULTS["judge_labels"],
    judge_weight: Annotated[float, typer.Option(
        "--judge-weight", min=0.001, max=1.0,
        help="With --judge-labels: how much a judge's label counts against a reviewer's in a refit.")] = _DEFAULTS["judge_weight"],
    judge_error: Annotated[str, typer.Option(
        "--judge-error", metavar="P|auto",
        help="With --judge-labels: the share of the judge's labels that are wrong, in [0, 0.5); a refit's thresholds "
             "correct for it. 0: taken as right. auto: each refit measures it on the scope's answers a reviewer also "
             "labelled (0 with fewer than 30 of them, recorded).")] = _DEFAULTS["judge_error"],
    max_body_bytes: Annotated[int, typer.Option(
        min=1, help="Larger request bodies get 413.")] = _DEFAULTS["max_body_bytes"],
    body_timeout: Annotated[float, typer.Option(
        min=0.01, help="Seconds a request body may take to arrive; a client that sends less than its "
                       "Content-Length then gets 408 and is disconnected.")] = _DEFAULTS["body_timeout_s"],
    header_timeout: Annotated[float, typer.Option(
        min=0.01, help="Seconds a connection may take to send a request's headers; a client that never finishes "
                       "them gets 408 and is disconnected.")] = _DEFAULTS["header_timeout_s"],
    max_header_bytes: Annotated[int, typer.Option(
        min=1, help="Larger request lines and headers get 431 and are disconnected.")] = _DEFAULTS["max_header_bytes"],
    max_claims: Annotated[int, typer.Option(min=1, help="Answers with more claims get 413.")] = _DEFAULTS["max_claims"],
    max_pairs: Annotated[int, typer.Option(
        min=1, help="Requests whose claims x context windows exceed this get 413, before any scoring.")] = _DEFAULTS["max_pairs"],
    eval_max_pairs: Annotated[int, typer.Option(
        min=0, help="The eval loop's routes look failed claims up in the scope's documents: (claim, window) pairs "
                    "one call may score; a failure past it counts as undetermined, and the response says so.",
    )] = _DEFAULTS["eval_max_pairs"],
    eval_max_corpus_chars: Annotated[int, typer.Option(
        min=0, help="The eval loop's routes embed the scope's documents to look failed claims up in: at most "
                    "this many characters a call; over it, no failure is looked up (undetermined), and the "
                    "response says so.",
    )] = _DEFAULTS["eval_max_corpus_chars"],
    workers: Annotated[int | None, typer.Option(
        min=1, help="Checks (verify, repair, generate, the eval loop's routes) run at once; default: the usable "
                    "cores, at least 2.")] = None,
    max_waiting: Annotated[int, typer.Option(
        min=0, help="Checks that may wait for a worker; more get 503 busy at once.")] = _DEFAULTS["max_waiting"],
    max_waiting_per_scope: Annotated[int | None, typer.Option(
        min=0, help="Checks of one scope (API key's scope) that may wait; more of that scope get 503 busy, so one "
                    "scope's flood cannot refuse the others; default: half of --max-waiting when the keys name "
                    "two or more scopes, else --max-waiting.")] = None,
    refusal_rate: Annotated[float, typer.Option(
        min=0, help="Refusals under load (503 busy, 429 rate_limited) sent per second at most; past it a refusal "
                    "waits its turn (at most 1 s), so that clients resending at once cannot take the checks' CPU; "
                    "0: no pacing.",
    )] = _DEFAULTS["refusal_rate"],
    time_budget: Annotated[float, typer.Option(
        min=0.001, help="Seconds within which every check (verify, repair, generate, the eval loop's routes) must "
                        "answer, waiting for a worker included: 503 queue_timeout if it never started, 504 "
                        "time_budget_exceeded once stopped; the eval routes answer with what they finished.",
    )] = _DEFAULTS["time_budget_s"],
    reserved_workers: Annotated[int, typer.Option(
        min=0, help="Workers beside --workers that only small checks may use while the others are busy, one "
                    "with a large check, so a small one is not stuck behind it; 0: none.",
    )] = _DEFAULTS["reserved_workers"],
    small_pairs: Annotated[int, typer.Option(
        min=0, help="A verify or repair that scores at most this many (claim, window) pairs and calls no LLM is "
                    "small: it may use a reserved worker.")] = _DEFAULTS["small_pairs"],
    refit_target_far: Annotated[float, typer.Option(
        "--target-far", min=0.001, max=0.99,
        help="The dashboard's labels section: the false-accept target of the refit it shows (as adapt's "
             "--target-far).")] = _DEFAULTS["refit_target_far"],
    refit_target_frr: Annotated[float, typer.Option(
        "--target-frr", min=0.001, max=0.99,
        help="The dashboard's labels section: the false-reject target of the refit it shows (as adapt's "
             "--target-frr).")] = _DEFAULTS["refit_target_frr"],
    refit_confidence: Annotated[float, typer.Option(
        "--confidence", min=0.5, max=0.999,
        help="The dashboard's labels section: the confidence of the refit it shows (as adapt's "
             "--confidence).")] = _DEFAULTS["refit_confidence"],
    review_threshold: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Requests scoring below this also go to the review queue (every escalated answer "
                               "does). Default: none.")] = _DEFAULTS["review_threshold"],
    review_order: Annotated[str, typer.Option(
        "--order", "--review-order", help="The review queue's order: teach (the verdicts that would move the routing "
                                          "most first) or arrival (newest first).")] = _DEFAULTS["review_order"],
    review_audit: Annotated[float, typer.Option(
        "--review-audit", min=0.0, max=1.0,
        help="The share of accepted and rejected answers also queued for review, as an audit of the routing's "
             "own false accepts.")] = _DEFAULTS["review_audit_share"],
    high_risk: Annotated[list[str] | None, typer.Option(
        "--high-risk", metavar="REGEX", help="Regex; a request whose question or answer matches goes to the review queue.")] = None,
    release: Annotated[str, typer.Option(
        help="Release tag written on every request-log row.")] = _DEFAULTS["release"],
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
    require_extra("serve", "fastapi", "uvicorn", "sqlalchemy", needed_by="groundwire serve")
    import uvicorn

    from groundwire.calibration.judge_error import parse_judge_error
    from groundwire.config import load_config
    from groundwire.evaluation.review_order import check_order
    from groundwire.service import create_app
    from groundwire.service.accesslog import access_log_config
    from groundwire.service.headertimeout import header_limits_protocol

    judge_error_rate = parse_judge_error(str(judge_error))
    loaded = load_config(config)
    if loaded.verify.decomposer == "llm" and not llm:
        raise InputError('[verify] decomposer = "llm" needs an LLM: start with --llm and configure [llm] in groundwire.toml',
                         code=ErrorCode.LLM_NOT_CONFIGURED)
    from_file = _key_file_entries(api_key_file) if api_key_file is not None else []
    keys, read_only_keys = parse_api_keys([*from_file, *_split_env_list(api_key or [])])
    for key in keys:  # so that a key is redacted wherever it would be written: error rows, the access log
        register_secret(key)
    if judge_labels and not llm:
        raise InputError("--judge-labels keeps the LLM judge's verdicts: start with --llm too (and configure [llm])",
                         code=ErrorCode.INVALID_OPTION)
    if learn and profiles is None:
        raise InputError("--learn refits the profiles of --profiles DIR: give --profiles too",
                         code=ErrorCode.INVALID_OPTION)
    if not keys and host not in LOOPBACK:
        if not insecure_no_auth:
            raise InputError(f"refusing to serve {host} without API keys: give --api-key-file FILE (or "
                             "GROUNDWIRE_API_KEYS), bind 127.0.0.1, or pass --insecure-no-auth",
                             code=ErrorCode.INVALID_OPTION)
        typer.echo(f"warning: serving on {host} without API keys; anyone who can reach it can read the log", err=True)
    settings = ServiceSettings(
        db_url=db if "://" in db else f"{_SQLITE}{Path(db).resolve()}",
        api_keys=keys,
        read_only_keys=read_only_keys,
        check=check_settings(loaded, scorer, profile=profile),
        profiles=None if profiles is None else str(profiles),
        learn=learn,
        learn_every=learn_every,
        judge_labels=judge_labels,
        judge_weight=judge_weight,
        judge_error=judge_error_rate,
        max_body_bytes=max_body_bytes,
        body_timeout_s=body_timeout,
        header_timeout_s=header_timeout,
        max_header_bytes=max_header_bytes,
        workers=workers,
        max_waiting=max_waiting,
        max_waiting_per_scope=max_waiting_per_scope,
        refusal_rate=refusal_rate,
        time_budget_s=time_budget,
        reserved_workers=reserved_workers,
        small_pairs=small_pairs,
        max_claims=max_claims,
        max_pairs=max_pairs,
        eval_max_pairs=eval_max_pairs,
        eval_max_corpus_chars=eval_max_corpus_chars,
        refit_target_far=refit_target_far,
        refit_target_frr=refit_target_frr,
        refit_confidence=refit_confidence,
        review_threshold=review_threshold,
        review_order=check_order(review_order),
        review_audit_share=review_audit,
        high_risk_patterns=tuple(high_risk or ()),
        release=release,
        config=loaded,
        use_llm=llm,
        rate_limit=rate_limit if rate_limit is not None else loaded.serve.rate_limit,
    )
    # uvicorn's own limits leave a connection whose headers never finish open, and take a head of any size that
    # arrives whole: this protocol bounds both. h11's own bound, on a head still arriving, is set to the same size.
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level, log_config=access_log_config(),
                http=header_limits_protocol(settings.header_timeout_s, settings.max_header_bytes),
                h11_max_incomplete_event_size=settings.max_header_bytes)


def _key_file_entries(path: Path) -> list[str]:
    """The entries of an --api-key-file; one that holds none is refused, so that it cannot open the service."""
    entries = api_key_file_entries(read_text(path))
    if not entries:
        raise InputError(f"{path}: no API keys (one KEY:SCOPE a line)", code=ErrorCode.INVALID_FILE)
    mode = stat.S_IMODE(path.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        typer.echo(f"warning: {path} is open to other users (mode {mode:o}); chmod 600 it", err=True)
    return entries


def _split_env_list(values: list[str]) -> list[str]:
    # From GROUNDWIRE_API_KEYS the keys arrive as one comma-separated string.
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
