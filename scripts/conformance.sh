#!/usr/bin/env bash
# conformance.sh runs the official MCP conformance suite
# (@modelcontextprotocol/conformance) against mcp-server-memory over
# Streamable HTTP, once per requirement set: 2025-11-25 (stateful, initialize
# handshake) and 2026-07-28 (stateless, per-request _meta).
#
# For each set it builds the server, starts it on a free loopback port with a
# temporary memory file, and runs the suite with the committed baseline
# conformance/expected-failures-<set>.yml. The suite itself fails the run
# when a check outside the baseline fails, or when a baselined check passes
# (a stale entry: remove it so the list stays honest). Most baselined checks
# need the suite's own fixture server (its test_* tools, prompts, sampling,
# elicitation); each entry says why.
#
# Needs Go and npx (Node >= 18; the suite itself runs on the node@22 that npx
# fetches). Usage:
#   scripts/conformance.sh [--keep] [2025-11-25|2026-07-28 ...]
# --keep leaves the work directory (results, server logs) in place.
# CONFORMANCE_VERSION overrides the pinned suite version.
set -euo pipefail

CONFORMANCE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
repo="$(cd "$(dirname "$0")/.." && pwd)"

keep=0
sets=()
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    2025-11-25 | 2026-07-28) sets+=("$arg") ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "conformance.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
[ ${#sets[@]} -gt 0 ] || sets=(2025-11-25 2026-07-28)

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-memory-conformance.XXXXXX")"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  if [ "$keep" = 1 ]; then echo "Work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "Building mcp-server-memory..."
(cd "$repo" && go build -o "$work/mcp-server-memory" ./cmd/mcp-server-memory)

# start_server SET: starts the server on a free loopback port (the kernel
# picks it: --http 127.0.0.1:0) and sets url from the address it logs.
start_server() {
  local log="$work/server-$1.log"
  MEMORY_FILE_PATH="$work/memory-$1.jsonl" "$work/mcp-server-memory" --http 127.0.0.1:0 2>"$log" &
  server_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n 1 || true)"
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "The server did not start; its log:" >&2
  cat "$log" >&2
  exit 1
}

# count_js RESULTS_DIR BASELINE prints one line of pass counts: scenarios
# that pass outright, scenarios failing only baselined checks, and checks.
count_js='
  const fs = require("fs"), path = require("path");
  const [dir, baselineFile] = process.argv.slice(1);
  const baseline = new Set(fs.readFileSync(baselineFile, "utf8").split("\n")
    .map(l => (l.match(/^\s*-\s*([^\s#]+)/) || [])[1]).filter(Boolean));
  let clean = 0, expected = 0, unexpected = 0, passed = 0, failed = 0;
  for (const d of fs.readdirSync(dir)) {
    const f = path.join(dir, d, "checks.json");
    if (!fs.existsSync(f)) continue;
    const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const checks = JSON.parse(fs.readFileSync(f, "utf8"));
    const bad = checks.filter(c => c.status === "FAILURE" || c.status === "WARNING");
    passed += checks.filter(c => c.status === "SUCCESS").length;
    failed += bad.length;
    if (bad.length === 0) clean++;
    else if (baseline.has(scenario) || bad.every(c => baseline.has(scenario + ":" + c.id))) expected++;
    else unexpected++;
  }
  console.log(`${clean + expected + unexpected} scenarios: ${clean} pass, ${expected} fail only baselined checks, ${unexpected} fail otherwise; checks: ${passed} passed, ${failed} failed or warned`);
'

status=0
summary=()
for set in "${sets[@]}"; do
  baseline="$repo/conformance/expected-failures-$set.yml"
  start_server "$set"
  echo
  echo "=== Requirement set $set against $url ==="
  rc=0
  (cd "$work" && npx -y -p node@22 -p "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    conformance server --url "$url" --requirements "$set" \
    --expected-failures "$baseline" -o "$work/results-$set") >"$work/suite-$set.txt" 2>&1 || rc=$?
  stop_server
  # The suite's own report: per-scenario summary, baseline verdict.
  sed -n '/=== SUMMARY ===/,$p' "$work/suite-$set.txt"
  if ! grep -q '=== SUMMARY ===' "$work/suite-$set.txt"; then
    tail -n 40 "$work/suite-$set.txt"
  fi
  # Pass counts, by scenario and by check, from the results on disk.
  counts="$(node -e "$count_js" "$work/results-$set" "$baseline" 2>/dev/null || echo "no results")"
  verdict="ok (every failure is in the baseline)"
  if [ "$rc" -ne 0 ]; then
    verdict="FAILED (exit $rc: unexpected failure or stale baseline entry; see above)"
    status=1
  fi
  summary+=("$set: $counts; $verdict")
done

echo
echo "=== Conformance summary (suite $CONFORMANCE_VERSION) ==="
printf '%s\n' "${summary[@]}"
exit "$status"
