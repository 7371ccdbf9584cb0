// Package meaningtest is a stand-in for an OpenAI-compatible embeddings
// API, for the tests of search by meaning and memory-bench --embeddings
// stub: deterministic vectors from hashed words, with a small table of
// words that mean alike, so "hobby" finds "photography" though they share
// no word. It is no model: nothing it ranks says how a model would.
package meaningtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Dims is the length of the stub's vectors.
const Dims = 256

// alike maps words to the word they are taken to mean.
var alike = map[string]string{
	"hobby": "photography", "hobbies": "photography", "pastime": "photography", "camera": "photography",
	"brazil": "rio", "brazilian": "rio",
	"doctor": "physician", "medic": "physician",
	"music": "violin", "musical": "violin", "pictures": "photography", "photos": "photography",
	"cooking": "baking", "cook": "baking", "bakes": "baking",
}

// Server answers POST /v1/embeddings as OpenAI's API does. Its zero
// settings answer every request well; the fields below make it fail.
type Server struct {
	*httptest.Server
	// Key, when not "", is the bearer token required.
	Key string
	// MaxBatch is the most inputs one request may hold (OpenAI's limit is
	// 2048); 0 is no limit.
	MaxBatch int

	mu     sync.Mutex
	models map[string]bool
	down   bool
	bad    bool
	delay  time.Duration
	texts  map[string][]string // the texts embedded, by model
	reqs   int
	dims   int // 0: Dims
	// asking is how many requests are being answered, and mostAsking the
	// most at once so far.
	asking, mostAsking int
	quit               chan struct{}
	undo               chan struct{} // closed when the delay changes
}

// New starts a stub serving the given models.
func New(models ...string) *Server {
	s := &Server{models: make(map[string]bool), texts: make(map[string][]string), quit: make(chan struct{}), undo: make(chan struct{})}
	for _, m := range models {
		s.models[m] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API's base URL, as MEMORY_EMBEDDINGS_URL takes it.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the stub, ending the answers it delays.
func (s *Server) Close() {
	close(s.quit)
	s.Server.Close()
}

// SetDown makes every request fail with 503 and an error body (down), or
// answer again.
func (s *Server) SetDown(down bool) { s.mu.Lock(); s.down = down; s.mu.Unlock() }

// SetKey changes Key while the stub serves.
func (s *Server) SetKey(key string) { s.mu.Lock(); s.Key = key; s.mu.Unlock() }

// SetBad makes every answer hold one vector too few.
func (s *Server) SetBad(bad bool) { s.mu.Lock(); s.bad = bad; s.mu.Unlock() }

// SetDelay makes every answer wait d (or until the client gives up, or
// the delay is set again).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
	close(s.undo)
	s.undo = make(chan struct{})
}

// Texts returns the texts embedded for model so far, in order.
func (s *Server) Texts(model string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts[model]...)
}

// SetDims makes the vectors n long (0: Dims), as a model changed under
// the same name would.
func (s *Server) SetDims(n int) { s.mu.Lock(); s.dims = n; s.mu.Unlock() }

// MostAsking is the most requests the stub answered at once so far.
func (s *Server) MostAsking() int { s.mu.Lock(); defer s.mu.Unlock(); return s.mostAsking }

// Requests is how many requests reached the stub.
func (s *Server) Requests() int { s.mu.Lock(); defer s.mu.Unlock(); return s.reqs }

func apiError(w http.ResponseWriter, status int, typ, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": fmt.Sprintf(format, args...), "type": typ, "param": nil, "code": nil}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs++
	s.asking++
	s.mostAsking = max(s.mostAsking, s.asking)
	down, bad, delay, undo, key, dims := s.down, s.bad, s.delay, s.undo, s.Key, s.dims
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.asking--; s.mu.Unlock() }()
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		apiError(w, http.StatusNotFound, "invalid_request_error", "Invalid URL (%s %s)", r.Method, r.URL.Path)
		return
	}
	if !s.wait(r, delay, undo) || refused(w, r, down, key) {
		return
	}
	req, ok := s.decode(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.texts[req.Model] = append(s.texts[req.Model], req.Input...)
	s.mu.Unlock()
	s.answer(w, req, dims, bad)
}

// embedRequest is the body of a request for embeddings.
type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// wait holds a request for delay, or until undo is closed; false when the
// client or the stub gave up first.
func (s *Server) wait(r *http.Request, delay time.Duration, undo <-chan struct{}) bool {
	if delay <= 0 {
		return true
	}
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return false
	case <-s.quit:
		return false
	case <-undo:
	}
	return true
}

// refused answers, and reports true, when the stub is down, the key is
// wrong or the body is not JSON.
func refused(w http.ResponseWriter, r *http.Request, down bool, key string) bool {
	if down {
		apiError(w, http.StatusServiceUnavailable, "server_error", "The server is overloaded or not ready yet.")
		return true
	}
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		// OpenAI quotes the key it refused; a client must not pass it on.
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided: %s.", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		return true
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "Content-Type %q is not application/json", ct)
		return true
	}
	return false
}

// decode reads the request's body, answering when it is not one the stub
// serves: unknown fields, an unknown model, too few or too many inputs.
func (s *Server) decode(w http.ResponseWriter, r *http.Request) (embedRequest, bool) {
	var req embedRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "We could not parse the JSON body of your request: %v", err)
		return req, false
	}
	if !s.models[req.Model] {
		apiError(w, http.StatusNotFound, "invalid_request_error", "The model `%s` does not exist or you do not have access to it.", req.Model)
		return req, false
	}
	if len(req.Input) == 0 || s.MaxBatch > 0 && len(req.Input) > s.MaxBatch {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "'input' must hold between 1 and %d items, not %d", s.MaxBatch, len(req.Input))
		return req, false
	}
	return req, true
}

// answer writes the vectors of req's inputs, last first (the index, not
// the order, says which input a vector is), one short when bad.
func (s *Server) answer(w http.ResponseWriter, req embedRequest, dims int, bad bool) {
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	data := make([]item, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", vectorOf(req.Model, req.Input[i], dims), i})
	}
	if bad {
		data = data[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
}

// Vector is the stub's embedding of text by model: each word, or the
// word it means alike, adds to a dimension chosen by its hash and the
// model's name; normalised.
func Vector(model, text string) []float32 { return vectorOf(model, text, Dims) }

// vectorOf is Vector with dims dimensions (0: Dims).
func vectorOf(model, text string, dims int) []float32 {
	if dims == 0 {
		dims = Dims
	}
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if a, ok := alike[w]; ok {
			w = a
		}
		h := fnv.New32a()
		h.Write([]byte(model + "\x00" + w))
		v[h.Sum32()%uint32(dims)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(n))
		}
	}
	return v
}
