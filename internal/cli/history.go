package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

var cmdHistory = &command{
	name:    "history",
	args:    "[NAME] | --purge NAME",
	summary: "what changed, when, by which tool and client, newest first",
	help: `With NAME, only the changes to that entity (or to its relations).
  --since T     only changes at or after T: a date (2026-11-30, UTC), an
                RFC 3339 date-time, or a time ago (90m, 36h, 7d)
  --client C    only changes made by the client C (as the history names it)
  --purge NAME  remove every change naming the entity NAME (its own and its
                relations') from the history, for good; asks first on a
                terminal, else needs --yes. The memory itself is not changed.
Each line shows the time (UTC), the change's id (undo takes it), the tool
or command, the client and what changed. See docs/history.md.
`,
	run: runHistory,
}

// readHistory parses --since and --client with the command's other flags
// and returns the history of the memory the command works on, newest
// first, with the memory open (the caller closes it).
func (c *context_) readHistory(args []string, f *history.Filter) ([]graph.Record, []string, *memory, error) {
	since := c.flags.String("since", "", "")
	c.flags.StringVar(&f.Client, "client", "", "")
	args, err := c.parse(args)
	if err != nil {
		return nil, nil, nil, err
	}
	if *since != "" {
		if f.Since, err = parseSince(*since, time.Now()); err != nil {
			return nil, nil, nil, err
		}
	}
	m, err := c.open(true)
	if err != nil {
		return nil, nil, nil, err
	}
	r, ok := m.Store.(history.Reader)
	if !ok {
		m.close()
		return nil, nil, nil, fmt.Errorf("%s keeps no history", m.where)
	}
	recs, err := r.History(*f)
	if err != nil {
		m.close()
		return nil, nil, nil, err
	}
	return recs, args, m, nil
}

func runHistory(c *context_, args []string) error {
	var f history.Filter
	purge := c.flags.String("purge", "", "")
	yes := c.flags.Bool("yes", false, "")
	// The entity comes before or after the flags: parse them first, then
	// filter by it.
	recs, args, m, err := c.readHistory(args, &f)
	if err != nil {
		return err
	}
	defer m.close()
	if *purge != "" {
		if len(args) > 0 || !f.Since.IsZero() || f.Client != "" {
			return usagef("history --purge NAME takes no other NAME, --since or --client: it purges every change naming NAME")
		}
		return runPurge(c, m, recs, *purge, *yes)
	}
	if len(args) > 1 {
		return usagef("history takes at most one NAME")
	}
	if len(args) == 1 {
		recs = naming(recs, args[0])
	}
	if c.json {
		out := make([]jsonRecord, len(recs))
		for i := range recs {
			out[i] = jsonRecordOf(&recs[i])
		}
		return c.printJSON(out)
	}
	if len(recs) == 0 {
		c.printf("No changes recorded in %s%s.\n", m.where, map[bool]string{true: " that match", false: ""}[len(args) == 1 || f.Client != "" || !f.Since.IsZero()])
		return nil
	}
	for i := range recs {
		c.printf("%s\n", historyLine(&recs[i]))
	}
	return nil
}

// naming keeps the records with a change naming the entity name (or a
// relation of it).
func naming(recs []graph.Record, name string) []graph.Record {
	byName := history.Filter{Entity: name}
	kept := recs[:0]
	for i := range recs {
		if byName.Match(&recs[i]) {
			kept = append(kept, recs[i])
		}
	}
	return kept
}

// jsonRecord is a record as --json prints it: its changes in the history
// file's format (docs/history.md).
type jsonRecord struct {
	ID      string          `json:"id"`
	Time    string          `json:"time"`
	Tool    string          `json:"tool"`
	Client  string          `json:"client"`
	Changes json.RawMessage `json:"changes"`
}

func jsonRecordOf(r *graph.Record) jsonRecord {
	return jsonRecord{ID: r.ID, Time: r.Time.Format(time.RFC3339), Tool: r.Tool, Client: r.Client,
		Changes: graph.AppendChanges(nil, r.Changes)}
}

// historyLine is one record for people:
// "2026-12-02 00:45:12  ab12cd  delete_entities  Claude Desktop  − entity Alice (person), 3 observations".
func historyLine(r *graph.Record) string {
	tool, client := r.Tool, r.Client
	if tool == "" {
		tool = "-"
	}
	if client == "" {
		client = "-"
	}
	return fmt.Sprintf("%s  %s  %s  %s  %s", r.Time.UTC().Format(time.DateTime), r.Short(), tool, client, oneLine(history.Summary(r.Changes)))
}

// parseSince reads a time: a date (its start, UTC), an RFC 3339
// date-time, or a time ago (90m, 36h, 7d).
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("--since %q: give a date (2026-11-30), an RFC 3339 date-time (2026-11-30T09:15:00Z) or a time ago (90m, 36h, 7d)", v)
}

// terminal reports whether the command's input and output are a terminal,
// where a question can be asked.
func (c *context_) terminal() bool {
	in, ok := c.stdin.(*os.File)
	out, ok2 := c.stdout.(*os.File)
	return ok && ok2 && term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd()))
}
