//go:build !windows

package cli

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

func init() { runTests = pgtest.Main }

// TestDatabaseScripts runs testdata/pgscript/*.txtar with MEMORY_DATABASE_URL
// set to a test database (with a password where the test chose it: $SECRET,
// which no output may show): $MEMORY names a memory no other script uses, and
// MEMORY_FILE_PATH a file in the work directory, which the commands must
// not touch.
func TestDatabaseScripts(t *testing.T) {
	url, secret := pgtest.URLWithPassword(t, "cli-password-not-for-output")
	if secret == "" {
		secret = "none"
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/pgscript",
		Setup: func(env *testscript.Env) error {
			env.Setenv("MEMORY_DATABASE_URL", url)
			env.Setenv("PGURL", url)
			env.Setenv("SECRET", secret)
			env.Setenv("MEMORY", pgtest.MemoryName(t))
			env.Setenv("OTHER", pgtest.MemoryName(t))
			env.Setenv("THIRD", pgtest.MemoryName(t))
			env.Setenv("FOURTH", pgtest.MemoryName(t))
			env.Setenv("MEMORY_FILE_PATH", filepath.Join(env.WorkDir, "memory.jsonl"))
			env.Values["embedder"] = &embedderState{}
			return copyReference(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"cmptimes": cmpTimes, "embedder": embedder},
	})
}
