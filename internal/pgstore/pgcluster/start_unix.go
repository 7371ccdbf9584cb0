//go:build unix

package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

type credential = syscall.Credential

// Start initialises and starts a cluster; ctx bounds initdb and the start.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	removeAbandoned(ctx, bin)
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, data: filepath.Join(dir, "data")}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		c.remove()
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			c.remove()
			return nil, errors.New("running as root and there is no postgres user to own the cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			c.remove()
			return nil, err
		}
	}
	initdb := []string{"-D", c.data, "-A", "trust", "-U", "postgres", "-E", "UTF8"}
	if opts.Fast {
		initdb = append(initdb, "--no-sync")
	}
	if err := c.run(ctx, "initdb", initdb...); err != nil {
		c.remove()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		c.remove()
		return nil, err
	}
	settings := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", port, dir)
	if opts.Fast {
		settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if opts.MaxConnections > 0 {
		settings += fmt.Sprintf(" -c max_connections=%d", opts.MaxConnections)
	}
	if err := c.run(ctx, "pg_ctl", "-D", c.data, "-o", settings, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		c.remove()
		return nil, fmt.Errorf("%v; server log: %s", err, log)
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c, nil
}

// run runs one of the cluster's programs as the cluster's owner, for two
// minutes at most.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// removeAbandoned stops and removes the clusters whose starting process no
// longer exists. A directory without an owner file is being set up, or is
// not ours: it is left alone.
func removeAbandoned(ctx context.Context, bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil || pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue // alive (or not ours to judge)
		}
		c := &Cluster{Dir: dir, bin: bin, data: filepath.Join(dir, "data")}
		if fi, err := os.Stat(c.data); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
				c.cred = &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
			}
			c.run(ctx, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop") // may have stopped already
		}
		c.remove()
	}
}
