#!/usr/bin/env bash
# Builds the sandbox test image `localhost/skillbox-node:<node version>` (and `:latest`) from the
# host's own node binary and the shared libraries it links, with no registry access: these
# machines cannot pull images. Usage: build-test-image.sh [engine] (default: podman).
set -euo pipefail

engine="${1:-${SKILLBOX_IMAGE_ENGINE:-podman}}"
node_binary="$(command -v node)"
node_version="$(node -p 'process.versions.node')"
image="localhost/skillbox-node"

if "$engine" image exists "$image:$node_version" 2>/dev/null; then
  echo "$image:$node_version already exists"
  exit 0
fi

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT

copy_with_libraries() {
  local binary="$1" target="$2"
  mkdir -p "$rootfs$(dirname "$target")"
  cp -L "$binary" "$rootfs$target"
  # ldd prints "name => /path (address)" or "/path (address)" for the loader.
  ldd "$binary" | grep -o '/[^ ]*' | while read -r library; do
    mkdir -p "$rootfs$(dirname "$library")"
    cp -Ln "$library" "$rootfs$library"
  done
}

copy_with_libraries "$node_binary" /usr/local/bin/node
# A POSIX shell, so images can run shell commands (and tests can start a fork bomb).
copy_with_libraries "$(readlink -f /bin/sh)" /bin/sh
mkdir -p "$rootfs"/{tmp,workspace,etc,proc,sys,dev,skill,opt/skillbox}
chmod 1777 "$rootfs/tmp" "$rootfs/workspace"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"

tar -C "$rootfs" -c . | "$engine" import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'WORKDIR /workspace' \
  - "$image:$node_version" >/dev/null
"$engine" tag "$image:$node_version" "$image:latest"
echo "built $image:$node_version (and :latest)"
