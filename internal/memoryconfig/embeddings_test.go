package memoryconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

const secretKey = "sk-secret-4242"

// TestEmbeddingsOffByDefault: with no MEMORY_EMBEDDINGS_* variable search
// by meaning is off, with no error.
func TestEmbeddingsOffByDefault(t *testing.T) {
	c := memoryconfig.Read(memoryconfig.Vars{})
	if c.Embeddings.On() || c.Err() != nil {
		t.Fatalf("Embeddings %v, Err %v; want off and no error", c.Embeddings, c.Err())
	}
}

// TestEmbeddingsRead: the URL loses its trailing slash, the key comes from
// the variable or the file.
func TestEmbeddingsRead(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(secretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, vars := range []memoryconfig.Vars{
		{"MEMORY_EMBEDDINGS_URL": "http://127.0.0.1:11434/v1/", "MEMORY_EMBEDDINGS_MODEL": "m", "MEMORY_EMBEDDINGS_API_KEY": secretKey},
		{"MEMORY_EMBEDDINGS_URL": "http://127.0.0.1:11434/v1", "MEMORY_EMBEDDINGS_MODEL": "m", "MEMORY_EMBEDDINGS_API_KEY_FILE": keyFile},
	} {
		c := memoryconfig.Read(vars)
		if err := c.Err(); err != nil {
			t.Fatalf("%v: %v", vars, err)
		}
		e := c.Embeddings
		if !e.On() || e.URL != "http://127.0.0.1:11434/v1" || e.Model != "m" || e.APIKey() != secretKey {
			t.Errorf("%v: got URL %q model %q key ok %t", vars, e.URL, e.Model, e.APIKey() == secretKey)
		}
		for _, shown := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), e.String()} {
			if strings.Contains(shown, secretKey) {
				t.Errorf("the key shows in %q", shown)
			}
		}
	}
}

// TestEmbeddingsErrorsNeverShowTheKey: every malformed setting names the
// variable to change, and no message shows the key or a URL's password.
func TestEmbeddingsErrorsNeverShowTheKey(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		vars memoryconfig.Vars
		want string
	}{
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_API_KEY": secretKey}, "MEMORY_EMBEDDINGS_URL is not"},
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": "ftp://x/" + secretKey, "MEMORY_EMBEDDINGS_MODEL": "m"}, "MEMORY_EMBEDDINGS_URL: want"},
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": "http://u:" + secretKey + "@h/v1"}, "MEMORY_EMBEDDINGS_MODEL is not set"},
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": "http://h/v1", "MEMORY_EMBEDDINGS_MODEL": "m", "MEMORY_EMBEDDINGS_API_KEY": secretKey, "MEMORY_EMBEDDINGS_API_KEY_FILE": empty}, "keep one"},
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": "http://h/v1", "MEMORY_EMBEDDINGS_MODEL": "m", "MEMORY_EMBEDDINGS_API_KEY_FILE": empty}, "is empty"},
		{memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": "http://h/v1", "MEMORY_EMBEDDINGS_MODEL": "m", "MEMORY_EMBEDDINGS_API_KEY_FILE": filepath.Join(dir, "missing")}, "cannot read the key"},
	} {
		err := memoryconfig.Read(tc.vars).Err()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.vars, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secretKey) {
			t.Errorf("%v: the error shows the key: %v", tc.vars, err)
		}
	}
}
