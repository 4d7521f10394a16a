"""The one place a check is assembled: settings -> Verifier, and item -> Report (verify, then the optional judge).

Every surface builds its verifier here (the commands check, eval, batch, serve, repair, generate and eval-loop,
the service, and the library calls verify(), averify(), verify_many(), the framework adapters and the pytest
plugin), so a [verify] setting means the same thing everywhere:

    from groundwire.pipeline import CheckItem, CheckSettings, build_verifier, check
    verifier = build_verifier(CheckSettings(scorer="lexical", require_citations=True))
    report = check(verifier, CheckItem(answer, chunks, question=question))

Many answers with one verifier (eval, eval-loop, verify_many, check --input) go through `check_many`, which is
`check` per item; a component below this module that checks answers of its own (the generator) is handed a
`Checker`, a verifier bound to `check`. Nothing else in the package constructs a `Verifier`
(tests/test_assembly.py scans for it). The library calls share one verifier per distinct CheckSettings
(`shared_verifier`), so a model loads once.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, Unpack

from typing_extensions import TypedDict  # pydantic reads a TypedDict from here on Python 3.11 (the adapters' options)

from groundwire.config import CheckSettings
from groundwire.core import tracing
from groundwire.core.cancel import checkpoint
from groundwire.core.claims import Decomposer
from groundwire.core.plan import Plan, as_chunks
from groundwire.core.pruning import Pruner, get_pruner
from groundwire.core.settings import refuse_unknown_options
from groundwire.core.verifier import Verifier
from groundwire.data.rows import EvalRow, RowError
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import MissingExtraError
from groundwire.foundation.types import Chunk, Claim, Report, RouteMode
from groundwire.llm.errors import LLMError
from groundwire.scoring import Scorer, get_scorer
from groundwire.scoring.embedder import embed_texts
from groundwire.scoring.profile import ProfiledScorer, ProfileError, load_profile, profile_of

if TYPE_CHECKING:
    from anyio import CapacityLimiter

    from groundwire.llm.client import LLMClient

__all__ = [
    "CheckItem",
    "CheckOptions",
    "CHECK_OPTION_NAMES",
    "CheckSettings",
    "Checked",
    "Checker",
    "Judge",
    "SETTING_NAMES",
    "SettingsOptions",
    "averify",
    "build_pruner",
    "build_verifier",
    "check",
    "check_many",
    "check_rows",
    "checker_for",
    "failure_of",
    "given_or_shared",
    "settings_of",
    "shared_verifier",
    "configured_client",
    "verify",
    "with_flags",
]


_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One answer to check against its chunks."""

    answer: str
    chunks: Sequence[Chunk]
    question: str | None = None
    task: str | None = None
    """Selects the calibration ("qa", "summary", "data2text", ...); None: pooled (data2text for a JSON record)."""
    require_citations: bool = False
    """Asked for by this request, on top of the verifier's own setting."""
    claims: tuple[Claim, ...] | None = None
    """The answer's claims, split already (the generator's consistency samples re-check one report's claims);
    None: the verifier's decomposer splits the answer."""
    response_id: str | None = None
    """The id of the model response that wrote the answer (`gen_ai.response.id`): set on the check's spans and
    GenAI evaluation events (core/tracing.py), so a tracing tool can join the evaluation to that completion."""


@dataclass(frozen=True, slots=True)
class Judge:
    """The LLM judge for the claims in the escalation band."""

    client: LLMClient
    required: bool = False
    """True: an endpoint failure raises LLMError (the CLI's --judge); False: the claim stays escalated."""


def build_verifier(
    settings: CheckSettings, *, client: LLMClient | None = None, scorer: Scorer | None = None
) -> Verifier:
    """The Verifier these settings describe. `client` is the [llm] endpoint; decomposer = "llm" needs it.
    `scorer`: a scorer object of the caller's, in place of `settings.scorer` (a name). Scorer names (`scorer`,
    `cascade`) are resolved here, by the registry's `get_scorer`: the verifier receives scorers."""
    decomposer: Decomposer | None = None
    if settings.decomposer == "llm":
        if client is None:
            raise InputError(
                '[verify] decomposer = "llm" needs an LLM: configure [llm] in groundwire.toml',
                code=ErrorCode.LLM_NOT_CONFIGURED,
            )
        # Lazy, as is the judge below: the LLM tier (httpx) loads only for a check that uses it.
        from groundwire.llm.decompose import LLMDecomposer

        decomposer = LLMDecomposer(client)
    try:
        first = scorer if scorer is not None else get_scorer(settings.scorer)
        if settings.profile is not None:
            first = profiled(first, settings)
        pruner = build_pruner(settings.pruner)
        # The cascade, planned here: its second stage checks with the same settings and parts, less the first
        # stage's thresholds and routing (CheckSettings.next_stage), and keeps its own calibrated thresholds (those
        # fitted after the first stage's model, where it has them).
        escalate_to = None
        if settings.cascade is not None:
            escalate_to = Verifier(
                get_scorer(settings.cascade),
                settings.next_stage(),
                decomposer=decomposer,
                pruner=pruner,
                after=first.model_id,
            )
        return Verifier(first, settings, decomposer=decomposer, pruner=pruner, escalate_to=escalate_to)
    except (MissingExtraError, ProfileError):  # InputErrors of their own codes, not a bad setting
        raise
    except ValueError as error:  # an unknown scorer or pruner, thresholds out of order: the user's input
        raise InputError(str(error), code=ErrorCode.INVALID_SETTINGS) from None


def profiled(scorer: Scorer, settings: CheckSettings) -> Scorer:
    """The scorer routed by the settings' domain profile (scoring.profile): its calibration over the scorer's."""
    if settings.cascade is not None:
        raise InputError(
            "a profile and a cascade exclude each other: the profile was fitted on one model's scores, and a second "
            "stage routes by its own calibration; drop [verify] cascade or the profile",
            code=ErrorCode.INVALID_SETTINGS,
        )
    assert settings.profile is not None
    return ProfiledScorer(scorer, load_profile(settings.profile))


def build_pruner(name: str, **options: float) -> Pruner | None:
    """The pruner registered under `name` ("none": the exact matrix), built with `options` (top_k, margin). The
    embedding pruner is handed the data layer's shared embedder here, so that core never imports a model."""
    if name == "embedding":
        return get_pruner(name, embed=embed_texts, **options)
    return get_pruner(name, **options)


def check(verifier: Verifier, item: CheckItem, *, judge: Judge | None = None, plan: Plan | None = None) -> Report:
    """Verify one item; with a `judge`, the LLM judge then decides the claims in the escalation band.

    `plan`: the item's plan, made by `verifier.plan` for a caller that read its workload first (the service's
    limits), so the answer is split once; None: planned here. A judge with a verifier that decides (route =
    "decide") is an InputError: they exclude each other (the service's judge=true meets it here)."""
    if judge is not None and verifier.router.mode == "decide":
        raise InputError(
            'the judge and route = "decide" exclude each other: decided verdicts leave nothing escalated for the '
            "judge; check without the judge, or with a verifier that routes three ways",
            code=ErrorCode.INVALID_OPTION,
        )
    checkpoint()  # a service request whose caller has gone, or whose time is up, stops here (core.cancel)
    if plan is None:
        plan = verifier.plan(item.answer, item.chunks, question=item.question, claims=item.claims)
        checkpoint()
    elif (plan.answer, plan.question) != (item.answer, item.question):
        raise ValueError("the plan is for another answer or question than the item")
    # One scope for the check: its final report (after the judge) is the evaluation recorded on the caller's span.
    with tracing.check_span(item.response_id) as scope:
        report = verifier.run(plan, task=item.task, require_citations=item.require_citations or None)
        if (profile := profile_of(verifier.scorer)) is not None:  # the profile that routed the answer
            report = replace(report, meta=replace(report.meta, profile=profile.name, profile_version=profile.version))
        if judge is not None:
            checkpoint()
            from groundwire.llm.judge import adjudicate

            report = adjudicate(report, list(item.chunks), client=judge.client, required=judge.required)
        if scope is not None:
            scope.record(report)
    return report


@dataclass(frozen=True, slots=True)
class Checked:
    """One item of `check_many`: its report, or why there is none (`code` and the message in `error`)."""

    item: CheckItem | None
    """None for a row that could not be read (`check_rows`)."""
    report: Report | None
    error: str | None = None
    code: ErrorCode | None = None


def check_many(verifier: Verifier, items: Iterable[CheckItem], *, judge: Judge | None = None) -> Iterator[Checked]:
    """`check` each item in turn with one verifier (the model loads once), yielding one `Checked` per item, in
    order. One item never ends the run: an item that fails (the verifier refuses it, the judge's endpoint fails,
    or groundwire itself fails on it) is yielded with its code and message, and the rest go on."""
    for item in items:
        try:
            report = check(verifier, item, judge=judge)
        except Exception as error:
            code, message = failure_of(error)
            yield Checked(item, None, message, code)
        else:
            yield Checked(item, report)


def check_rows(
    verifier: Verifier,
    rows: Sequence[EvalRow | RowError],
    *,
    judge: Judge | None = None,
    require_citations: bool = False,
) -> Iterator[Checked]:
    """`check_many` over rows as `data.rows` read them, one `Checked` per row in order: a row that could not be read
    is yielded with code invalid_row and its reason, as a row the check failed on is with its own. The task is the
    row's own (`given_task`), so a row that names none is checked as an answer with none (a JSON record's as
    data2text)."""
    items = (
        CheckItem(
            row.answer, row.chunks, question=row.question, task=row.given_task, require_citations=require_citations
        )
        for row in rows
        if isinstance(row, EvalRow)
    )
    checked = check_many(verifier, items, judge=judge)
    for row in rows:
        yield Checked(None, None, row.error, ErrorCode.INVALID_ROW) if isinstance(row, RowError) else next(checked)


def failure_of(error: Exception) -> tuple[ErrorCode, str]:
    """The code and message an item's failure is recorded with. An unexpected error is logged with its
    traceback, since the record has only its type and message."""
    if isinstance(error, InputError):
        return error.code, str(error)
    if isinstance(error, LLMError):
        return ErrorCode.LLM_UNAVAILABLE, str(error)
    _log.exception("an item could not be checked")
    return ErrorCode.INTERNAL_ERROR, f"{type(error).__name__}: {error}"


class Planner(Protocol):
    """Plans a check for a caller that holds it to limits first (the service's `Runtime.plan`)."""

    def __call__(
        self, answer: str, chunks: Sequence[Chunk], *, question: str | None, claims: Sequence[Claim] | None
    ) -> Plan: ...


@dataclass(frozen=True, slots=True)
class Checker:
    """A verifier (and judge) bound to `check`: what a component below this module is handed when it checks
    answers of its own (the generator's attempts and consistency samples, repair's edits, the citations
    provenance adds), so that it checks through the one path without importing pipeline (foundation.types.AnswerCheck).
    `planner`: plans each of those checks (the service holds repair's to its limits); None: `check` plans."""

    verifier: Verifier
    judge: Judge | None = None
    planner: Planner | None = None

    @property
    def model_id(self) -> str:
        """The verifier's model id."""
        return self.verifier.model_id

    @property
    def accept_at(self) -> float:
        """The verifier's accept threshold (its default calibration's)."""
        return self.verifier.accept_at

    def __call__(
        self,
        answer: str,
        chunks: Sequence[Chunk],
        *,
        question: str | None = None,
        claims: Sequence[Claim] | None = None,
        task: str | None = None,
    ) -> Report:
        """`check` the answer with the bound verifier (and judge)."""
        item = CheckItem(answer, chunks, question=question, task=task, claims=None if claims is None else tuple(claims))
        plan = None if self.planner is None else self.planner(answer, chunks, question=question, claims=claims)
        return check(self.verifier, item, judge=self.judge, plan=plan)


_SHARED: dict[tuple[str, int], Verifier] = {}
_SHARED_LOCK = threading.Lock()


def shared_verifier(settings: CheckSettings | None = None, *, client: LLMClient | None = None) -> Verifier:
    """The process-wide verifier for `settings` (default: the bundled model), built on first use and shared by
    verify(), averify(), verify_many(), the framework adapters and the pytest plugin, so a model loads once.
    `client`: the [llm] endpoint of an LLM decomposer (one verifier per settings and client)."""
    settings = settings or CheckSettings()
    key = (settings.model_dump_json(), id(client))  # the verifier keeps its client alive: the id stays its own
    with _SHARED_LOCK:  # adapters and averify() call this from worker threads
        if key not in _SHARED:
            _SHARED[key] = build_verifier(settings, client=client)
        return _SHARED[key]


class _SettingsKeywords(TypedDict, total=False):
    """CheckSettings' fields as keywords (None: not given), all but `scorer` and `require_citations`, whose types
    differ between the library calls and the adapters. tests/test_settings_reach.py holds the two option sets
    below to CheckSettings' fields, so a new field is declared here or a test fails."""

    settings: CheckSettings | None
    """Everything [verify] in groundwire.toml can say; None: the defaults (the bundled model). The keywords below,
    where given, are put over it (`with_flags`), as the CLI puts its flags over the file."""
    accept_at: float | None
    reject_at: float | None
    route: RouteMode | None
    decide_at: float | None
    decomposer: Literal["rules", "llm"] | None
    pruner: Literal["none", "lexical", "embedding"] | None
    canonical_figures: bool | None
    meaning: bool | None
    entities: bool | None
    judge: bool | None
    cascade: str | None
    profile: str | Path | None


class SettingsOptions(_SettingsKeywords, total=False):
    """The settings keywords every adapter takes: plain values, which a framework can save with it."""

    scorer: str | None
    require_citations: bool | None


class CheckOptions(_SettingsKeywords, total=False):
    """How a library call (verify, averify, verify_many, averify_many, assert_grounded) chooses its check: the
    settings keywords (each CheckSettings field; `require_citations` is each call's own keyword), with `scorer` a
    name or a scorer object (which gets a verifier of its own); or a loaded `verifier` (not with settings);
    `client`, the [llm] endpoint of the judge and an LLM decomposer (None: the one groundwire.toml configures, when
    the settings need one)."""

    scorer: Scorer | str | None
    verifier: Verifier | None
    client: LLMClient | None


SETTING_NAMES: tuple[str, ...] = tuple(CheckSettings.model_fields)
"""The option names that make settings: CheckSettings' fields, read by `settings_of` one by one."""
CHECK_OPTION_NAMES = frozenset(SETTING_NAMES) - {"require_citations"} | {"settings", "verifier", "client"}
"""What `checker_for` takes: `CheckOptions`' keys."""


def checker_for(where: str = "this call", /, **options: Unpack[CheckOptions]) -> Checker:
    """What a library call checks with, from its options (`CheckOptions`): `given_or_shared` of the verifier, or
    of the settings they make (`settings_of`); a scorer object gets a verifier of its own. `where` names the call
    in the TypeError that refuses a keyword it does not take (`option_error`); a bad value is a ValueError."""
    refuse_unknown_options(where, options, CHECK_OPTION_NAMES)
    verifier, client, scorer = options.get("verifier"), options.get("client"), options.get("scorer")
    if scorer is None or isinstance(scorer, str):
        return given_or_shared(verifier, settings_of(options), client=client)
    if verifier is not None:
        raise ValueError("pass either a verifier (it has its own scorer) or a scorer, not both")
    settings = settings_of({**options, "scorer": None}) or CheckSettings()
    return given_or_shared(build_verifier(settings, scorer=scorer, client=client), client=client)


def settings_of(options: Mapping[str, object]) -> CheckSettings | None:
    """The settings these options make: `settings` with every CheckSettings field given as a keyword put over them
    (`with_flags`); None when none was given. A bad value is a ValueError (InputError, code INVALID_SETTINGS)."""
    settings = options.get("settings")
    if settings is not None and not isinstance(settings, CheckSettings):
        raise InputError(
            f"settings must be a CheckSettings, not {type(settings).__name__}: write "
            "settings=CheckSettings(...), or give its fields as keywords",
            code=ErrorCode.INVALID_SETTINGS,
        )
    flags = {name: options.get(name) for name in SETTING_NAMES}
    if isinstance(flags["profile"], Path):
        flags["profile"] = str(flags["profile"])
    return with_flags(settings, **flags)


def with_flags(settings: CheckSettings | None, **flags: object) -> CheckSettings | None:
    """`settings` with the keywords a library call was given (None: not given, e.g. `scorer=`, `accept_at=`) put
    over them, as the CLI puts its flags over groundwire.toml; None when neither was given."""
    if settings is None and all(value is None for value in flags.values()):
        return None
    return (settings or CheckSettings()).overridden(**flags)


def given_or_shared(
    verifier: Verifier | None = None, settings: CheckSettings | None = None, *, client: LLMClient | None = None
) -> Checker:
    """What a library call checks with: the verifier it was given, else the shared one for `settings` (None: the
    defaults); with the LLM judge when those settings turn it on (`judge`). `client`: the [llm] endpoint that the
    judge and an LLM decomposer use; None: the one groundwire.toml (or the environment) configures, when needed."""
    if verifier is not None and settings is not None:
        raise ValueError("pass either a verifier (it has its own settings) or settings, not both")
    wanted = verifier.settings if verifier is not None else settings or CheckSettings()
    if client is None and (wanted.judge or (verifier is None and wanted.decomposer == "llm")):
        client = configured_client()
    if verifier is None:
        verifier = shared_verifier(wanted, client=client if wanted.decomposer == "llm" else None)
    return Checker(verifier, Judge(client, required=True) if wanted.judge and client is not None else None)


@functools.cache
def configured_client() -> LLMClient:
    """The [llm] endpoint groundwire.toml (or the environment) configures, one per process, for a library call whose
    settings need an LLM and that was handed no client."""
    from groundwire.config import load_config
    from groundwire.llm.client import client_from_config

    config = load_config()
    if not config.llm_configured:
        raise InputError(
            'these settings need an LLM (judge, or decomposer = "llm"): pass client=LLMClient(LLMConfig(...)), or set '
            "[llm] base_url and model in groundwire.toml (or GROUNDWIRE_LLM_BASE_URL / GROUNDWIRE_LLM_MODEL)",
            code=ErrorCode.LLM_NOT_CONFIGURED,
        )
    return client_from_config(config)


def verify(
    answer: str,
    chunks: Sequence[Chunk | str],
    *,
    question: str | None = None,
    task: str | None = None,
    require_citations: bool = False,
    response_id: str | None = None,
    **options: Unpack[CheckOptions],
) -> Report:
    """One-call verification. `options` (CheckOptions): `settings`, everything [verify] in groundwire.toml can say
    (CheckSettings), with any of its fields given as a keyword put over it (`scorer="lexical"`, `route="decide"`,
    `profile=DIR`...); or a loaded `verifier`. The judge and an LLM decomposer use `client`, else the configured
    [llm] endpoint. A named scorer (None: the bundled model) is loaded once per process and reused for the same
    settings; a scorer object gets a verifier of its own. A keyword verify() does not take is a TypeError (naming
    its replacement: `threshold=` is `accept_at=`), a bad value a ValueError. `response_id`: the id of the model
    response that wrote the answer, put on the check's spans and GenAI evaluation events (`gen_ai.response.id`)."""
    checker = checker_for("verify()", **options)
    item = _one_item(answer, chunks, question, task, require_citations, response_id)
    return check(checker.verifier, item, judge=checker.judge)


def _one_item(
    answer: str,
    chunks: Sequence[Chunk | str],
    question: str | None,
    task: str | None,
    require_citations: bool,
    response_id: str | None,
) -> CheckItem:
    """The item verify() and averify() check."""
    return CheckItem(
        answer,
        as_chunks(chunks),
        question=question,
        task=task,
        require_citations=require_citations,
        response_id=response_id,
    )


async def averify(
    answer: str,
    chunks: Sequence[Chunk | str],
    *,
    question: str | None = None,
    task: str | None = None,
    require_citations: bool = False,
    response_id: str | None = None,
    limiter: CapacityLimiter | None = None,
    **options: Unpack[CheckOptions],
) -> Report:
    """Await one check, for async servers. The check is CPU-bound (tokenizer, onnxruntime), so it runs in a
    worker thread and the event loop keeps serving; onnxruntime releases the GIL while it scores, so several
    checks in flight overlap. `options` (CheckOptions) as verify()'s (a loaded verifier is reused; settings get the
    shared verifier verify() uses), refused as verify() refuses them; `limiter` caps how many checks run at once
    (anyio's default is 40); `response_id` as verify()'s. The worker thread runs in a copy of this context, so the
    check's spans nest under the current one."""
    import anyio.to_thread  # lazy: only async callers need it

    item = _one_item(answer, chunks, question, task, require_citations, response_id)
    checker = checker_for("averify()", **options)
    call = functools.partial(check, checker.verifier, item, judge=checker.judge)
    return await anyio.to_thread.run_sync(call, limiter=limiter)
