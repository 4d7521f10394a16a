from __future__ import annotations

from pathlib import Path

import pytest

from groundwire.config import load_config
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import REFUSAL_TOKEN
from groundwire.llm.client import client_from_config


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(env={})
    assert config.source is None
    assert config.verify.accept_at is None and config.verify.reject_at is None  # the scorer's own thresholds
    assert not config.llm_configured
    assert config.repair.abstain_message == REFUSAL_TOKEN
    assert config.generate.strengths == ("standard", "strict", "very_strict")


def test_file_in_cwd_then_env_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "groundwire.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "small"\n[verify]\naccept_at = 0.9\n'
        '[policy]\nname = "disclaimer"\ndisclaimer_band = [0.4, 0.8]\n'
    )
    monkeypatch.chdir(tmp_path)
    env = {
        "GROUNDWIRE_LLM_MODEL": "big",
        "GROUNDWIRE_VERIFY_REJECT_AT": "0.3",
        "OPENAI_API_KEY": "sk-x",
        "GROUNDWIRE_GENERATE_STRENGTHS": "strict,very_strict",
    }
    config = load_config(env=env)
    assert config.source == str(tmp_path / "groundwire.toml")
    assert config.llm.base_url == "http://127.0.0.1:9/v1"
    assert config.llm.model == "big"
    assert config.llm.api_key is not None and config.llm.api_key.get_secret_value() == "sk-x"
    assert config.llm_configured and "sk-x" not in repr(config)
    assert (config.verify.accept_at, config.verify.reject_at) == (0.9, 0.3)
    assert config.policy.disclaimer_band == (0.4, 0.8)
    assert config.generate.strengths == ("strict", "very_strict")
    client = client_from_config(config)
    assert client.config.model == "big" and client.config.api_key is not None
    assert client.config.api_key.get_secret_value() == "sk-x" and "sk-x" not in repr(client)
    client.close()


def test_groundwire_config_env_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.toml"
    path.write_text('[repair]\nabstain_message = "The sources don\'t support a complete answer."\n')
    config = load_config(env={"GROUNDWIRE_CONFIG": str(path)})
    assert config.repair.abstain_message == "The sources don't support a complete answer."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[llm\nmodel=1", "not valid TOML"),
        ("[llm]\nmodle = 'x'\n", "modle"),
        ("[verify]\naccept_at = 0.1\nreject_at = 0.5\n", "must be below"),
        ("[policy]\ndisclaimer_band = [0.9, 0.5]\n", "disclaimer_band"),
        ("[verify]\naccept_at = 'high'\n", "accept_at"),
    ],
)
def test_bad_files_are_clear_input_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "groundwire.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_config(path, env={})


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_config(tmp_path / "nope.toml", env={})


def test_single_env_value_for_a_tuple_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(env={"GROUNDWIRE_GENERATE_STRENGTHS": "very_strict"}).generate.strengths == ("very_strict",)


def test_bad_env_value_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="max_retries"):
        load_config(env={"GROUNDWIRE_LLM_MAX_RETRIES": "many"})


def test_the_shipped_example_file_loads_and_means_what_it_says() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "groundwire.example.toml"
    config = load_config(example, env={})
    assert config.verify.scorer == "lexical" and config.llm.model == "smollm2"
    assert config.repair.abstain_message == "NOT_IN_CONTEXT"  # the example's own message is commented out
    assert config.policy.disclaimer_band == (0.5, 0.9) and config.generate.strengths[-1] == "very_strict"


def test_verify_config_is_a_deprecated_name_for_check_settings() -> None:
    import groundwire.config as config
    from groundwire import CheckSettings

    with pytest.warns(DeprecationWarning, match="CheckSettings"):
        alias = config.VerifyConfig
    assert alias is CheckSettings
    with pytest.raises(AttributeError):
        _ = config.NoSuchName  # type: ignore[attr-defined]
