#!/bin/sh
# Regenerates testdata/golden/ from the reference Node server (needs node and
# npx with access to the npm registry). The Go tests read the committed files
# and need neither.
set -eu
cd "$(dirname "$0")/.."
exec node scripts/make-golden.mjs "$@"
