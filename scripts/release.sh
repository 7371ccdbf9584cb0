#!/usr/bin/env bash
# Builds the release archives for the six platforms into OUTDIR:
# mcp-server-memory_<version>_<os>_<arch>.tar.gz (.zip for Windows), each
# holding the static binary, README.md, LICENSE and docs/ (which README.md
# links to), and SHA256SUMS over them. The version comes from
# scripts/release-lib.sh (VERSION=1.2.0, else the v* tag on HEAD, else a
# development version). Needs Go, GNU tar, gzip, zip and sha256sum (a Linux
# CI machine has them all).
#
#   scripts/release.sh OUTDIR
#
# A script rather than GoReleaser: this is six `go build`s, six archives and
# a checksum file, while `go run` of GoReleaser v2.15.1 first downloads and
# compiles its ~370 module dependencies.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/release.sh OUTDIR" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
. scripts/release-lib.sh

version=$(release_version)
commit=$(release_commit)
# Archive entries carry the commit's time, so a rebuild of one commit gives
# the same bytes.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

archives=()
for p in $PLATFORMS; do
  goos=${p%%/*}; rest=${p#*/}; goarch=${rest%%:*}
  base="mcp-server-memory_${version}_${goos}_${goarch}"
  dir="$stage/$base"
  mkdir -p "$dir"
  build_binary "$goos" "$goarch" "$dir/$(exe_name "$goos")" "$version" "$commit"
  cp README.md LICENSE "$dir/"
  cp -R docs "$dir/docs"
  find "$dir" -exec touch -d "@$epoch" {} +
  if [ "$goos" = windows ]; then
    rm -f "$out/$base.zip"
    (cd "$stage" && zip -q -X -r "$out/$base.zip" "$base")
    archives+=("$base.zip")
  else
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$base" \
      | gzip -n -9 >"$out/$base.tar.gz"
    archives+=("$base.tar.gz")
  fi
done
(cd "$out" && sha256sum "${archives[@]}" >SHA256SUMS)
echo "wrote mcp-server-memory $version (commit $commit) to $out:"
sed 's/^/  /' "$out/SHA256SUMS"
