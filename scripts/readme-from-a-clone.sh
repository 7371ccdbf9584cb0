#!/usr/bin/env bash
# Runs the install commands for a clone (docs/install.md, "From a clone"),
# as written, in a copy of
# this checkout at DIR (a git clone of HEAD with the working tree's changes
# on top), then drives what they built as an MCP client would: the binary
# of "The two commands", and the launcher the npm tarballs installed
# globally, found on PATH as the README says.
# npm works offline with its own cache, prefix and configuration, so a
# command that needs a registry fails. What the commands leave in DIR/dist
# (the npm tarballs and the release archives) is what
# scripts/test-packaging.sh then tests.
#
#   scripts/readme-from-a-clone.sh DIR
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/readme-from-a-clone.sh DIR" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
  echo "$dir is not empty" >&2
  exit 2
fi

# The copy: HEAD's history, the working tree's files (tracked and new,
# ignored ones left out), so that uncommitted changes are tested too.
git clone -q --no-checkout "$repo" "$dir"
dir=$(cd "$dir" && pwd)
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) |
  while IFS= read -r -d '' f; do
    if [ -e "$repo/$f" ]; then printf '%s\0' "$f"; fi
  done |
  tar -C "$repo" --null -T - -cf - | tar -C "$dir" -xf -
git -C "$dir" reset -q

# blocks FILE HEADING prints the ```sh blocks of FILE's section (FILE
# relative to the copy) with that heading (up to the next heading of the same or a higher level), each
# followed by a NUL.
blocks() {
  awk -v want="$2" '
    /^#+ / {
      level = index($0, " ") - 1
      if (substr($0, level + 2) == want) { on = 1; top = level; next }
      if (on && level <= top) { on = 0 }
    }
    on && /^```sh$/ { inblock = 1; next }
    inblock && /^```$/ { inblock = 0; printf "%c", 0; next }
    inblock { print }
  ' "$dir/$1"
}

# npm as a user's, but with no registry: a global prefix, a cache and a
# configuration of its own in DIR.
export npm_config_prefix="$dir/.npm-global"
export npm_config_cache="$dir/.npm-cache"
export npm_config_userconfig="$dir/.npmrc-empty"
export npm_config_registry="http://127.0.0.1:9/"
export npm_config_offline=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export PATH="$npm_config_prefix/bin:$PATH"
unset MEMORY_FILE_PATH NODE_OPTIONS
: >"$npm_config_userconfig"

n=0
while IFS= read -r -d '' block; do
  n=$((n + 1))
  echo "--- docs/install.md, From a clone, block $n:"
  echo "$block"
  (cd "$dir" && bash -euo pipefail -c "$block")
done < <(blocks docs/install.md "From a clone")
if [ "$n" -lt 3 ]; then
  echo "found $n sh blocks under docs/install.md's \"From a clone\", want the binary, the npm packages and the archives" >&2
  exit 1
fi

# session SERVER-COMMAND: an MCP session over stdio that creates an entity,
# then closes stdin; the server must answer, save and exit 0.
session() {
  local memory="$dir/session-$RANDOM.jsonl" out
  out=$(cd "$dir" && MEMORY_FILE_PATH="$memory" bash -euo pipefail -c "$1" <<'JSONRPC'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"Alice","entityType":"person","observations":["installed from a clone"]}]}}}
JSONRPC
  )
  if ! grep -q '"id":2' <<<"$out" || grep -q '"isError":true' <<<"$out"; then
    echo "$1: the create_entities call was not answered, or failed:" >&2
    echo "$out" >&2
    exit 1
  fi
  if ! grep -q '"name":"Alice".*"installed from a clone"' "$memory"; then
    echo "$1: the memory file holds no Alice:" >&2
    cat "$memory" >&2
    exit 1
  fi
  echo "--- $1: answered and saved"
}

# The README's command that runs the server, and the globally installed
# launcher.
run=$(blocks README.md "The two commands" | tr '\0' '\n' | grep -m1 'go build')
if [ -z "$run" ]; then
  echo "the README's \"The two commands\" has no go build command" >&2
  exit 1
fi
session "$run"
if [ "$(command -v mcp-server-memory)" != "$npm_config_prefix/bin/mcp-server-memory" ]; then
  echo "mcp-server-memory on PATH is $(command -v mcp-server-memory), not the one npm installed" >&2
  exit 1
fi
session "mcp-server-memory"
