"""Headless Debian chromium for the browser tests (selenium + chromedriver), with the flags this machine needs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FOUND = Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()
MISSING = "Debian chromium + chromedriver not found: run scripts/ensure-chromium.sh (as root; make test does)"
# Skipped on a developer's machine without them; on CI (`make test` installs them) a missing browser fails the test.
needs_chromium = pytest.mark.skipif(not FOUND and not os.environ.get("CI"), reason=MISSING)


def start_chromium(profile: Path, *, window: str = "1400,1000") -> Any:
    """A headless chromium WebDriver; quit() it when done."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not FOUND:
        pytest.fail(MISSING)

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # No sandbox as root, and no background traffic to a closed network.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--window-size={window}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
