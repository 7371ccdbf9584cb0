package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// WritesResult is the memory a server holds after many small writes, beside
// what a fresh server holds on the file those writes left. A memory server
// lives for days inside a desktop client; each write must cost only what it
// adds to the file, not a little more for the life of the process.
type WritesResult struct {
	Writes int `json:"writes"`
	Errors int `json:"errors"`
	// RSSKB is the server process's resident set after the writes;
	// FreshRSSKB that of a fresh server that has loaded the same file.
	RSSKB      int64 `json:"rssKB"`
	FreshRSSKB int64 `json:"freshRssKB"`
	// FileBytes is the size of the memory the writes left: the file, or
	// the memory's tables and indexes in the database.
	FileBytes  int64  `json:"fileBytes"`
	FirstError string `json:"firstError,omitempty"`
}

// measureWrites makes n one-entity writes through p, alternating
// create_entities of a new entity with add_observations to it (the calls a
// chat makes as it learns), then reads p's resident set, and starts a
// fresh server on the same memory to read its resident set once it has
// loaded it.
func measureWrites(ctx context.Context, p *serverProcess, command string, mem *memoryCopy, n int, s runSettings) *WritesResult {
	res := &WritesResult{Writes: n}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		name := fmt.Sprintf("bench write %d", i-i%2)
		tool, args := "create_entities", map[string]any{"entities": []any{map[string]any{
			"name": name, "entityType": "bench", "observations": []string{"written by memory-bench"},
		}}}
		if i%2 == 1 {
			tool, args = "add_observations", map[string]any{"observations": []any{map[string]any{
				"entityName": name, "contents": []string{fmt.Sprintf("observation %d", i)},
			}}}
		}
		r, _, err := p.call(ctx, s.callTimeout, tool, args)
		if err == nil && r.IsError {
			err = fmt.Errorf("tool error: %s", firstText(r))
		}
		if err != nil {
			if res.Errors == 0 {
				res.FirstError = err.Error()
			}
			res.Errors++
		}
	}
	res.RSSKB = serverRSS(p)
	res.FileBytes = mem.bytes(ctx)
	fresh, err := startServer(ctx, command, mem.env, s.client)
	if err != nil {
		res.FirstError = "fresh server: " + err.Error()
		return res
	}
	if _, _, err := fresh.call(ctx, s.callTimeout, "search_nodes", map[string]any{"query": "bench write"}); err == nil {
		res.FreshRSSKB = serverRSS(fresh)
	}
	fresh.close()
	return res
}

// serverRSS is the current resident set (VmRSS) in kB of the server
// process of p's tree: the largest process that started no other, as for
// the peak.
func serverRSS(p *serverProcess) int64 {
	tree, children := processTree(p.cmd.Process.Pid)
	var best int64
	for _, pid := range tree {
		if len(children[pid]) > 0 && len(tree) > 1 {
			continue
		}
		if kb, ok := readStatusKB(pid, "VmRSS:"); ok && kb > best {
			best = kb
		}
	}
	return best
}

// readStatusKB reads one "Key: N kB" line of /proc/<pid>/status.
func readStatusKB(pid int, key string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}
