package memoryconfig

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Embeddings is where search by meaning gets its vectors: an
// OpenAI-compatible embeddings endpoint (MEMORY_EMBEDDINGS_URL,
// MEMORY_EMBEDDINGS_MODEL, and a key from MEMORY_EMBEDDINGS_API_KEY or the
// file MEMORY_EMBEDDINGS_API_KEY_FILE). The zero value is off: word
// ranking only, no goroutine, no file, no network.
//
// The key is kept unexported and printed by no method, so that no log
// line or error message built from a Config can show it.
type Embeddings struct {
	// URL is the API's base URL without a trailing slash, such as
	// http://127.0.0.1:11434/v1; "" is off.
	URL string
	// Model is the model asked for.
	Model string

	key string
}

// On reports whether search by meaning is configured.
func (e Embeddings) On() bool { return e.URL != "" }

// APIKey returns the key sent as a bearer token, "" for none.
func (e Embeddings) APIKey() string { return e.key }

// String names the endpoint and model, never the key.
func (e Embeddings) String() string {
	if !e.On() {
		return "off"
	}
	return fmt.Sprintf("model %q at %s", e.Model, redactedURL(e.URL))
}

// GoString is String, so that %#v of a Config shows no key either.
func (e Embeddings) GoString() string { return e.String() }

// readEmbeddings reads the MEMORY_EMBEDDINGS_* variables. Its errors name
// the variable and the fix; they never quote a key, nor a URL's password.
func readEmbeddings(env Environment) (Embeddings, error) {
	raw := strings.TrimSpace(env.Getenv("MEMORY_EMBEDDINGS_URL"))
	model := strings.TrimSpace(env.Getenv("MEMORY_EMBEDDINGS_MODEL"))
	key := strings.TrimSpace(env.Getenv("MEMORY_EMBEDDINGS_API_KEY"))
	keyFile := strings.TrimSpace(env.Getenv("MEMORY_EMBEDDINGS_API_KEY_FILE"))
	if raw == "" {
		if model != "" || key != "" || keyFile != "" {
			return Embeddings{}, fmt.Errorf("MEMORY_EMBEDDINGS_MODEL or an API key is set but MEMORY_EMBEDDINGS_URL is not: set it to the base URL of an OpenAI-compatible API, such as http://127.0.0.1:11434/v1, or unset them")
		}
		return Embeddings{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Embeddings{}, fmt.Errorf("MEMORY_EMBEDDINGS_URL: want the http or https base URL of an OpenAI-compatible API, such as http://127.0.0.1:11434/v1")
	}
	if model == "" {
		return Embeddings{}, fmt.Errorf("MEMORY_EMBEDDINGS_MODEL is not set: name the embedding model to ask %s for, such as nomic-embed-text", redactedURL(raw))
	}
	if key != "" && keyFile != "" {
		return Embeddings{}, fmt.Errorf("both MEMORY_EMBEDDINGS_API_KEY and MEMORY_EMBEDDINGS_API_KEY_FILE are set: keep one")
	}
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return Embeddings{}, fmt.Errorf("MEMORY_EMBEDDINGS_API_KEY_FILE: cannot read the key: %v", pathError(err))
		}
		key = strings.TrimSpace(string(b))
		if key == "" {
			return Embeddings{}, fmt.Errorf("MEMORY_EMBEDDINGS_API_KEY_FILE %s is empty: put the API key in it", keyFile)
		}
	}
	return Embeddings{URL: strings.TrimRight(raw, "/"), Model: model, key: key}, nil
}

// pathError keeps only what went wrong and where from a file error.
func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// redactedURL is raw without a password in it.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}
