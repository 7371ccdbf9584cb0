#!/usr/bin/env bash
# Builds the npm packages and the release archives as a release does, then
# tests them as a user gets them (packaging/*_test.go): the archives'
# checksums and platforms, the tarballs installed into an empty prefix with
# no registry, an MCP client driving `npx mcp-server-memory`, exit codes,
# signals and stdin EOF through the launcher, and the Docker image built
# with podman from the release binary. .ci/run runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-lib.sh

# The Docker check needs Debian's podman; CI installs it, elsewhere the test
# says it skipped.
if ! command -v podman >/dev/null 2>&1 && [ "${CI:-}" = true ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null
fi

VERSION=$(release_version)
export VERSION
commit=$(release_commit)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/package-npm.sh "$work/npm"
scripts/release.sh "$work/release"

MCP_SERVER_MEMORY_PACKAGE_VERSION="$VERSION" \
MCP_SERVER_MEMORY_PACKAGE_COMMIT="$commit" \
MCP_SERVER_MEMORY_NPM_DIR="$work/npm" \
MCP_SERVER_MEMORY_RELEASE_DIR="$work/release" \
  go test -count=1 -v ./packaging/
