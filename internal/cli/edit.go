package cli

import (
	"errors"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

var cmdRename = &command{
	name:    "rename",
	args:    "OLD NEW",
	summary: "rename an entity; its relations follow",
	help:    "NEW must not exist yet (to join two entities, use merge).\n",
	run: func(c *context_, args []string) error {
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) != 2 {
			return usagef("rename takes OLD and NEW")
		}
		if args[1] == "" {
			return usagef("the new name is empty")
		}
		var res graph.RenameResult
		changed, err := c.update("rename", func(g *graph.Graph) (err error) {
			res, err = g.Rename(args[0], args[1])
			return err
		})
		var ex *graph.ExistsError
		if errors.As(err, &ex) {
			return fmt.Errorf("%v; to join the two, use: mcp-server-memory merge %q %q", err, args[1], args[0])
		}
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(res)
		}
		if !changed {
			c.printf("%q already has that name; nothing changed.\n", res.From)
			return nil
		}
		c.printf("Renamed %q to %q; %s followed.\n", res.From, res.To, plural(res.Relations, "relation", "relations"))
		return nil
	},
}

var cmdMerge = &command{
	name:    "merge",
	args:    "A B",
	summary: "merge entity B into A: observations and relations united, B removed",
	help: `A keeps its name and type and gains B's observations that it lacks, in order.
Every relation of B now runs from or to A, except those A already has and
those between A and B (they would point A at itself). Then B is removed.
`,
	run: func(c *context_, args []string) error {
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) != 2 {
			return usagef("merge takes A and B (B is merged into A)")
		}
		if args[0] == args[1] {
			return usagef("A and B are the same entity")
		}
		var res graph.MergeResult
		if _, err := c.update("merge", func(g *graph.Graph) (err error) {
			res, err = g.Merge(args[0], args[1])
			return err
		}); err != nil {
			return err
		}
		if c.json {
			return c.printJSON(res)
		}
		c.printf("Merged %q into %q: %s added, %s moved, %s dropped; %q removed.\n", res.Merged, res.Into,
			plural(len(res.AddedObservations), "observation", "observations"),
			plural(len(res.MovedRelations), "relation", "relations"),
			plural(len(res.DroppedRelations), "relation", "relations"), res.Merged)
		for _, r := range res.DroppedRelations {
			c.printf("  dropped %s\n", describeRelation(r))
		}
		if res.TypeDropped != "" {
			c.printf("  %q keeps its type; %q's type %q was dropped\n", res.Into, res.Merged, res.TypeDropped)
		}
		return nil
	},
}

// update runs fn as one write: under the memory file's lock, or as one
// database transaction; the history records it as made by the command
// tool.
func (c *context_) update(tool string, fn func(*graph.Graph) error) (bool, error) {
	s, err := c.open(false)
	if err != nil {
		return false, err
	}
	defer s.close()
	ctx, stop := interruptible()
	defer stop()
	return s.Update(ctx, graph.Write{Tool: tool, Apply: fn})
}
