#!/usr/bin/env bash
# Builds the six release binaries and writes the npm packages into OUTDIR:
# the launcher @kgmemory/server-memory and one package per platform,
# @kgmemory/server-memory-<os>-<cpu>, as .tgz files ready for `npm publish`,
# each with the LICENSE (npm packs a LICENSE file whatever "files" says).
# Needs only Go and npm. The version comes from scripts/release-lib.sh
# (VERSION=1.2.0, else the v* tag on HEAD, else a development version).
#
#   scripts/package-npm.sh OUTDIR
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/package-npm.sh OUTDIR" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
. scripts/release-lib.sh

version=$(release_version)
commit=$(release_commit)
launcher=packaging/npm/server-memory
name=$(node -p "require('./$launcher/package.json').name")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

platforms=()
for p in $PLATFORMS; do
  goos=${p%%/*}; rest=${p#*/}; goarch=${rest%%:*}; npmplatform=${p#*:}
  os=${npmplatform%-*}; cpu=${npmplatform#*-}
  dir="$stage/$npmplatform"
  mkdir -p "$dir/bin"
  build_binary "$goos" "$goarch" "$dir/bin/$(exe_name "$goos")" "$version" "$commit"
  cat >"$dir/package.json" <<JSON
{
  "name": "$name-$npmplatform",
  "version": "$version",
  "description": "The $os $cpu binary of $name; install $name, which chooses it.",
  "license": "MIT",
  "homepage": "https://github.com/kgmemory/mcp-server-memory#readme",
  "repository": {
    "type": "git",
    "url": "git+https://github.com/kgmemory/mcp-server-memory.git"
  },
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$(exe_name "$goos")"],
  "publishConfig": { "access": "public" },
  "preferUnplugged": true
}
JSON
  cat >"$dir/README.md" <<MD
# $name-$npmplatform

The \`mcp-server-memory\` binary for $os $cpu (Go: $goos/$goarch), version
$version. Install [\`$name\`](https://www.npmjs.com/package/$name) instead:
it depends on this package where it fits and runs the binary.
MD
  cp LICENSE "$dir/"
  platforms+=("$name-$npmplatform")
done

# The launcher: its version and its optional dependencies, one per platform,
# all at this version.
mkdir -p "$stage/launcher"
cp -R "$launcher/." "$stage/launcher/"
cp LICENSE "$stage/launcher/"
node - "$stage/launcher/package.json" "$version" "${platforms[@]}" <<'JS'
const fs = require('node:fs');
const [file, version, ...platforms] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
pkg.version = version;
pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [p, version]));
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
JS

for dir in "$stage"/*/; do
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done
echo "wrote $name $version (commit $commit) to $out:"
(cd "$out" && ls -1 ./*"-$version.tgz" | sed 's|^\./|  |')
