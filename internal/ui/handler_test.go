package ui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
)

const secret = "0123456789abcdef0123456789abcdef"

func newHandler(t *testing.T, memory string, lockTimeout time.Duration) (*Handler, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filestore.Open(path, filestore.Options{Logf: t.Logf, Lock: filestore.LockOptions{Timeout: lockTimeout}})
	return NewHandler(store, path, Options{Secret: secret, Logf: t.Logf}), path
}

type answer struct {
	status int
	body   map[string]any
	header http.Header
}

func call(t testing.TB, h http.Handler, method, target string, body string, headers ...string) answer {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+req.Host) // as the page's own fetch
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if req.Header.Get("Origin") == "" {
		req.Header.Del("Origin")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &a.body); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, target, rec.Body)
		}
	}
	return a
}

func TestSecretRequired(t *testing.T) {
	h, _ := newHandler(t, seedMemory, 0)
	for _, target := range []string{"/", "/app.js", "/api/search?q=a", "/wrong/", "/wrong/api/stats", "/" + secret[:31] + "/api/stats"} {
		if a := call(t, h, "GET", target, ""); a.status != http.StatusNotFound {
			t.Errorf("GET %s without the secret: status %d, want 404", target, a.status)
		}
	}
	for _, target := range []string{"/" + secret + "/", "/" + secret + "/app.js", "/" + secret + "/app.css", "/" + secret + "/api/stats"} {
		a := call(t, h, "GET", target, "")
		if a.status != http.StatusOK {
			t.Errorf("GET %s: status %d", target, a.status)
		}
		for k, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
			if got := a.header.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", target, k, got, want)
			}
		}
		if !strings.Contains(a.header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: no CSP", target)
		}
	}
	if a := call(t, h, "GET", "/"+secret, ""); a.status != http.StatusFound || a.header.Get("Location") != "/"+secret+"/" {
		t.Errorf("GET /SECRET: %d to %q, want a redirect to /SECRET/", a.status, a.header.Get("Location"))
	}
	// Reading from another site is refused too, though the browser would
	// not let it read the answer.
	if a := call(t, h, "GET", "/"+secret+"/api/search?q=a", "", "Sec-Fetch-Site", "cross-site"); a.status != http.StatusForbidden {
		t.Errorf("cross-site API read: status %d, want 403", a.status)
	}
}

func TestSearchRanksAsSearchNodes(t *testing.T) {
	h, _ := newHandler(t, seedMemory, 0)
	a := call(t, h, "GET", "/"+secret+"/api/search?q="+url.QueryEscape("東京"), "")
	hits := a.body["hits"].([]any)
	var got []string
	for _, x := range hits {
		got = append(got, x.(map[string]any)["name"].(string))
	}
	// The name match first, then the observation match, as search_nodes.
	if strings.Join(got, ",") != "東京,Alice" {
		t.Errorf("search 東京 = %v, want [東京 Alice]", got)
	}
	if snip := hits[1].(map[string]any)["snippet"]; snip != "Lives in 東京" {
		t.Errorf("Alice's snippet = %q, want the matching observation", snip)
	}
	long := strings.Repeat("x", 2049)
	if a := call(t, h, "GET", "/"+secret+"/api/search?q="+long, ""); a.status != http.StatusBadRequest {
		t.Errorf("over-long query: status %d", a.status)
	}
}

// TestSearchPages pages through the list from an offset, and refuses an
// offset that is not a count.
func TestSearchPages(t *testing.T) {
	var b strings.Builder
	for i := range 120 {
		fmt.Fprintf(&b, `{"type":"entity","name":"E%03d","entityType":"t","observations":["number %d"]}`+"\n", i, i)
	}
	h, _ := newHandler(t, b.String(), 0)
	for _, c := range []struct {
		offset      string
		first, last string
		n           int
	}{{"", "E000", "E049", 50}, {"50", "E050", "E099", 50}, {"100", "E100", "E119", 20}, {"120", "", "", 0}, {"9999", "", "", 0}} {
		a := call(t, h, "GET", "/"+secret+"/api/search?q=&offset="+c.offset, "")
		hits := a.body["hits"].([]any)
		if a.status != 200 || a.body["total"] != 120.0 || len(hits) != c.n {
			t.Errorf("offset %q: status %d, total %v, %d hits; want 120 and %d", c.offset, a.status, a.body["total"], len(hits), c.n)
			continue
		}
		if c.n > 0 && (hits[0].(map[string]any)["name"] != c.first || hits[c.n-1].(map[string]any)["name"] != c.last) {
			t.Errorf("offset %q: %v … %v, want %s … %s", c.offset, hits[0], hits[c.n-1], c.first, c.last)
		}
	}
	// A search pages the same way: every entity contains "number".
	a := call(t, h, "GET", "/"+secret+"/api/search?q=number&offset=100", "")
	if hits := a.body["hits"].([]any); a.body["total"] != 120.0 || a.body["exact"] != 120.0 || len(hits) != 20 || hits[0].(map[string]any)["name"] != "E100" {
		t.Errorf("search from 100: %v", a.body)
	}
	for _, bad := range []string{"-1", "x", "1.5"} {
		a := call(t, h, "GET", "/"+secret+"/api/search?q=&offset="+bad, "")
		if a.status != http.StatusBadRequest || !strings.Contains(a.body["error"].(string), "offset") {
			t.Errorf("offset %q: %d %v, want 400 naming the offset", bad, a.status, a.body)
		}
	}
}

func TestPictureCapped(t *testing.T) {
	// A hub with 200 neighbours: too many for a whole picture, and more
	// than a neighbourhood picture shows.
	var b strings.Builder
	b.WriteString(`{"type":"entity","name":"Hub","entityType":"t","observations":[]}` + "\n")
	for i := range 200 {
		fmt.Fprintf(&b, `{"type":"entity","name":"N%d","entityType":"t","observations":[]}`+"\n", i)
	}
	for i := range 200 {
		fmt.Fprintf(&b, `{"type":"relation","from":"Hub","to":"N%d","relationType":"r"}`+"\n", i)
	}
	h, _ := newHandler(t, b.String(), 0)
	a := call(t, h, "GET", "/"+secret+"/api/picture?name=Hub&depth=2", "")
	if a.status != 200 || a.body["truncated"] != true || len(a.body["nodes"].([]any)) != neighbourhoodLimit {
		t.Errorf("neighbourhood of Hub: status %d truncated %v, %d nodes", a.status, a.body["truncated"], len(a.body["nodes"].([]any)))
	}
	a = call(t, h, "GET", "/"+secret+"/api/picture", "")
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body["error"].(string), "201 entities") {
		t.Errorf("whole picture of 201 entities: %d %v", a.status, a.body)
	}
	a = call(t, h, "GET", "/"+secret+"/api/picture?name=N7&depth=1", "")
	if a.body["truncated"] != false || len(a.body["nodes"].([]any)) != 2 {
		t.Errorf("neighbourhood of N7: %v", a.body)
	}
	if a := call(t, h, "GET", "/"+secret+"/api/picture?name=Nobody", ""); a.status != http.StatusNotFound {
		t.Errorf("picture of a missing entity: %d", a.status)
	}
}

func TestEdits(t *testing.T) {
	h, path := newHandler(t, seedMemory, 0)
	post := func(body string) answer { return call(t, h, "POST", "/"+secret+"/api/edit", body) }
	for _, tt := range []struct {
		body, message string
		status        int
		fileHas       string
	}{
		{`{"op":"createEntity","entity":"Новый","entityType":"тип"}`, "Created Новый.", 200, `"name":"Новый","entityType":"тип","observations":[]`},
		{`{"op":"createEntity","entity":"Alice","entityType":"x"}`, "Nothing was changed: Entity with name Alice already exists", 409, ""},
		{`{"op":"addObservation","entity":"Новый","observation":"один"}`, "Observation added.", 200, `"observations":["один"]`},
		{`{"op":"addObservation","entity":"Новый","observation":"один"}`, "The entity already has this observation.", 200, ""},
		{`{"op":"changeObservation","entity":"Новый","old":"один","observation":"два"}`, "Observation changed.", 200, `"observations":["два"]`},
		{`{"op":"changeObservation","entity":"Новый","old":"один","observation":"три"}`, `Nothing was changed: Новый has no observation "один" (it may have been changed meanwhile)`, 409, ""},
		{`{"op":"addRelation","from":"Новый","to":"Alice","relationType":"knows"}`, "Relation added.", 200, `{"type":"relation","from":"Новый","to":"Alice","relationType":"knows","createdAt":"20`},
		{`{"op":"addRelation","from":"Новый","to":"Ghost","relationType":"knows"}`, "Nothing was changed: Entity with name Ghost not found", 409, ""},
		{`{"op":"rename","entity":"Новый","newName":"Старый"}`, "Renamed to Старый; 1 relation followed.", 200, `{"type":"relation","from":"Старый","to":"Alice","relationType":"knows","createdAt":"20`},
		{`{"op":"deleteRelation","from":"Старый","to":"Alice","relationType":"knows"}`, "Relation deleted.", 200, ""},
		{`{"op":"deleteObservation","entity":"Старый","observation":"два"}`, "Observation deleted.", 200, `"name":"Старый","entityType":"тип","observations":[]`},
		{`{"op":"deleteEntity","entity":"Старый"}`, "Deleted Старый and its relations.", 200, ""},
		{`{"op":"deleteEntity","entity":"Старый"}`, "Nothing was changed: Entity with name Старый not found", 409, ""},
		{`{"op":"addObservation","entity":"Alice","observation":"  "}`, "the observation is empty", 400, ""},
		{`{"op":"explode"}`, `unknown edit "explode"`, 400, ""},
		{`{"op":"rename","entity":"Alice","newName":"B","extra":1}`, `The edit could not be read: json: unknown field "extra"`, 400, ""},
	} {
		a := post(tt.body)
		msg, _ := a.body["message"].(string)
		if a.status != 200 {
			msg, _ = a.body["error"].(string)
		}
		if a.status != tt.status || msg != tt.message {
			t.Errorf("%s: %d %q, want %d %q", tt.body, a.status, msg, tt.status, tt.message)
		}
		if tt.fileHas != "" {
			b, _ := os.ReadFile(path)
			if !strings.Contains(string(b), tt.fileHas) {
				t.Errorf("%s: the file lacks %s:\n%s", tt.body, tt.fileHas, b)
			}
		}
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "Старый") || strings.Contains(string(b), "Новый") {
		t.Errorf("the file still holds the deleted entity:\n%s", b)
	}
	if a := call(t, h, "GET", "/"+secret+"/api/edit", ""); a.status != http.StatusForbidden {
		t.Errorf("GET edit: %d, want 403", a.status)
	}
}

func TestEditWaitsForTheLock(t *testing.T) {
	h, path := newHandler(t, seedMemory, 200*time.Millisecond)
	host, _ := os.Hostname()
	lock := fmt.Sprintf(`{"pid":%d,"hostname":%q,"token":"00000000000000000000000000000000"}`, os.Getpid(), host)
	if err := os.WriteFile(path+".lock", []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	a := call(t, h, "POST", "/"+secret+"/api/edit", `{"op":"deleteEntity","entity":"Alice"}`)
	msg, _ := a.body["error"].(string)
	if a.status != http.StatusServiceUnavailable || !strings.HasPrefix(msg, "Nothing was changed: Timed out after 200 ms waiting for the memory file lock") {
		t.Errorf("edit under a held lock: %d %q", a.status, msg)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the file changed")
	}
}

// TestEditsNeedTheOrigin: an edit of the `ui` command's page that says
// nothing of its origin (a replay outside a browser, which always sends
// Origin with a POST) is refused and changes nothing.
func TestEditsNeedTheOrigin(t *testing.T) {
	h, path := newHandler(t, seedMemory, 0)
	before, _ := os.ReadFile(path)
	a := call(t, h, "POST", "/"+secret+"/api/edit", `{"op":"deleteEntity","entity":"Alice"}`, "Origin", "")
	if a.status != http.StatusForbidden || !strings.Contains(fmt.Sprint(a.body["error"]), "Origin") {
		t.Errorf("an edit without Origin: %d %v, want 403 saying why", a.status, a.body)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the file changed")
	}
}

// unwrapOnly hides the Flusher of the writer it wraps and, like --http's
// access log, offers it through Unwrap only.
type unwrapOnly struct{ w http.ResponseWriter }

func (u unwrapOnly) Header() http.Header         { return u.w.Header() }
func (u unwrapOnly) Write(b []byte) (int, error) { return u.w.Write(b) }
func (u unwrapOnly) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u unwrapOnly) Unwrap() http.ResponseWriter { return u.w }

// TestEventsBehindWrappers: the live updates stream through a writer that
// wraps the server's, as under --http, and say when the memory changed.
func TestEventsBehindWrappers(t *testing.T) {
	h, _ := newHandler(t, seedMemory, 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(unwrapOnly{w}, r) }))
	defer srv.Close()
	defer h.Close()
	client := &http.Client{Timeout: 10 * time.Second} // ends a stream that never says
	resp, err := client.Get(srv.URL + "/" + secret + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET api/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || lines.Text() != ": connected" {
		t.Fatalf("first line %q, want \": connected\" (err %v)", lines.Text(), lines.Err())
	}
	if a := call(t, h, "POST", "/"+secret+"/api/edit", `{"op":"deleteEntity","entity":"Alice"}`); a.status != http.StatusOK {
		t.Fatalf("edit: %d %v", a.status, a.body)
	}
	for lines.Scan() {
		if lines.Text() == "event: change" {
			return
		}
	}
	t.Fatalf("no change event: %v", lines.Err())
}

// TestRestoreRefusals: the page restores only what a recorded change
// deleted; anything else is refused, saying why, and changes nothing.
func TestRestoreRefusals(t *testing.T) {
	h, path := newHandler(t, "", time.Second)
	edit := func(body string) answer { return call(t, h, "POST", "/"+secret+"/api/edit", body) }
	if a := edit(`{"op":"createEntity","entity":"Ada","entityType":"person"}`); a.status != http.StatusOK {
		t.Fatalf("creating Ada: %v", a)
	}
	hist := call(t, h, "GET", "/"+secret+"/api/history?name=Ada", "")
	recs, _ := hist.body["records"].([]any)
	if hist.status != http.StatusOK || len(recs) != 1 {
		t.Fatalf("Ada's history: %v", hist)
	}
	created := recs[0].(map[string]any)
	if created["restorable"] != false {
		t.Errorf("a creation offered for restoring: %v", created)
	}
	before, _ := os.ReadFile(path)
	for body, want := range map[string]string{
		`{"op":"restore","record":"` + created["id"].(string) + `"}`: "did more than delete: undo it with mcp-server-memory undo",
		`{"op":"restore","record":"0123456789abcdef"}`:               `there is no change "0123456789abcdef" in the history`,
		`{"op":"restore"}`: "the change to restore is empty",
	} {
		a := edit(body)
		if msg, _ := a.body["error"].(string); a.status != http.StatusBadRequest || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %v, want 400 saying %q", body, a.status, a.body, want)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a refused restore changed the memory")
	}
}

// TestHistoryIsTheEditors: a request that may only read the memory gets
// the writes per day but not the history, which holds what was deleted.
func TestHistoryIsTheEditors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	store := filestore.Open(path, filestore.Options{Logf: t.Logf})
	editor := NewHandler(store, path, Options{Secret: secret, Logf: t.Logf})
	for _, body := range []string{`{"op":"createEntity","entity":"Ada","entityType":"person"}`, `{"op":"deleteEntity","entity":"Ada"}`} {
		if a := call(t, editor, "POST", "/"+secret+"/api/edit", body); a.status != http.StatusOK {
			t.Fatalf("%s: %v", body, a)
		}
	}
	if a := call(t, editor, "GET", "/"+secret+"/api/learned", ""); a.body["deleted"] == nil || a.body["writes"] == nil {
		t.Fatalf("an editor's view lacks the deleted entities or the writes: %v", a.body)
	}
	reader := NewHandler(store, path, Options{Secret: secret, Logf: t.Logf, MayEdit: func(*http.Request) error {
		return errors.New("this token may only read memory team")
	}})
	a := call(t, reader, "GET", "/"+secret+"/api/history?name=Ada", "")
	if msg, _ := a.body["error"].(string); a.status != http.StatusForbidden || !strings.Contains(msg, "may only read") {
		t.Errorf("a reader asking for the history: %d %v, want 403", a.status, a.body)
	}
	if a := call(t, reader, "GET", "/"+secret+"/api/learned", ""); a.body["deleted"] != nil || a.body["writes"] == nil {
		t.Errorf("a reader's view: %v, want the writes and no deleted entities", a.body)
	}
}

// TestEntityHistoryLimit: an entity's history shows its newest changes,
// up to the limit, and says when there are older ones.
func TestEntityHistoryLimit(t *testing.T) {
	h, _ := newHandler(t, "", time.Second)
	edit := func(body string) {
		if a := call(t, h, "POST", "/"+secret+"/api/edit", body); a.status != http.StatusOK {
			t.Fatalf("%s: %v", body, a)
		}
	}
	edit(`{"op":"createEntity","entity":"Ada","entityType":"person"}`)
	for i := 1; i <= entityHistoryLimit; i++ {
		if i == entityHistoryLimit {
			a := call(t, h, "GET", "/"+secret+"/api/history?name=Ada", "")
			if recs, _ := a.body["records"].([]any); len(recs) != entityHistoryLimit || a.body["more"] != false {
				t.Errorf("at the limit: %d records, more %v", len(recs), a.body["more"])
			}
		}
		edit(fmt.Sprintf(`{"op":"addObservation","entity":"Ada","observation":"fact %d"}`, i))
	}
	a := call(t, h, "GET", "/"+secret+"/api/history?name=Ada", "")
	recs, _ := a.body["records"].([]any)
	if len(recs) != entityHistoryLimit || a.body["more"] != true {
		t.Fatalf("past the limit: %d records, more %v", len(recs), a.body["more"])
	}
	if newest := recs[0].(map[string]any)["observations"].([]any); len(newest) != 1 || newest[0] != fmt.Sprintf("fact %d", entityHistoryLimit) {
		t.Errorf("the newest change shown: %v", newest)
	}
}
