package cli

import (
	"context"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// runPurge is history --purge NAME: it says what it removes, asks, and
// removes every change naming the entity from the history, for good.
func runPurge(c *context_, m *memory, recs []graph.Record, name string, yes bool) error {
	p, ok := m.Store.(history.Purger)
	if !ok {
		return fmt.Errorf("%s cannot purge its history", m.where)
	}
	records, whole := 0, 0
	for i := range recs {
		if kept, changed := history.Purge(recs[i], name); changed {
			records++
			if len(kept.Changes) == 0 {
				whole++
			}
		}
	}
	if records == 0 && !c.json {
		c.printf("No change naming %s in the history of %s: nothing to purge.\n", oneLine(name), m.where)
		return nil
	}
	if !c.json {
		c.printf("This removes every change naming %s from the history of %s, for good: %s (%d of them whole).\n",
			oneLine(name), m.where, plural(records, "record", "records"), whole)
		var inMemory bool
		if err := m.View(context.Background(), func(g *graph.Graph) error { inMemory = g.Entity(name) != nil; return nil }); err != nil {
			return err
		}
		if inMemory {
			c.printf("%s is still in the memory: the purge does not change the memory (delete %s first to forget it).\n", oneLine(name), oneLine(name))
		}
	}
	if ok, err := c.confirm(yes, "Purge?", "history --purge removes records for good: run it on a terminal to be asked first, or add --yes"); !ok || err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	n, err := p.PurgeHistory(ctx, name)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(struct {
			Purged int `json:"purged"`
		}{n})
	}
	c.printf("Purged: %s naming %s changed or removed.\n", plural(n, "record", "records"), oneLine(name))
	return nil
}
