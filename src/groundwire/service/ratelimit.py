"""Per-caller rate limiting with the `limits` library (moving window, in this process's memory).

A caller is its API key, or its client address when the service runs without keys (and for a request
whose key is missing or wrong, so guessing keys is limited too). Over the limit: 429 with Retry-After.
"""

from __future__ import annotations

import math
import time

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.service.errors import ServiceError


class RateLimiter:
    def __init__(self, spec: str) -> None:
        from limits import parse
        from limits.storage import MemoryStorage
        from limits.strategies import MovingWindowRateLimiter

        try:
            self._item = parse(spec)
        except ValueError as error:
            raise InputError(f"rate limit {spec!r} is not valid (use e.g. '60/minute' or '10/second'): {error}",
                             code=ErrorCode.INVALID_SETTINGS) \
                from None
        self.spec = spec
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, caller: str) -> None:
        """Count one request of `caller`; 429 when it is over the limit."""
        if self._limiter.hit(self._item, caller):
            return
        reset_at, _ = self._limiter.get_window_stats(self._item, caller)
        retry_after = max(1, math.ceil(reset_at - time.time()))
        raise ServiceError(ErrorCode.RATE_LIMITED, f"Too many requests: the limit is {self.spec} per API key.",
                           details={"limit": self.spec, "retry_after_s": retry_after},
                           headers={"Retry-After": str(retry_after)})


def validate_rate_limit(spec: str | None) -> None:
    """Fail at start-up on a malformed limit, not on the first request."""
    if spec is not None:
        RateLimiter(spec)
