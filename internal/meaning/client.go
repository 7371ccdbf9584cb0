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
	"strings"
)

// Client asks an OpenAI-compatible API for embeddings: POST
// {base}/embeddings with {"model": ..., "input": [...]}, answered with
// {"data": [{"embedding": [...], "index": i}, ...]}. Its errors never
// hold the API key.
type Client struct {
	url, model, key string
	http            *http.Client
}

// NewClient returns a client of the API at base (such as
// http://127.0.0.1:11434/v1) for model; key, when not "", is sent as a
// bearer token.
func NewClient(base, model, key string) *Client {
	return &Client{url: strings.TrimRight(base, "/") + "/embeddings", model: model, key: key, http: &http.Client{}}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// maxAnswer bounds the bytes read of one answer: 256 texts of 4096
// dimensions written as long decimals fit well within it.
const maxAnswer = 64 << 20

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
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("the embeddings endpoint did not answer in time")
		}
		return nil, c.hide(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, c.hide(fmt.Errorf("reading the embeddings endpoint's answer: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := ""
		if json.Unmarshal(data, &e) == nil {
			msg = e.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		if msg == "" {
			return nil, fmt.Errorf("the embeddings endpoint answered %s", resp.Status)
		}
		return nil, c.hide(fmt.Errorf("the embeddings endpoint answered %s: %s", resp.Status, msg))
	}
	return decode(data, len(texts))
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
	if c.key == "" || !strings.Contains(err.Error(), c.key) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.key, "[the API key]"))
}
