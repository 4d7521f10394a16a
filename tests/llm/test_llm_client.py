from __future__ import annotations

import math

import pytest
from pydantic import BaseModel
from scripted_llm import Reply, ScriptedLLMServer

from groundwire.config import LLMConfig
from groundwire.llm.client import LLMClient, LLMHTTPError, LLMOutputError, LLMTimeout, parse_json_reply

MESSAGES = [{"role": "user", "content": "hello there"}]


class Answer(BaseModel):
    value: int


def test_chat_returns_text_tokens_and_logs_the_call(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script("General Kenobi")
    completion = client.chat(MESSAGES, purpose="greeting")
    assert completion.text == "General Kenobi"
    assert completion.completion_tokens == 2 and completion.prompt_tokens == 2
    assert completion.attempts == 1
    assert [call.purpose for call in client.calls] == ["greeting"]
    assert client.calls[0].ok and client.calls[0].latency_s > 0
    sent = scripted_llm.requests[0]
    assert sent["_path"] == "/v1/chat/completions"
    assert sent["model"] == "scripted" and sent["messages"] == MESSAGES


def test_api_key_is_sent_as_bearer(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script("ok")
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", api_key="sk-test")) as llm:
        llm.chat(MESSAGES)
    assert scripted_llm.requests[0]["_authorization"] == "Bearer sk-test"


def test_429_then_success_is_retried(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(Reply(status=429, raw_body='{"error": "slow down"}'), Reply(status=503, raw_body="{}"), "fine")
    completion = client.chat(MESSAGES)
    assert completion.text == "fine"
    assert completion.attempts == 3
    assert len(scripted_llm.requests) == 3


def test_retry_after_header_is_honoured_within_the_cap(scripted_llm: ScriptedLLMServer) -> None:
    waits: list[float] = []
    scripted_llm.script(Reply(status=429, raw_body="{}", headers={"retry-after": "0.02"}), "ok")
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", backoff_s=5.0), sleep=waits.append) as llm:
        assert llm.chat(MESSAGES).text == "ok"
    assert waits == [0.02]


def test_backoff_doubles_and_gives_up_with_the_status(scripted_llm: ScriptedLLMServer) -> None:
    waits: list[float] = []
    scripted_llm.script(*[Reply(status=500, raw_body="{}")] * 4)
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", max_retries=3, backoff_s=0.1), sleep=waits.append) as llm:
        with pytest.raises(LLMHTTPError) as raised:
            llm.chat(MESSAGES)
    assert raised.value.status == 500
    assert "gave up after 4 attempts" in str(raised.value)
    assert waits == [0.1, 0.2, 0.4]
    assert llm.calls[-1].ok is False and llm.calls[-1].attempts == 4 and "HTTP 500" in llm.calls[-1].error


def test_client_errors_are_not_retried(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(Reply(status=404, raw_body='{"error": "model not found"}'), "never sent")
    with pytest.raises(LLMHTTPError, match="404"):
        client.chat(MESSAGES)
    assert len(scripted_llm.requests) == 1


def test_timeout_is_retried_then_raised(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script(Reply(content="late", delay_s=0.6), Reply(content="late", delay_s=0.6))
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", timeout_s=0.1, max_retries=1, backoff_s=0.0)) as llm:
        with pytest.raises(LLMTimeout, match="no reply within"):
            llm.chat(MESSAGES)
    assert scripted_llm.wait_for_requests(2) == 2


def test_timeout_then_success(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script(Reply(content="late", delay_s=0.6), "on time")
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", timeout_s=0.2, max_retries=1, backoff_s=0.0)) as llm:
        assert llm.chat(MESSAGES).text == "on time"


def test_unreachable_server_says_so() -> None:
    with ScriptedLLMServer() as server:
        url = server.url
    with LLMClient(LLMConfig(base_url=url, model="m", max_retries=0, timeout_s=0.5, connect_timeout_s=0.5)) as llm:
        with pytest.raises(Exception, match="cannot reach|no reply"):
            llm.chat(MESSAGES)


def test_json_mode_validates_against_schema(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script('```json\n{"value": 42}\n```')
    parsed, completion = client.chat_json(MESSAGES, Answer)
    assert parsed.value == 42
    assert scripted_llm.requests[0]["response_format"] == {"type": "json_object"}
    assert completion.attempts == 1


def test_json_schema_and_none_modes(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script('{"value": 1}', '{"value": 2}')
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", json_mode="json_schema")) as llm:
        assert llm.chat_json(MESSAGES, Answer)[0].value == 1
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", json_mode="none")) as llm:
        assert llm.chat_json(MESSAGES, Answer)[0].value == 2
    schema_format, none_request = scripted_llm.requests[0]["response_format"], scripted_llm.requests[1]
    assert schema_format["type"] == "json_schema" and schema_format["json_schema"]["name"] == "Answer"
    assert schema_format["json_schema"]["schema"]["properties"]["value"]["type"] == "integer"
    assert "response_format" not in none_request


def test_json_object_schema_mode_puts_the_schema_inside_json_object(scripted_llm: ScriptedLLMServer) -> None:
    # llama-cpp-python's server takes only "text" and "json_object" (HTTP 500 on json_schema); its schema rides
    # inside the json_object format.
    scripted_llm.script('{"value": 3}')
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", json_mode="json_object_schema")) as llm:
        assert llm.chat_json(MESSAGES, Answer)[0].value == 3
    response_format = scripted_llm.requests[0]["response_format"]
    assert response_format["type"] == "json_object"
    assert response_format["schema"]["properties"]["value"]["type"] == "integer"


@pytest.mark.parametrize("reply", ['{"value": "forty"}', '{"value": 4', "I think the value is 42.", ""])
def test_malformed_json_raises_output_error_with_the_text(
    scripted_llm: ScriptedLLMServer, client: LLMClient, reply: str
) -> None:
    scripted_llm.script(reply)
    with pytest.raises(LLMOutputError) as raised:
        client.chat_json(MESSAGES, Answer)
    assert raised.value.text == reply


def test_non_chat_body_is_an_output_error(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(Reply(raw_body='{"data": []}'), Reply(raw_body="<html>oops</html>"))
    with pytest.raises(LLMOutputError, match="choices"):
        client.chat(MESSAGES)
    with pytest.raises(LLMOutputError, match="not JSON"):
        client.chat(MESSAGES)


def test_logprobs_are_read_when_returned(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(Reply(content="Paris is", logprobs=[("Paris", -0.01), (" is", math.log(0.2))]), "no logprobs")
    first = client.chat(MESSAGES, logprobs=True)
    assert scripted_llm.requests[0]["logprobs"] is True
    assert first.logprobs is not None and [t.token for t in first.logprobs] == ["Paris", " is"]
    assert first.logprobs[1].prob == pytest.approx(0.2)
    assert client.chat(MESSAGES).logprobs is None


def test_prose_around_json_is_tolerated_but_not_repaired() -> None:
    assert parse_json_reply('Sure! {"value": 3} Hope that helps.', Answer).value == 3
    with pytest.raises(LLMOutputError):
        parse_json_reply("{'value': 3}", Answer)
