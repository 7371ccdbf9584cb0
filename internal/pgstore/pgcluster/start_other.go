//go:build !unix

package pgcluster

import (
	"context"
	"errors"
)

type credential struct{}

var errNotUnix = errors.New("a private PostgreSQL cluster needs a Unix system; set MEMORY_TEST_DATABASE_URL (tests) or pass --postgres URL (memory-bench) instead")

// Start fails: initdb and pg_ctl are run as on Debian.
func Start(context.Context, Options) (*Cluster, error) { return nil, errNotUnix }

func (c *Cluster) run(context.Context, string, ...string) error { return errNotUnix }
