#!/usr/bin/env bash
# Installs and configures the container engines the sandbox tests use (Debian, as root):
# podman with runc (crun refuses this host's hybrid cgroup layout), explicit ulimits (podman's
# defaults exceed the host's hard limits), bubblewrap, and the docker CLI when it is missing.
set -euo pipefail

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A drop-in, so an existing containers.conf is left as it is.
mkdir -p /etc/containers/containers.conf.d
cat >/etc/containers/containers.conf.d/50-skillbox.conf <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
CONF

podman --version
bwrap --version
docker --version
podman info --format '{{.Host.OCIRuntime.Name}}'
