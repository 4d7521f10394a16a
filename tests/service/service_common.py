"""Shared constants of the service tests (a plain module: `from service_common import ...` is ambiguous across suites)."""

KEYS = {"key-alpha": "alpha", "key-beta": "beta", "key-gamma": "gamma"}
ALPHA = {"Authorization": "Bearer key-alpha"}
BETA = {"X-API-Key": "key-beta"}
