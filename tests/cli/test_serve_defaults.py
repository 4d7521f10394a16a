"""`groundwire serve` builds ServiceSettings from its declared defaults (issue 46): every flag that sets a field of
ServiceSettings defaults to that field's own default, so a default is written once, in service/settings.py."""

from __future__ import annotations

import dataclasses
import inspect

from groundwire.cli.serve import serve
from groundwire.service.settings import ServiceSettings

FIELD_OF_FLAG = {"db": "db_url", "body_timeout": "body_timeout_s", "header_timeout": "header_timeout_s",
                 "time_budget": "time_budget_s", "high_risk": "high_risk_patterns", "llm": "use_llm",
                 "api_key": "api_keys"}
"""The flags named otherwise than the field they set."""


def test_every_flag_defaults_to_its_service_setting() -> None:
    defaults = {item.name: item.default for item in dataclasses.fields(ServiceSettings)
                if item.default is not dataclasses.MISSING}
    flags = inspect.signature(serve).parameters
    compared = 0
    for flag, parameter in flags.items():
        field = FIELD_OF_FLAG.get(flag, flag)
        if field not in defaults or flag in ("high_risk", "api_key", "config"):  # lists (None: none given), a path
            continue
        expected = defaults[field]
        if flag == "db":  # the flag takes a file path where the field holds its SQLAlchemy URL
            expected = expected.removeprefix("sqlite:///")
        assert parameter.default == expected, f"--{flag.replace('_', '-')}"
        compared += 1
    assert compared >= 20  # the walk saw the limits, not only a few


def test_the_audit_share_default_is_the_review_orders() -> None:
    from groundwire.evaluation.review_order import DEFAULT_AUDIT_SHARE
    from groundwire.service.settings import ServiceSettings

    defaults = {item.name: item.default for item in dataclasses.fields(ServiceSettings)}
    assert defaults["review_audit_share"] == DEFAULT_AUDIT_SHARE
