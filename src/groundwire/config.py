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
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_origin

from pydantic import Field, SecretStr, ValidationError, model_validator

from groundwire.core.settings import CheckSettings as CheckSettings
from groundwire.core.settings import Section
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import REFUSAL_TOKEN

JsonMode = Literal["json_object", "json_schema", "json_object_schema", "none"]
"""How the LLM client asks for a JSON reply (LLMConfig.json_mode)."""

CONFIG_FILENAME = "groundwire.toml"
ENV_PREFIX = "GROUNDWIRE_"
OTHER_ENV_NAMES = (f"{ENV_PREFIX}CONFIG", f"{ENV_PREFIX}API_KEYS")
"""Variables read outside the config sections: the file to read, `groundwire serve`'s keys."""
SECRET_FIELDS = frozenset({("llm", "api_key")})
"""Their values never appear in an error message."""

log = logging.getLogger("groundwire.config")


_Section = Section
"""Every section of groundwire.toml (core.settings.Section): frozen, and a misspelt key is an error."""


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


def __getattr__(name: str) -> object:
    """`VerifyConfig`, the [verify] section's earlier name for `CheckSettings`: deprecated, removed in 0.3."""
    if name == "VerifyConfig":
        warnings.warn("groundwire.config.VerifyConfig is deprecated; use groundwire.CheckSettings",
                      DeprecationWarning, stacklevel=2)
        return CheckSettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
