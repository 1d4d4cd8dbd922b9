#!/usr/bin/env bash
# The distributed tests start their own redis-server and a throwaway PostgreSQL cluster on
# loopback ports (test/helpers/redis-server.ts, postgres-cluster.ts): install both from Debian's
# packages when missing. Neither is left running as a service.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# A package install may start the services; the tests want their own on their own ports.
if command -v service >/dev/null 2>&1; then
  service redis-server stop >/dev/null 2>&1 || true
  service postgresql stop >/dev/null 2>&1 || true
fi
redis-server --version
ls /usr/lib/postgresql/*/bin/postgres
