package cli

import (
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

var cmdUI = &command{
	name:    "ui",
	summary: "open the memory in the browser: search, read, picture, edit",
	help: `Serves a page on 127.0.0.1 (only this machine) at a random port, with a
random secret in its address, and opens it in the browser; where no browser
can be opened, open the printed address yourself. Ctrl-C stops. With
MEMORY_DATABASE_URL set, the page shows the memory --memory NAME (default
"default") in PostgreSQL.

  --port N      listen on this port instead of a random one
  --no-open     print the address only
`,
	noJSON: true,
	run: func(c *context_, args []string) error {
		port := c.flags.Int("port", 0, "")
		noOpen := c.flags.Bool("no-open", false, "")
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) > 0 {
			return usagef("ui takes no arguments")
		}
		if c.json {
			return usagef("--json does not apply to ui")
		}
		if *port < 0 || *port > 65535 {
			return usagef("--port must be 0..65535")
		}
		m, err := c.open(false)
		if err != nil {
			return err
		}
		defer m.close()
		opts := ui.Options{Logf: c.logf}
		if e := c.config.Embeddings; e.On() {
			// The count of the vectors file as it is: this command
			// computes none (the server and embed do).
			opts.Vectors = func() (int, int) {
				have, want, err := meaning.Count(m.vectors(), e.Model, m.View)
				if err != nil {
					c.logf("counting vectors: %v", err)
				}
				return have, want
			}
		}
		srv, err := ui.Listen(m.Store, m.where, *port, opts)
		if err != nil {
			return err
		}
		c.printf("Your memory (%s) is at\n\n  %s\n\nKeep the address private: it holds the secret. Ctrl-C stops.\n", m.where, srv.URL)
		if !*noOpen {
			if err := ui.OpenBrowser(srv.URL); err != nil {
				c.printf("(Could not open a browser: %v. Open the address above.)\n", err)
			}
		}
		ctx, stop := interruptible()
		defer stop()
		return srv.Serve(ctx)
	},
}
