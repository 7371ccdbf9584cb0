# Shared by scripts/package-npm.sh and scripts/release.sh (sourced, not run):
# the six platforms, the release version and commit, and the one way a
# release binary is built.

# Go's GOOS/GOARCH and npm's process.platform-process.arch for each platform.
PLATFORMS="linux/amd64:linux-x64 linux/arm64:linux-arm64 darwin/amd64:darwin-x64 darwin/arm64:darwin-arm64 windows/amd64:win32-x64 windows/arm64:win32-arm64"

# release_version prints the release version, the one place every package
# and binary takes its version from: $VERSION if set (a leading v is
# dropped), else the v* tag on HEAD, else 0.0.0-dev.g<commit> (a development
# build). It must be a semantic version, as npm requires.
release_version() {
  local v="${VERSION:-}"
  if [ -z "$v" ]; then
    v=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null || true)
  fi
  if [ -z "$v" ]; then
    local c
    c=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
    v="0.0.0-dev${c:+.g$c}"
  fi
  v="${v#v}"
  if ! [[ "$v" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
    echo "release version \"$v\" is not a semantic version such as 1.2.0 or 1.2.0-rc.1" >&2
    return 1
  fi
  echo "$v"
}

# release_commit prints the commit being built, with -dirty when tracked
# files differ from it, or "unknown" outside a git checkout.
release_commit() {
  local c
  c=$(git rev-parse HEAD 2>/dev/null) || { echo unknown; return; }
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    c="$c-dirty"
  fi
  echo "$c"
}

# build_binary GOOS GOARCH OUTFILE VERSION COMMIT builds a static, stripped,
# reproducible server binary (no cgo, so no libc; no local paths inside).
build_binary() {
  CGO_ENABLED=0 GOOS="$1" GOARCH="$2" go build -trimpath \
    -ldflags "-s -w -X main.releaseVersion=$4 -X main.releaseCommit=$5" \
    -o "$3" ./cmd/mcp-server-memory
}

# exe_name GOOS prints the binary's file name on that system.
exe_name() {
  if [ "$1" = windows ]; then echo mcp-server-memory.exe; else echo mcp-server-memory; fi
}
