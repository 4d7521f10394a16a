"""groundwire.toml: one file for thresholds and LLM settings, with environment overrides.

Lookup order for the file: an explicit path, then $GROUNDWIRE_CONFIG, then ./groundwire.toml;
with none of them, the defaults below. Any setting can then be overridden from the environment
as GROUNDWIRE_<SECTION>_<KEY> (e.g. GROUNDWIRE_LLM_MODEL, GROUNDWIRE_VERIFY_ACCEPT_AT). The API key
is never read from the file unless written there: GROUNDWIRE_LLM_API_KEY, then OPENAI_API_KEY.

Example:

    [verify]
    scorer = "bundled"   # the default; "lexical" needs no model
    accept_at = 0.8      # leave both out to use the scorer's calibrated thresholds
    reject_at = 0.2
    route = "three-way"  # or "decide": accept or reject every answer at decide_at, nothing escalated (no judge)

    [llm]
    base_url = "http://127.0.0.1:8080/v1"
    model = "smollm2"
    expensive_model = "gpt-4o"

    [repair]
    min_surviving_share = 0.5
    abstain_message = "The sources don't support a complete answer."
"""

from __future__ import annotations

import difflib
import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import REFUSAL_TOKEN, RouteMode

JsonMode = Literal["json_object", "json_schema", "json_object_schema", "none"]
"""How the LLM client asks for a JSON reply (LLMConfig.json_mode)."""

CONFIG_FILENAME = "groundwire.toml"
ENV_PREFIX = "GROUNDWIRE_"
OTHER_ENV_NAMES = (f"{ENV_PREFIX}CONFIG", f"{ENV_PREFIX}API_KEYS")
"""Variables read outside the config sections: the file to read, `groundwire serve`'s keys."""
SECRET_FIELDS = frozenset({("llm", "api_key")})
"""Their values never appear in an error message."""

log = logging.getLogger("groundwire.config")


class _Section(BaseModel):
    # extra="forbid": a misspelt key is an error, not a silently ignored setting.
    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckSettings(_Section):
    """How a check is assembled: the [verify] section of groundwire.toml, and what every surface (check, eval,
    batch, serve, repair, generate, eval-loop) hands to `groundwire.pipeline.build_verifier`."""

    accept_at: float | None = Field(None, ge=0.0, le=1.0)
    """None: the scorer's calibrated threshold, else 0.8."""
    reject_at: float | None = Field(None, ge=0.0, le=1.0)
    """None: the scorer's calibrated threshold, else 0.2."""
    route: RouteMode = "three-way"
    """"three-way": accept / escalate / reject, the band between the thresholds left to the judge or a person.
    "decide": every answer and claim gets a committed verdict at one threshold (`decide_at`): accept at or above
    it, reject below; nothing is escalated or UNRESOLVED. Excludes `judge` and `cascade`, which resolve the band."""
    decide_at: float | None = Field(None, ge=0.0, le=1.0)
    """The threshold of route = "decide". None: the scorer's calibrated one, else the midpoint of accept_at and
    reject_at (the report warns). It must lie above reject_at, where the checks cap a claim."""
    scorer: str | None = None
    """Scorer name or path; None lets the verifier pick its default."""
    require_citations: bool = False
    decomposer: Literal["rules", "llm"] = "rules"
    """How answers are split into claims: the rule-based splitter, or the [llm] endpoint (rules as fallback)."""
    pruner: Literal["none", "lexical", "embedding"] = "none"
    """Pair pruning (groundwire.core.pruning): "none" scores the exact claims x windows matrix."""
    canonical_figures: bool = True
    """The scorer and the overlap features read figures in one spelling ("3,600" as "3600", "five" as "5", "12
    kilometres" as "12 km") in context and claim alike. On since calibration v6, which was fitted this way (what
    it changed: docs/accuracy.md)."""
    meaning: bool | None = None
    """The meaning layer (core.meaning): each claim aligned to its best evidence sentence by all-MiniLM-L6-v2, the
    paraphrase gate and the combiner's meaning features. None: as the scorer was calibrated (on for the bundled
    model when its calibration says so, off for an uncalibrated scorer such as "lexical")."""
    entities: bool = False
    """The opt-in entities check (core/checks/entities.py, `pip install groundwire[entities]`): names of a claim
    found nowhere in the context, and agent/patient swaps beyond core/checks/roles.py, read by spaCy's small English
    pipeline. Signals (they cap a claim mid-band). Off by default, for its cost per process and what it fires on
    (docs/how-it-works.md, "The meaning layer")."""
    judge: bool = False
    """Send escalated claims to the [llm] judge (the CLI's --judge; the service decides per request)."""
    cascade: str | None = None
    """A second, larger scorer (name or path, e.g. "onnx:/models/larger-bundle") that checks again every answer the
    first escalates, with the same claims and its own calibrated thresholds (accept_at / reject_at above apply to
    the first stage only). The judge, when on, then sees what the second stage leaves open. None: no cascade."""
    profile: str | None = None
    """A domain profile directory (`groundwire adapt`): thresholds, and a combiner, fitted on this deployment's own
    labelled answers, over the scorer's calibration; refused when it was built on another model. None: the scorer's."""

    @model_validator(mode="after")
    def _ordered(self) -> CheckSettings:
        if self.accept_at is not None and self.reject_at is not None and self.reject_at >= self.accept_at:
            raise ValueError(f"reject_at ({self.reject_at}) must be below accept_at ({self.accept_at})")
        return self

    @model_validator(mode="after")
    def _decided(self) -> CheckSettings:
        # Decided verdicts leave no band: a judge or a cascade stage would never be asked, so both are refused.
        if self.route == "decide" and self.judge:
            raise ValueError(
                'route = "decide" and the judge exclude each other: decided verdicts leave nothing escalated for the '
                'judge; use route = "three-way" with the judge, or drop the judge (--judge, [verify] judge)'
            )
        if self.route == "decide" and self.cascade is not None:
            raise ValueError(
                'route = "decide" and cascade exclude each other: decided verdicts leave nothing escalated for a '
                'second stage; use route = "three-way" with the cascade, or drop [verify] cascade'
            )
        return self

    def overridden(self, **flags: object) -> CheckSettings:
        """These settings with the command-line flags that were given (None = not given) put over them."""
        given = {key: value for key, value in flags.items() if value is not None}
        if not given:
            return self
        try:
            return self.model_validate({**self.model_dump(), **given})
        except ValidationError as exc:
            raise InputError(f"invalid check settings: {exc}", code=ErrorCode.INVALID_SETTINGS) from None


VerifyConfig = CheckSettings
"""The [verify] section's earlier name."""


class LLMConfig(_Section):
    base_url: str = "http://127.0.0.1:8080/v1"
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""
    model: str = "default"
    expensive_model: str | None = None
    """Confidence routing: escalate to this model when groundedness falls below routing.escalate_below."""
    api_key: SecretStr | None = None
    """Kept secret: never shown in a repr, a log line or an error message."""
    timeout_s: float = Field(60.0, gt=0)
    connect_timeout_s: float = Field(5.0, gt=0)
    max_retries: int = Field(3, ge=0)
    backoff_s: float = Field(0.5, ge=0)
    """First retry waits this long; each later one twice as long (capped by max_backoff_s)."""
    max_backoff_s: float = Field(8.0, ge=0)
    temperature: float = Field(0.0, ge=0)
    max_tokens: int | None = Field(512, gt=0)
    json_mode: JsonMode = "json_object"
    """How to ask for JSON: response_format json_object; json_schema (the reply's pydantic schema, OpenAI's form:
    OpenAI, vLLM, llama.cpp's llama-server); json_object_schema (the schema inside a json_object format, the form
    llama-cpp-python's server takes: it answers json_schema with HTTP 500); or only the prompt ("none")."""
    self_rag: bool = False
    """The model emits Self-RAG reflection tokens ([Retrieve], [IsRel], [IsSup], [IsUse])."""


class RepairConfig(_Section):
    min_surviving_share: float = Field(0.5, ge=0.0, le=1.0)
    abstain_message: str = REFUSAL_TOKEN


class GenerateConfig(_Section):
    strengths: tuple[Literal["standard", "strict", "very_strict", "chain_of_thought"], ...] = Field(
        ("standard", "strict", "very_strict"), min_length=1
    )
    """The escalation ladder: each failed attempt retries at the next strength."""
    fallback_answer: str = REFUSAL_TOKEN
    escalate_below: float = Field(0.6, ge=0.0, le=1.0)
    """Confidence routing: a cheap model's answer scoring below this goes to llm.expensive_model."""
    samples: int = Field(1, ge=1)
    sample_temperature: float = Field(0.7, ge=0)
    low_confidence_prob: float = Field(0.3, ge=0.0, le=1.0)
    """Tokens whose probability is below this are flagged as low-confidence spans."""
    active_retrieval_rounds: int = Field(0, ge=0)
    """FLARE-style rounds of retrieval on low-confidence sentences (needs a Retriever)."""
    retrieve_k: int = Field(3, ge=1)
    insufficient_below: float = Field(0.5, ge=0.0, le=1.0)
    """An answer that does not abstain, yet keeps less than this share of its claims (the rest rejected), falsely
    claims the context was sufficient."""


class PolicyConfig(_Section):
    name: Literal["route", "disclaimer", "strict"] = "route"
    disclaimer_band: tuple[float, float] = (0.5, 0.9)
    disclaimer: str = "Note: parts of this answer may not be fully supported by the sources."

    @model_validator(mode="after")
    def _band(self) -> PolicyConfig:
        low, high = self.disclaimer_band
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"disclaimer_band must satisfy 0 <= low <= high <= 1, got {self.disclaimer_band}")
        return self


class ServeConfig(_Section):
    """`groundwire serve`'s defaults; its flags override them."""

    rate_limit: str | None = None
    """Requests per API key (or client address without keys), e.g. "60/minute"; unset: no limit."""


class Config(_Section):
    verify: CheckSettings = CheckSettings()
    llm: LLMConfig = LLMConfig()
    repair: RepairConfig = RepairConfig()
    generate: GenerateConfig = GenerateConfig()
    policy: PolicyConfig = PolicyConfig()
    serve: ServeConfig = ServeConfig()
    source: str | None = None
    """The file the settings came from (None: defaults and environment only)."""

    @property
    def llm_configured(self) -> bool:
        """True when the file or the environment sets [llm] (an API key alone does not name an endpoint)."""
        return bool(self.llm.model_fields_set - {"api_key"})


def find_config_file(
    path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None
) -> Path | None:
    env = os.environ if env is None else env
    if path is not None:
        explicit = Path(path)
        if not explicit.is_file():
            raise InputError(f"config file not found: {explicit}", code=ErrorCode.CONFIG_NOT_FOUND)
        return explicit
    if env.get(f"{ENV_PREFIX}CONFIG"):
        from_env = Path(env[f"{ENV_PREFIX}CONFIG"])
        if not from_env.is_file():
            raise InputError(f"config file named by {ENV_PREFIX}CONFIG not found: {from_env}",
                             code=ErrorCode.CONFIG_NOT_FOUND)
        return from_env
    local = Path.cwd() / CONFIG_FILENAME
    return local if local.is_file() else None


def load_config(path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None) -> Config:
    """Read groundwire.toml (if any), apply environment overrides, validate. Bad input raises InputError."""
    env = os.environ if env is None else env
    file = find_config_file(path, env=env)
    data: dict[str, Any] = {}
    if file is not None:
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{file}: not valid TOML: {exc}", code=ErrorCode.INVALID_CONFIG) from exc
    _warn_unknown_env(env)
    data = _apply_env(data, env)
    if file is not None:
        data["source"] = str(file)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = "\n".join(_describe(error, file, env) for error in exc.errors())
        raise InputError(f"invalid groundwire settings:\n{problems}", code=ErrorCode.INVALID_CONFIG) from None


def env_name(section: str, key: str) -> str:
    return f"{ENV_PREFIX}{section.upper()}_{key.upper()}"


def setting_env_names() -> list[str]:
    """Every GROUNDWIRE_<SECTION>_<KEY> that load_config reads."""
    return [
        env_name(section_name, key)
        for section_name, field in Config.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, _Section)
        for key in field.annotation.model_fields
    ]


def _warn_unknown_env(env: Mapping[str, str]) -> None:
    # A misspelt override would otherwise be ignored without a word. Only near misses are named: other tools
    # (and groundwire's own tests) keep unrelated GROUNDWIRE_* variables.
    known = [*setting_env_names(), *OTHER_ENV_NAMES]
    for name in env:
        if name.startswith(ENV_PREFIX) and name not in known:
            closest = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
            if closest:
                log.warning("%s is not a groundwire setting and is ignored; did you mean %s?", name, closest[0])


def _describe(error: Any, file: Path | None, env: Mapping[str, str]) -> str:
    """One line per problem, naming where the value came from; a secret's value is never shown."""
    loc = tuple(str(part) for part in error.get("loc", ()))
    where = f"in {file}" if file is not None else "in the defaults"
    if len(loc) >= 2 and env_name(loc[0], loc[1]) in env:
        where = f"from the environment variable {env_name(loc[0], loc[1])}"
    elif loc[:2] == ("llm", "api_key") and "OPENAI_API_KEY" in env:
        where = "from OPENAI_API_KEY or the config"
    name = f"[{loc[0]}] {'.'.join(loc[1:])}" if len(loc) > 1 else (loc[0] if loc else "settings")
    # The value is shown only for a known, non-secret field: a misspelt "api_kye" may hold the key itself.
    known = len(loc) == 2 and env_name(*loc) in setting_env_names() and loc not in SECRET_FIELDS
    shown = f" (got {error['input']!r})" if known and isinstance(error.get("input"), (str, int, float)) else ""
    return f"  {name} ({where}): {error['msg']}{shown}"


def _apply_env(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    merged = {section: dict(values) if isinstance(values, dict) else values for section, values in data.items()}
    for section_name, field in Config.model_fields.items():
        section_type = field.annotation
        if not (isinstance(section_type, type) and issubclass(section_type, _Section)):
            continue
        for key in section_type.model_fields:
            raw = env.get(f"{ENV_PREFIX}{section_name.upper()}_{key.upper()}")
            if raw is None:
                continue
            section = merged.setdefault(section_name, {})
            if not isinstance(section, dict):
                raise InputError(f"[{section_name}] in the config file must be a table", code=ErrorCode.INVALID_CONFIG)
            section[key] = _env_value(raw, section_type.model_fields[key].annotation)
    if not merged.get("llm", {}).get("api_key") and env.get("OPENAI_API_KEY"):
        merged.setdefault("llm", {})["api_key"] = env["OPENAI_API_KEY"]
    return merged


def _env_value(raw: str, annotation: Any) -> Any:
    # Tuple settings (strengths, disclaimer_band) are comma lists; pydantic coerces the rest from strings.
    return tuple(part.strip() for part in raw.split(",")) if get_origin(annotation) is tuple else raw


def config_path_for_writing(path: str | os.PathLike[str] | None = None, *,
                            env: Mapping[str, str] | None = None) -> Path:
    """Where a command that writes settings writes them: `path`, else $GROUNDWIRE_CONFIG, else ./groundwire.toml
    (which need not exist yet)."""
    env = os.environ if env is None else env
    if path is not None:
        return Path(path)
    return Path(env[f"{ENV_PREFIX}CONFIG"]) if env.get(f"{ENV_PREFIX}CONFIG") else Path.cwd() / CONFIG_FILENAME


def write_thresholds(path: Path, accept_at: float, reject_at: float, *, comment: str) -> None:
    """Set [verify] accept_at and reject_at in a groundwire.toml, keeping every other line and comment as it
    was (tomlkit edits the document in place); the file is created when absent. The result is validated
    before it is written, so a bad pair never lands in the file."""
    import tomlkit

    document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.is_file() else tomlkit.document()
    section = document.get("verify")
    if section is None:
        section = tomlkit.table()
        document["verify"] = section
    section["accept_at"] = accept_at
    section["accept_at"].comment(comment)
    section["reject_at"] = reject_at
    text = tomlkit.dumps(document)
    try:
        Config.model_validate(tomllib.loads(text))
    except ValidationError as exc:
        raise InputError(f"refusing to write {path}: {exc}", code=ErrorCode.INVALID_CONFIG) from exc
    path.write_text(text, encoding="utf-8")
