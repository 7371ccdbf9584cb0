package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Search by meaning (--embeddings): the server under test gets an
// embeddings endpoint, as a user gives it one, and the questions are asked
// once every text of the memory has its vector. The project's own figures
// are measured without.

// embeddingsEnv is what the server's environment gains: with url, search
// by meaning through it (model "" leaves MEMORY_EMBEDDINGS_MODEL, and the
// key, as the caller's environment has them, for the server to read);
// without, search by meaning off whatever the caller's environment says.
func embeddingsEnv(url, model string) []string {
	if url == "" {
		return []string{"MEMORY_EMBEDDINGS_URL=", "MEMORY_EMBEDDINGS_MODEL=", "MEMORY_EMBEDDINGS_API_KEY=", "MEMORY_EMBEDDINGS_API_KEY_FILE="}
	}
	env := []string{"MEMORY_EMBEDDINGS_URL=" + url}
	if model != "" {
		env = append(env, "MEMORY_EMBEDDINGS_MODEL="+model)
	}
	return env
}

// The server's words (internal/server, internal/meaning's wiring): the
// note of a search answered by words while vectors are missing (not
// ready yet, or the endpoint not answering: waited for alike), the note
// of one whose query got no vector, and the log line of search by meaning
// turned on.
var (
	notReady      = regexp.MustCompile(`Search by meaning is (?:not ready yet|unavailable: .*) \((\d+) of (\d+) texts embedded\)`)
	byWordsOnly   = "Search by meaning is unavailable for this query"
	meaningLogged = "search by meaning: model "
)

// waitForVectors asks p the probe question until its answer no longer
// says that search by meaning is not ready, reporting the count of
// vectors as it grows, for at most timeout.
func waitForVectors(ctx context.Context, p *serverProcess, probe string, timeout time.Duration, progress func(string, ...any)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		res, err := p.search(ctx, probe)
		if err != nil {
			return err
		}
		m := notReady.FindStringSubmatch(answerText(res))
		if m == nil {
			break
		}
		if m[1] != last {
			progress("vectors: %s of %s texts", m[1], m[2])
			last = m[1]
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search by meaning was not ready after %s (%s of %s texts have a vector)%s", timeout, m[1], m[2], p.stderrNote())
		case <-time.After(250 * time.Millisecond):
		}
	}
	if !strings.Contains(p.stderr.String(), meaningLogged) {
		return fmt.Errorf("the server did not turn search by meaning on: is it this project's server?%s", p.stderrNote())
	}
	return nil
}
