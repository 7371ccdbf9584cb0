package meaning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Client asks an OpenAI-compatible API for embeddings: POST
// {base}/embeddings with {"model": ..., "input": [...]}, answered with
// {"data": [{"embedding": [...], "index": i}, ...]}. Its errors never
// hold the API key.
type Client struct {
	url, model, key string
	origin          string // scheme://host:port of url: redirects go nowhere else
	http            *http.Client
}

// NewClient returns a client of the API at base (such as
// http://127.0.0.1:11434/v1) for model; key, when not "", is sent as a
// bearer token.
func NewClient(base, model, key string) *Client {
	c := &Client{url: strings.TrimRight(base, "/") + "/embeddings", model: model, key: key}
	c.http = &http.Client{CheckRedirect: c.sameOrigin}
	if u, err := url.Parse(c.url); err == nil {
		c.origin = u.Scheme + "://" + u.Host
	}
	return c
}

// sameOrigin follows a redirect only to the configured origin (scheme,
// host and port): the key and the memory's texts go nowhere else.
func (c *Client) sameOrigin(req *http.Request, via []*http.Request) error {
	if to := req.URL.Scheme + "://" + req.URL.Host; to != c.origin {
		return &redirectError{to: to}
	}
	if len(via) >= 5 {
		return errors.New("the embeddings endpoint redirected 5 times")
	}
	return nil
}

// redirectError is a redirect away from the configured origin, not
// followed.
type redirectError struct{ to string }

func (e *redirectError) Error() string {
	return fmt.Sprintf("the embeddings endpoint redirected to %s, another origin: not followed, so that neither the key nor the texts go there (set MEMORY_EMBEDDINGS_URL to the endpoint itself)", e.to)
}

// Endpoint is the API's base URL, without any user or password it holds.
func (c *Client) Endpoint() string {
	base := strings.TrimSuffix(c.url, "/embeddings")
	u, err := url.Parse(base)
	if err != nil {
		return c.origin
	}
	u.User = nil
	return c.redact(u.String())
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// maxAnswer bounds the bytes read of an answer for n texts: each vector
// of maxDims dimensions written as long decimals (24 bytes a number),
// and 64 KiB for the rest. A query's answer is bounded by under 0.5 MiB.
func maxAnswer(n int) int64 { return 64<<10 + int64(n)*maxDims*24 }

// maxMessage is how much of an endpoint's error message is passed on.
const maxMessage = 300

// Embed returns one vector per text, in order. The context bounds the
// whole exchange. An error says what the endpoint did (unreachable, an
// error status and its message, or an answer that is not one vector per
// text of one length).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{c.model, texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, c.hide(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var re *redirectError
		switch {
		case errors.As(err, &re):
			return nil, c.hide(re)
		case errors.Is(err, context.DeadlineExceeded):
			return nil, fmt.Errorf("the embeddings endpoint did not answer in time")
		}
		return nil, c.hide(err)
	}
	defer resp.Body.Close()
	limit := maxAnswer(len(texts))
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return nil, fmt.Errorf("the embeddings endpoint did not answer in time")
	case err != nil:
		return nil, c.hide(fmt.Errorf("reading the embeddings endpoint's answer: %w", err))
	case int64(len(data)) > limit:
		return nil, fmt.Errorf("the embeddings endpoint answered badly: more than %d KiB for %d texts", limit>>10, len(texts))
	case resp.StatusCode != http.StatusOK:
		return nil, c.statusError(resp.Status, data)
	}
	return decode(data, len(texts))
}

// statusError says what an endpoint answering an error status said: its
// message, the key taken out before it is cut to maxMessage bytes, so no
// part of the key is passed on.
func (c *Client) statusError(status string, data []byte) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(data, &e) == nil {
		msg = c.redact(e.Error.Message)
	}
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	if msg == "" {
		return fmt.Errorf("the embeddings endpoint answered %s", status)
	}
	return fmt.Errorf("the embeddings endpoint answered %s: %s", status, msg)
}

// decode checks an answer: one vector per text, each index once, all of
// one length, finite.
func decode(data []byte, n int) ([][]float32, error) {
	var ans struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
			Index     *int      `json:"index"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, fmt.Errorf("the embeddings endpoint answered badly: %v", err)
	}
	if len(ans.Data) != n {
		return nil, fmt.Errorf("the embeddings endpoint answered badly: %d vectors for %d texts", len(ans.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range ans.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out[at] != nil {
			return nil, fmt.Errorf("the embeddings endpoint answered badly: index %d out of place", at)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) > maxDims || len(d.Embedding) != len(ans.Data[0].Embedding) {
			return nil, fmt.Errorf("the embeddings endpoint answered badly: vectors of %d and %d dimensions", len(d.Embedding), len(ans.Data[0].Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("the embeddings endpoint answered badly: a vector holds %v", x)
			}
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// hide takes the key out of err's text: some APIs quote the key they
// refused.
func (c *Client) hide(err error) error {
	if s := c.redact(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}

// minQuoted is the shortest part of the key redact takes out: an API may
// quote the key's start only.
const minQuoted = 8

// redact takes the key out of s, and any part of its start of minQuoted
// bytes or more.
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	s = strings.ReplaceAll(s, c.key, "[the API key]")
	start := c.key[:min(len(c.key), minQuoted)]
	var b strings.Builder
	for {
		i := strings.Index(s, start)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		n := len(start)
		for i+n < len(s) && n < len(c.key) && s[i+n] == c.key[n] {
			n++
		}
		b.WriteString(s[:i])
		b.WriteString("[the API key]")
		s = s[i+n:]
	}
}
