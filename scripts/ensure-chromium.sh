#!/usr/bin/env bash
# Installs Debian's chromium and chromedriver for the browser tests, once.
# Idempotent: does nothing when both binaries are already there. Needs root (or sudo) to install.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        echo "ensure-chromium: not root and no sudo; browser tests will be skipped" >&2
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
