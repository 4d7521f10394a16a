"""Helpers shared by the CLI's command modules: reading context files, the settings a command checks with (and the
routing flags, --route and --decide-at, of every command that takes --accept-at), and the refusals every command
words the same way.

Every command module imports this one, so it imports nothing heavy: the verifier (numpy), the settings
(pydantic) and the LLM client (httpx) load when a command runs (it builds its verifier with
`groundwire.pipeline.build_verifier`), never for `groundwire --help`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from groundwire.data.rows import read_text
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Chunk

if TYPE_CHECKING:
    from groundwire.config import CheckSettings, Config


def read_chunks(paths: list[Path] | None) -> list[Chunk]:
    """One chunk per context file, ids S1..Sn in the order given."""
    if not paths:
        raise InputError("give at least one --context FILE (each file is one retrieved chunk)",
                         code=ErrorCode.NO_CONTEXT)
    return [Chunk(id=f"S{i}", text=read_text(path), doc_id=path.name) for i, path in enumerate(paths, start=1)]


def read_answer(value: str) -> str:
    """--answer: the text itself, or with @FILE the file's text. A value that names a file, without the @, is
    refused: checked as the answer it would be a meaningless text whose rejection looks like a verdict."""
    if value.startswith("@"):
        return read_text(value[1:])
    if "\n" not in value and _is_file(value):
        raise InputError(f"--answer {value} names a file: give --answer @{value} to check the text it holds",
                         code=ErrorCode.INVALID_OPTION)
    return value


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except OSError:  # a name too long for the file system is no file
        return False


AcceptAtOption = Annotated[float | None, typer.Option(help="Accept at or above this score.")]
RejectAtOption = Annotated[float | None, typer.Option(help="Reject at or below this score.")]
RequireCitationsOption = Annotated[bool, typer.Option(help="Flag sentences without a citation marker.")]
RouteOption = Annotated[
    Literal["three-way", "decide"] | None,
    typer.Option("--route", help="three-way: accept, escalate or reject; decide: accept or reject at --decide-at, "
                                 "nothing escalated (no judge). Default: [verify] route, else three-way."),
]
DecideAtOption = Annotated[
    float | None,
    typer.Option("--decide-at", min=0.0, max=1.0,
                 help="With --route decide: accept at or above this score, reject below (default: [verify] decide_at, "
                      "else the scorer's calibrated one, else midway between accept_at and reject_at)."),
]


ProfileOption = Annotated[
    Path | None,
    typer.Option("--profile", metavar="DIR", help="A domain profile (`groundwire adapt`): thresholds and combiner "
                                                  "fitted on your labelled answers (default: [verify] profile)."),
]


DecomposerOption = Annotated[
    Literal["rules", "llm"] | None,
    typer.Option("--decomposer", help="How answers are split into claims: rules, or llm (the [llm] endpoint, rules as "
                                      "fallback). Default: [verify] decomposer, else rules."),
]
PrunerOption = Annotated[
    Literal["none", "lexical", "embedding"] | None,
    typer.Option("--pruner", help="Pair pruning: none (the exact claims x windows matrix), lexical or embedding. "
                                  "Default: [verify] pruner, else none."),
]
CanonicalFiguresOption = Annotated[
    bool | None,
    typer.Option("--canonical-figures/--no-canonical-figures",
                 help="Read figures in one spelling (\"3,600\" as 3600, \"five\" as 5). Default: [verify] "
                      "canonical_figures, else on."),
]
MeaningOption = Annotated[
    bool | None,
    typer.Option("--meaning/--no-meaning", help="The meaning layer (all-MiniLM-L6-v2). Default: [verify] meaning, "
                                                "else as the scorer was calibrated."),
]
EntitiesOption = Annotated[
    bool | None,
    typer.Option("--entities/--no-entities", help="The opt-in entities check (groundwire[entities]). Default: "
                                                  "[verify] entities, else off."),
]
CascadeOption = Annotated[
    str | None,
    typer.Option("--cascade", metavar="SCORER", help="A second, larger scorer that checks again every answer the "
                                                     "first escalates. Default: [verify] cascade, else none."),
]


def check_settings(
    config: Config,
    scorer: str | None = None,
    *,
    accept_at: float | None = None,
    reject_at: float | None = None,
    route: str | None = None,
    decide_at: float | None = None,
    require_citations: bool | None = None,
    judge: bool | None = None,
    pruner: str | None = None,
    profile: Path | None = None,
    decomposer: str | None = None,
    canonical_figures: bool | None = None,
    meaning: bool | None = None,
    entities: bool | None = None,
    cascade: str | None = None,
) -> CheckSettings:
    """The settings groundwire.toml ([verify]) describes, with the command's flags (None: not given) over them, all
    in one step: what the command hands to `groundwire.pipeline.build_verifier`. `check` has a flag for every
    CheckSettings field (tests/test_settings_reach.py)."""
    return config.verify.overridden(scorer=scorer, accept_at=accept_at, reject_at=reject_at, route=route,
                                    decide_at=decide_at, require_citations=require_citations, judge=judge,
                                    pruner=pruner, profile=None if profile is None else str(profile),
                                    decomposer=decomposer, canonical_figures=canonical_figures, meaning=meaning,
                                    entities=entities, cascade=cascade)


def refuse_judge(settings: CheckSettings, command: str) -> None:
    """A command that runs the verifier alone (eval, batch) refuses [verify] judge = true rather than ignore it."""
    if settings.judge:
        raise InputError(
            f"{command} does not run the LLM judge: drop [verify] judge (GROUNDWIRE_VERIFY_JUDGE) for it, or check "
            "with `groundwire check --judge`",
            code=ErrorCode.INVALID_SETTINGS,
        )


def require_llm(config: Config, needed_by: str) -> None:
    """Every command that needs an LLM and finds none configured fails the same way: exit 2, this message."""
    if not config.llm_configured:
        raise InputError(
            f"{needed_by} needs an LLM endpoint: set [llm] base_url and model in groundwire.toml "
            "(or GROUNDWIRE_LLM_BASE_URL / GROUNDWIRE_LLM_MODEL)"
        , code=ErrorCode.LLM_NOT_CONFIGURED)
