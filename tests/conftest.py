"""Suite-wide settings.

Property tests explore new random examples on a developer's machine; on CI (`.ci/run` sets
HYPOTHESIS_PROFILE=ci) they replay a fixed set, so a landing never fails on an example nobody has seen. A
failure found locally is fixed, and hypothesis's database replays it until it is.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
