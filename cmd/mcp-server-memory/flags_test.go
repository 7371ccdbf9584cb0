package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string // substrings; "" means empty output
	}{
		{[]string{"--help"}, 0, "Usage:", ""},
		{[]string{"-h"}, 0, "Usage:", ""},
		{[]string{"--version"}, 0, "mcp-server-memory ", ""},
		{[]string{"--bogus"}, 2, "", "flag provided but not defined"},
		{[]string{"extra"}, 2, "", `unexpected argument "extra"`},
	} {
		cmd := exec.Command(binary, c.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.code)
		}
		for _, o := range []struct {
			name, got, want string
		}{{"stdout", stdout.String(), c.stdout}, {"stderr", stderr.String(), c.stderr}} {
			if (o.want == "" && o.got != "") || !strings.Contains(o.got, o.want) {
				t.Errorf("%v: %s %q, want it to contain %q", c.args, o.name, o.got, o.want)
			}
		}
	}
}
