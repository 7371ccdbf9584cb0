#!/usr/bin/env bash
# Builds the npm packages and the release archives with docs/install.md's
# commands for a clone (scripts/readme-from-a-clone.sh, which also runs the
# server they install), then tests them as a user gets them
# (packaging/*_test.go): the archives' checksums, platforms, licence and
# documents, the tarballs installed into an empty prefix with no registry,
# an MCP client driving `npx mcp-server-memory`, exit codes, signals and
# stdin EOF through the launcher, and the Docker image built with podman
# from the release binary. .ci/run runs it.
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The commands for a clone (docs/install.md) build the packages and archives, in a
# copy of this checkout, and the server they install answers; the tests
# below then check what those commands made.
scripts/readme-from-a-clone.sh "$work/clone"
commit=$(cd "$work/clone" && release_commit)

MCP_SERVER_MEMORY_PACKAGE_VERSION="$VERSION" \
MCP_SERVER_MEMORY_PACKAGE_COMMIT="$commit" \
MCP_SERVER_MEMORY_NPM_DIR="$work/clone/dist/npm" \
MCP_SERVER_MEMORY_RELEASE_DIR="$work/clone/dist/release" \
  go test -count=1 -v ./packaging/
