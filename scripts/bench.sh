#!/usr/bin/env bash
# bench.sh runs cmd/memory-bench: this repository's server against the Node
# reference server (npx installs it on first use; that run is not timed), on
# generated graphs of 1k and 10k entities unless --sizes says otherwise. Any
# flags are passed on, e.g. scripts/bench.sh --sizes 1000,10000,100000 --markdown
#
# REFERENCE_VERSION picks the reference release (default 2026.8.31).
set -euo pipefail
cd "$(dirname "$0")/.."

version="${REFERENCE_VERSION:-2026.8.31}"
exec go run ./cmd/memory-bench --vs "npx -y @modelcontextprotocol/server-memory@${version}" "$@"
