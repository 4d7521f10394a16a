"""An OpenAI-compatible chat-completions client on httpx.

Works with any server that speaks POST {base_url}/chat/completions: OpenAI, vLLM, Ollama, llama.cpp.
Explicit timeouts; retries with exponential backoff on 429, 5xx, timeouts and dropped connections;
JSON replies validated against a pydantic schema; token logprobs read when the server returns them;
every call logged (logger "groundwire.llm.client") and kept in `client.calls` with latency and token counts.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

import httpx
from pydantic import BaseModel, ValidationError

from groundwire.config import JsonMode, LLMConfig, load_config
from groundwire.core import cancel
from groundwire.llm.errors import LLMError
from groundwire.redact import redact, register_secret

if TYPE_CHECKING:
    from groundwire.config import Config

log = logging.getLogger("groundwire.llm.client")

Message = Mapping[str, str]
T = TypeVar("T", bound=BaseModel)

CALL_LOG_SIZE = 1000
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class LLMTimeout(LLMError):
    """Every attempt ran past the configured timeout."""

    @property
    def kind(self) -> str:
        return "it did not answer within its timeout"


class LLMHTTPError(LLMError):
    def __init__(self, message: str, *, status: int, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def kind(self) -> str:
        return f"it answered HTTP {self.status}"


class LLMOutputError(LLMError):
    """The reply arrived but is not what was asked for (not JSON, wrong schema)."""

    def __init__(self, message: str, *, text: str) -> None:
        super().__init__(message)
        self.text = redact(text)

    @property
    def kind(self) -> str:
        return "its reply was not what was asked for"


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    token: str
    logprob: float

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    model: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int
    logprobs: tuple[TokenLogprob, ...] | None = None
    """Per-token logprobs of the reply, or None when the server did not return them."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One logical call (retries included), as kept in `LLMClient.calls`."""

    purpose: str
    model: str
    ok: bool
    latency_s: float
    attempts: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, str | float | bool | None]:
        return {name: getattr(self, name) for name in self.__slots__}


class ChatOptions(TypedDict, total=False):
    """LLMClient.chat's options that chat_json passes on."""

    purpose: str
    model: str | None
    temperature: float | None
    max_tokens: int | None
    logprobs: bool
    stop: Sequence[str] | None


@dataclass
class LLMClient:
    """A client for the endpoint `config` (groundwire.toml's [llm]) describes: its URL, model, key, timeouts,
    retries, sampling and JSON mode. `transport` and `sleep` replace httpx's transport and the backoff's sleep
    (tests pass a scripted transport and a recording sleep)."""

    config: LLMConfig
    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    calls: deque[CallRecord] = field(default_factory=lambda: deque(maxlen=CALL_LOG_SIZE))
    """The most recent calls (bounded, so a long-running service does not grow without end)."""

    def __post_init__(self) -> None:
        api_key = self.config.api_key.get_secret_value() if self.config.api_key else None
        register_secret(api_key)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=self.config.base_url.rstrip("/"), headers=headers, timeout=self._timeout(), transport=self.transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- calls -------------------------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Message],
        *,
        purpose: str = "chat",
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_object: bool | type[BaseModel] = False,
        logprobs: bool = False,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        model = model or self.config.model
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(message) for message in messages],
            "temperature": self.config.temperature if temperature is None else temperature,
        }
        if (max_tokens or self.config.max_tokens) is not None:
            body["max_tokens"] = max_tokens or self.config.max_tokens
        if json_object:
            body.update(_response_format(self.config.json_mode, json_object))
        if logprobs:
            body["logprobs"] = True
        if stop:
            body["stop"] = list(stop)
        started = time.perf_counter()
        try:
            payload, attempts = self._post_with_retries(body)
            completion = _parse_completion(payload, model=model, started=started, attempts=attempts)
        except LLMError as exc:
            self._record(CallRecord(purpose, model, False, time.perf_counter() - started, exc.attempts, error=str(exc)))
            raise
        self._record(
            CallRecord(
                purpose,
                completion.model,
                True,
                completion.latency_s,
                completion.attempts,
                completion.prompt_tokens,
                completion.completion_tokens,
            )
        )
        return completion

    def chat_json(
        self, messages: Sequence[Message], schema: type[T], **options: Unpack[ChatOptions]
    ) -> tuple[T, Completion]:
        """Ask for a JSON reply and validate it against `schema`. Raises LLMOutputError when it does not fit."""
        completion = self.chat(messages, json_object=schema, **options)
        return parse_json_reply(completion.text, schema), completion

    # --- internals ---------------------------------------------------------------------------------

    def _record(self, record: CallRecord) -> None:
        self.calls.append(record)
        log.info(
            "llm call purpose=%s model=%s ok=%s latency_s=%.3f attempts=%d prompt_tokens=%s completion_tokens=%s%s",
            record.purpose,
            record.model,
            record.ok,
            record.latency_s,
            record.attempts,
            record.prompt_tokens,
            record.completion_tokens,
            f" error={record.error}" if record.error else "",
        )

    def _post_with_retries(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        last_error: LLMError | None = None
        for attempt in range(1, self.config.max_retries + 2):
            if attempt > 1:
                left = cancel.remaining()  # no backoff past a service request's time budget
                self.sleep(self._backoff(attempt - 1, last_error) if left is None else
                           min(left, self._backoff(attempt - 1, last_error)))
            cancel.checkpoint()  # a service request whose caller has gone, or whose time is up, makes no more calls
            try:
                response = self._http.post("/chat/completions", json=body, timeout=self._timeout())
            except httpx.TimeoutException as exc:
                cancel.checkpoint()  # cut short by a service request's time budget: stopped, not the endpoint's fault
                last_error = LLMTimeout(f"{self.config.base_url}: no reply within {self.config.timeout_s:g}s ({type(exc).__name__})")
                log.warning("llm attempt %d timed out", attempt)
                continue
            except httpx.TransportError as exc:
                last_error = LLMError(f"{self.config.base_url}: cannot reach the LLM endpoint ({exc}); is the server running?")
                log.warning("llm attempt %d failed to connect: %s", attempt, redact(str(exc)))
                continue
            if response.status_code in RETRY_STATUS:
                last_error = LLMHTTPError(
                    f"{self.config.base_url}: HTTP {response.status_code}: {response.text[:200]}",
                    status=response.status_code,
                    retry_after=_retry_after(response),
                )
                log.warning("llm attempt %d got HTTP %d", attempt, response.status_code)
                continue
            if response.is_error:
                error = LLMHTTPError(
                    f"{self.config.base_url}: HTTP {response.status_code}: {response.text[:300]} (not retried: check the "
                    "model name, API key and request)",
                    status=response.status_code,
                )
                error.attempts = attempt
                raise error
            try:
                return response.json(), attempt
            except json.JSONDecodeError as exc:
                not_json = LLMOutputError(f"{self.config.base_url}: the reply is not JSON: {exc}", text=response.text)
                not_json.attempts = attempt
                raise not_json from exc
        assert last_error is not None
        final = type(last_error)(f"{last_error} (gave up after {self.config.max_retries + 1} attempts)", **_extra(last_error))
        final.attempts = self.config.max_retries + 1
        raise final

    def _timeout(self) -> httpx.Timeout:
        """The configured timeouts, cut to what is left of a service request's time budget (core.cancel)."""
        left = cancel.remaining()
        if left is None:
            return httpx.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s)
        return httpx.Timeout(min(self.config.timeout_s, left), connect=min(self.config.connect_timeout_s, left))

    def _backoff(self, retry: int, error: LLMError | None) -> float:
        retry_after = error.retry_after if isinstance(error, LLMHTTPError) else None
        wait = self.config.backoff_s * 2 ** (retry - 1) if retry_after is None else retry_after
        return min(wait, self.config.max_backoff_s)


def _response_format(mode: JsonMode, schema: bool | type[BaseModel]) -> dict[str, Any]:
    # Both schema forms constrain decoding to the reply's schema where the server supports them: json_schema is
    # OpenAI's (OpenAI, vLLM, llama-server), json_object_schema llama-cpp-python's (llama-server takes it too).
    if mode == "json_schema" and isinstance(schema, type):
        spec = {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if mode == "json_object_schema" and isinstance(schema, type):
        return {"response_format": {"type": "json_object", "schema": schema.model_json_schema()}}
    if mode != "none":
        return {"response_format": {"type": "json_object"}}
    return {}


def _extra(error: LLMError) -> dict[str, Any]:
    return {"status": error.status} if isinstance(error, LLMHTTPError) else {}


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    return float(value) if re.fullmatch(r"\d+(\.\d+)?", value.strip()) else None


def _parse_completion(payload: Any, *, model: str, started: float, attempts: int) -> Completion:
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        raise LLMOutputError(
            "the reply has no choices[0].message; is this an OpenAI-compatible chat endpoint? "
            f"got {str(payload)[:200]}",
            text=json.dumps(payload)[:2000],
        )
    choice = choices[0]
    usage = payload.get("usage") or {}
    return Completion(
        text=choice["message"].get("content") or "",
        model=payload.get("model") or model,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_s=time.perf_counter() - started,
        attempts=attempts,
        logprobs=_parse_logprobs(choice.get("logprobs")),
    )


def _parse_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    # OpenAI shape: {"content": [{"token": "...", "logprob": -0.1, ...}, ...]}; llama.cpp's OAI mode matches it.
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    return tuple(
        TokenLogprob(str(item.get("token", "")), float(item["logprob"]))
        for item in raw["content"]
        if isinstance(item, dict) and isinstance(item.get("logprob"), (int, float))
    )


_FENCE_RE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Validate a model's JSON reply. Tolerates a ```json fence and prose around one JSON object; nothing more."""
    stripped = text.strip()
    fenced = _FENCE_RE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if not candidate.startswith(("{", "[")):
        start, end = candidate.find("{"), candidate.rfind("}")
        candidate = candidate[start : end + 1] if 0 <= start < end else candidate
    try:
        return schema.model_validate_json(candidate)
    except ValidationError as exc:
        raise LLMOutputError(
            f"the reply does not match {schema.__name__}: {exc.errors()[0]['msg']}", text=text
        ) from exc


def client_from_config(config: Config | None = None) -> LLMClient:
    """The client groundwire.toml (or the environment) describes: its [llm] section (see groundwire.config)."""
    return LLMClient((load_config() if config is None else config).llm)
