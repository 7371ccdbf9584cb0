package httpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Requests for sessions that do not exist leave nothing behind, however
// many and however long their ids; only live sessions are tracked.
func TestUnknownSessionsAreNotTracked(t *testing.T) {
	live := "live-session"
	var served []string
	rt := &generationRouter{
		sessions: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served = append(served, r.Header.Get(headerSessionID))
			if r.Header.Get(headerSessionID) != live {
				http.Error(w, "session not found", http.StatusNotFound)
			}
		}),
		stateless:    http.NotFoundHandler(),
		maxBody:      1 << 20,
		bodyTimeout:  time.Second,
		writeTimeout: time.Second,
		streams:      context.Background(),
		activity:     &sessionActivity{sessions: map[string]*activity{}},
		live: func(id string) (string, bool) {
			return "2025-11-25", id == live
		},
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for i, id := range []string{"unknown", strings.Repeat("x", 32<<10), strings.Repeat("y", maxSessionIDLength+1)} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set(headerSessionID, id)
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, req)
		if w.Code != http.StatusNotFound {
			t.Errorf("unknown session %d: %d, want 404", i, w.Code)
		}
	}
	if n := len(rt.activity.sessions); n != 0 {
		t.Errorf("%d unknown sessions tracked", n)
	}
	if len(served) != 1 {
		t.Errorf("ids over the length limit reached the go-sdk: %d requests", len(served))
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set(headerSessionID, live)
	rt.ServeHTTP(httptest.NewRecorder(), req)
	if rt.activity.sessions[live] == nil {
		t.Error("the live session's request was not tracked")
	}
}
