#!/usr/bin/env bash
# Installs Debian's Chromium for the browser built-ins (plugins/browser drive it with
# playwright-core at /usr/bin/chromium): these machines cannot download Playwright's own browsers.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
# Its wrapper script prints a shell warning on some hosts; only the version line matters here.
chromium --version 2>/dev/null
