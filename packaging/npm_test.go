package packaging

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const launcherName = "@kgmemory/server-memory"

// packageJSON is the part of package.json these tests look at.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	License              string            `json:"license"`
	Bin                  map[string]string `json:"bin"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	Scripts              map[string]string `json:"scripts"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PublishConfig        struct {
		Access string `json:"access"`
	} `json:"publishConfig"`
}

func (p platform) npmName() string { return launcherName + "-" + p.os + "-" + p.cpu }

// tarball is the file `npm pack` writes for a package.
func tarball(name, version string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-") + "-" + version + ".tgz"
}

func hostPlatform(t *testing.T) platform {
	t.Helper()
	for _, p := range platforms {
		if p.isHost() {
			return p
		}
	}
	t.Skipf("no package for %s/%s", runtime.GOOS, runtime.GOARCH)
	return platform{}
}

// TestNPMPackages checks the seven tarballs: names, versions, os/cpu, the
// launcher's optional dependencies, no install scripts, public scoped
// packages, and each platform's binary.
func TestNPMPackages(t *testing.T) {
	b := builtArtifacts(t)
	want := []string{tarball(launcherName, b.version)}
	for _, p := range platforms {
		want = append(want, tarball(p.npmName(), b.version))
	}
	entries, err := os.ReadDir(b.npmDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("%s holds %v, want %v", b.npmDir, got, want)
	}

	t.Run("launcher", func(t *testing.T) {
		files, pkg := readTarball(t, filepath.Join(b.npmDir, want[0]))
		wantFiles := []string{"package/LICENSE", "package/README.md", "package/bin/mcp-server-memory.js", "package/package.json"}
		if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, wantFiles) {
			t.Errorf("files %v, want %v", names, wantFiles)
		}
		checkLicense(t, files, pkg)
		if pkg.Name != launcherName || pkg.Version != b.version {
			t.Errorf("name %q version %q, want %q %q", pkg.Name, pkg.Version, launcherName, b.version)
		}
		if !maps.Equal(pkg.Bin, map[string]string{"mcp-server-memory": "bin/mcp-server-memory.js"}) {
			t.Errorf("bin %v", pkg.Bin)
		}
		wantOptional := map[string]string{}
		for _, p := range platforms {
			wantOptional[p.npmName()] = b.version
		}
		if !maps.Equal(pkg.OptionalDependencies, wantOptional) || len(pkg.Dependencies) != 0 {
			t.Errorf("optionalDependencies %v, dependencies %v; want exactly %v", pkg.OptionalDependencies, pkg.Dependencies, wantOptional)
		}
		if len(pkg.Scripts) != 0 {
			t.Errorf("scripts %v: the packages must run nothing at install", pkg.Scripts)
		}
		if pkg.PublishConfig.Access != "public" {
			t.Errorf("publishConfig.access %q: a scoped package is private unless it says public", pkg.PublishConfig.Access)
		}
	})
	for i, p := range platforms {
		t.Run(p.os+"-"+p.cpu, func(t *testing.T) {
			files, pkg := readTarball(t, filepath.Join(b.npmDir, want[i+1]))
			wantFiles := []string{"package/LICENSE", "package/README.md", "package/bin/" + p.exe(), "package/package.json"}
			if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, wantFiles) {
				t.Errorf("files %v, want %v", names, wantFiles)
			}
			checkLicense(t, files, pkg)
			if pkg.Name != p.npmName() || pkg.Version != b.version || !slices.Equal(pkg.OS, []string{p.os}) || !slices.Equal(pkg.CPU, []string{p.cpu}) {
				t.Errorf("name %q version %q os %v cpu %v; want %q %q [%s] [%s]", pkg.Name, pkg.Version, pkg.OS, pkg.CPU, p.npmName(), b.version, p.os, p.cpu)
			}
			if pkg.PublishConfig.Access != "public" {
				t.Errorf("publishConfig.access %q, want public", pkg.PublishConfig.Access)
			}
			if len(pkg.Scripts) != 0 || len(pkg.Bin) != 0 || len(pkg.Dependencies)+len(pkg.OptionalDependencies) != 0 {
				t.Errorf("scripts %v bin %v dependencies %v %v: want none", pkg.Scripts, pkg.Bin, pkg.Dependencies, pkg.OptionalDependencies)
			}
			bin, ok := files["package/bin/"+p.exe()]
			if !ok {
				return
			}
			if p.goos != "windows" && bin.mode&0o111 == 0 {
				t.Errorf("the binary is not executable (mode %v)", bin.mode)
			}
			checkBinary(t, b, bin.data, p)
		})
	}
}

// checkLicense asserts that a package says it is MIT-licensed and carries
// the repository's LICENSE.
func checkLicense(t *testing.T, files map[string]archived, pkg packageJSON) {
	t.Helper()
	if pkg.License != "MIT" {
		t.Errorf("license %q, want MIT", pkg.License)
	}
	want, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if got := files["package/LICENSE"]; !bytes.Equal(got.data, want) {
		t.Errorf("package/LICENSE is not the repository's LICENSE:\n%s", got.data)
	}
}

func readTarball(t *testing.T, path string) (map[string]archived, packageJSON) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string]archived{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = archived{body, h.FileInfo().Mode()}
	}
	var pkg packageJSON
	if err := json.Unmarshal(files["package/package.json"].data, &pkg); err != nil {
		t.Fatalf("%s: package/package.json: %v", path, err)
	}
	return files, pkg
}

// npmWorld is an npm set up to reach no registry: a closed, counting one,
// an empty cache, no user configuration, and --offline.
type npmWorld struct {
	env      []string
	requests atomic.Int64
}

func newNPMWorld(t *testing.T) *npmWorld {
	t.Helper()
	w := &npmWorld{}
	registry := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.requests.Add(1)
		t.Errorf("npm asked the registry for %s", r.URL)
		http.NotFound(rw, r)
	}))
	t.Cleanup(registry.Close)
	dir := t.TempDir()
	userconfig := filepath.Join(dir, "npmrc")
	if err := os.WriteFile(userconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToLower(k), "npm_config_") && k != "MEMORY_FILE_PATH" && k != "NODE_OPTIONS" {
			w.env = append(w.env, kv)
		}
	}
	w.env = append(w.env,
		"npm_config_registry="+registry.URL+"/",
		"npm_config_cache="+filepath.Join(dir, "cache"),
		"npm_config_userconfig="+userconfig,
		"npm_config_offline=true",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
	)
	return w
}

// npm runs an npm command in dir and fails the test if it fails.
func (w *npmWorld) npm(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir, cmd.Env = dir, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// install installs the given tarballs into a new, empty prefix.
func (w *npmWorld) install(t *testing.T, tarballs ...string) string {
	t.Helper()
	prefix := t.TempDir()
	w.npm(t, prefix, append([]string{"install"}, tarballs...)...)
	return prefix
}

// command runs a program in the prefix with the world's environment.
func (w *npmWorld) command(prefix string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = prefix
	cmd.Env = append(slices.Clip(w.env), env...)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// TestNPXInstallAndRun installs the launcher's and this platform's tarballs
// into an empty prefix with no registry and drives the server through npx
// (and the launcher) as an MCP client does.
func TestNPXInstallAndRun(t *testing.T) {
	b := builtArtifacts(t)
	if runtime.GOOS != "linux" {
		t.Skip("signals and process checks use Linux's /proc")
	}
	host := hostPlatform(t)
	w := newNPMWorld(t)
	prefix := w.install(t, filepath.Join(b.npmDir, tarball(launcherName, b.version)), filepath.Join(b.npmDir, tarball(host.npmName(), b.version)))
	installed, _ := os.ReadDir(filepath.Join(prefix, "node_modules", "@kgmemory"))
	var names []string
	for _, e := range installed {
		names = append(names, "@kgmemory/"+e.Name())
	}
	if want := []string{launcherName, host.npmName()}; !slices.Equal(names, want) {
		t.Fatalf("installed %v, want %v", names, want)
	}
	binary, err := filepath.EvalSymlinks(filepath.Join(prefix, "node_modules", host.npmName(), "bin", host.exe()))
	if err != nil {
		t.Fatal(err)
	}
	launcherJS := filepath.Join(prefix, "node_modules", launcherName, "bin", "mcp-server-memory.js")
	npx := func(env []string, args ...string) *exec.Cmd {
		return w.command(prefix, env, "npx", append([]string{"--offline"}, args...)...)
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("session "+version, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			cmd := npx([]string{"MEMORY_FILE_PATH=" + file}, "mcp-server-memory")
			cs := connect(t, cmd, version)
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var toolNames []string
			for _, tool := range tools.Tools {
				toolNames = append(toolNames, tool.Name)
			}
			wantTools := []string{"add_observations", "create_entities", "create_relations", "delete_entities", "delete_observations", "delete_relations", "open_nodes", "read_graph", "search_nodes"}
			if slices.Sort(toolNames); !slices.Equal(toolNames, wantTools) {
				t.Errorf("tools %v, want %v", toolNames, wantTools)
			}
			callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
				{"name": "Alice", "entityType": "person", "observations": []string{"Lives in 東京", "Говорит по-русски"}},
				{"name": "Bob", "entityType": "person", "observations": []string{}},
			}})
			res := callTool(t, cs, "search_nodes", map[string]any{"query": "東京"})
			if got := entityNames(t, res); !slices.Equal(got, []string{"Alice"}) {
				t.Errorf("search_nodes 東京 found %v, want [Alice]", got)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://knowledge-graph"})
			if err != nil {
				t.Fatal(err)
			}
			var g struct{ Entities []struct{ Name string } }
			if err := json.Unmarshal([]byte(rr.Contents[0].Text), &g); err != nil || len(g.Entities) != 2 || g.Entities[0].Name != "Alice" {
				t.Errorf("resource %q (%v): want Alice and Bob", rr.Contents[0].Text, err)
			}
			// Closing stdin ends the server, and npx exits 0 after it: the
			// transport waits 20 s before it would send SIGTERM itself. At
			// its clean exit the server folds its journal into the file.
			closeAndCheckExit(t, cs, cmd, 0)
			wantFile := `{"type":"entity","name":"Alice","entityType":"person","observations":["Lives in 東京","Говорит по-русски"]}` + "\n" +
				`{"type":"entity","name":"Bob","entityType":"person","observations":[]}` + "\n"
			if data, _ := os.ReadFile(file); withoutTimes(string(data)) != wantFile {
				t.Errorf("memory file without its times:\n%s\nwant:\n%s", data, wantFile)
			}
		})
	}

	t.Run("README command names the release", func(t *testing.T) {
		out, err := npx(nil, "-y", launcherName, "--version").Output()
		if err != nil {
			t.Fatalf("npx -y %s --version: %v", launcherName, err)
		}
		checkVersionLine(t, b, string(out))
	})

	t.Run("default memory file beside the binary", func(t *testing.T) {
		cmd := npx(nil, "mcp-server-memory")
		cs := connect(t, cmd, "2025-11-25")
		callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{{"name": "Carol", "entityType": "person", "observations": []string{}}}})
		closeAndCheckExit(t, cs, cmd, 0)
		want := filepath.Join(filepath.Dir(binary), "memory.jsonl")
		if data, err := os.ReadFile(want); err != nil || !strings.Contains(string(data), `"Carol"`) {
			t.Errorf("memory file %s: %q, %v", want, data, err)
		}
		os.Remove(want)
	})

	t.Run("stdin EOF at once", func(t *testing.T) {
		cmd := npx([]string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, "mcp-server-memory")
		cmd.Stdin = strings.NewReader("")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("npx mcp-server-memory with empty stdin: %v, want exit 0\n%s", err, out)
		}
	})

	t.Run("exit code", func(t *testing.T) {
		for _, run := range []*exec.Cmd{
			npx(nil, "mcp-server-memory", "--no-such-flag"),
			w.command(prefix, nil, "node", launcherJS, "--no-such-flag"),
		} {
			var stderr bytes.Buffer
			run.Stderr = &stderr
			err := run.Run()
			if code := run.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), "no-such-flag") {
				t.Errorf("%v: exit code %d (%v), stderr %q; want the server's 2 and its message", run.Args, code, err, stderr.String())
			}
		}
	})

	// A client stops its server with SIGTERM, to npx (whose shell does not
	// pass it on: the launcher notices it lost its parent) or to the
	// launcher itself. Sent while a write holds the lock, the server must
	// finish or abandon the write whole and release the lock.
	for _, target := range []string{"npx", "launcher"} {
		t.Run("SIGTERM to "+target+" during a write", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			cmd := npx([]string{"MEMORY_FILE_PATH=" + file}, "mcp-server-memory")
			if target == "launcher" {
				cmd = w.command(prefix, []string{"MEMORY_FILE_PATH=" + file}, "node", launcherJS)
			}
			cs := connect(t, cmd, "2025-11-25")
			callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{{"name": "Alice", "entityType": "person", "observations": []string{"first"}}}})
			server := findProcess(t, binary, "MEMORY_FILE_PATH="+file)
			launcher := parentPID(t, server)
			signalDuringWrite(t, cs, cmd, file, server, launcher)
			cs.Close()
			if target == "launcher" && cmd.ProcessState.ExitCode() != 0 {
				t.Errorf("the launcher ended with %v, want exit 0 (the server's clean shutdown)", cmd.ProcessState)
			}
		})
	}

	t.Run("launcher forwards signals", func(t *testing.T) {
		for _, tc := range []struct {
			sig        syscall.Signal
			wantSignal bool // the server dies of it, so the launcher re-raises it
		}{
			{syscall.SIGTERM, false},
			{syscall.SIGINT, false},
			{syscall.SIGHUP, true},
		} {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			cmd := w.command(prefix, []string{"MEMORY_FILE_PATH=" + file}, "node", launcherJS)
			cs := connect(t, cmd, "2025-11-25")
			callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{{"name": "Alice", "entityType": "person", "observations": []string{}}}})
			server := findProcess(t, binary, "MEMORY_FILE_PATH="+file)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			waitGone(t, server, "the server")
			cs.Close()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tc.wantSignal && !(ws.Signaled() && ws.Signal() == tc.sig):
				t.Errorf("%v: the launcher ended with %v, want death by %v as the server's", tc.sig, cmd.ProcessState, tc.sig)
			case !tc.wantSignal && cmd.ProcessState.ExitCode() != 0:
				t.Errorf("%v: the launcher ended with %v, want exit 0 (the server's clean shutdown)", tc.sig, cmd.ProcessState)
			}
			if _, err := os.Stat(file + ".lock"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%v: the lock file is left behind (%v)", tc.sig, err)
			}
		}
	})

	t.Run("no binary for this platform", func(t *testing.T) {
		fake := filepath.Join(t.TempDir(), "ppc64.js")
		if err := os.WriteFile(fake, []byte("Object.defineProperty(process, 'arch', { value: 'ppc64' });\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := w.command(prefix, nil, "node", "--require", fake, launcherJS)
		checkOneLineError(t, cmd, launcherName+": no binary for this platform ("+runtime.GOOS+"-ppc64); supported: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64.")
	})

	t.Run("platform package not installed", func(t *testing.T) {
		bare := w.install(t, filepath.Join(b.npmDir, tarball(launcherName, b.version)), "--omit=optional")
		cmd := w.command(bare, nil, "npx", "--offline", "mcp-server-memory")
		checkOneLineError(t, cmd, launcherName+": the package "+host.npmName()+" holding this platform's binary is not installed")
	})

	if n := w.requests.Load(); n != 0 {
		t.Errorf("npm sent %d requests to the registry; the tarballs must install and run with none", n)
	}
}

func connect(t *testing.T, cmd *exec.Cmd, version string) *mcp.ClientSession {
	t.Helper()
	cmd.Stderr = testlog.OnFailure(t, "stderr of "+strings.Join(cmd.Args, " "))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "packaging-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %v at %s: %v", cmd.Args, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %+v", name, res.Content)
	}
	return res
}

func entityNames(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	data, _ := json.Marshal(res.StructuredContent)
	var g struct{ Entities []struct{ Name string } }
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range g.Entities {
		names = append(names, e.Name)
	}
	return names
}

// closeAndCheckExit closes the session's stdin and checks how the command
// ended.
func closeAndCheckExit(t *testing.T, cs *mcp.ClientSession, cmd *exec.Cmd, want int) {
	t.Helper()
	start := time.Now()
	cs.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != want || time.Since(start) > 15*time.Second {
		t.Errorf("after stdin closed: %v after %v, want exit code %d at once", cmd.ProcessState, time.Since(start), want)
	}
}

func checkOneLineError(t *testing.T, cmd *exec.Cmd, wantPrefix string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], wantPrefix) {
		t.Errorf("stderr %q, want one line starting %q", stderr.String(), wantPrefix)
	}
}

// findProcess returns the one process running the executable whose
// environment holds envEntry.
func findProcess(t *testing.T, executable, envEntry string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var found []int
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if err != nil || exe != executable {
				continue
			}
			environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if slices.Contains(strings.Split(string(environ), "\x00"), envEntry) {
				found = append(found, pid)
			}
		}
		if len(found) == 1 {
			return found[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes running %s with %s: %v, want one", executable, envEntry, found)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parentPID(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return ppid
		}
	}
	t.Fatalf("no PPid in /proc/%d/status", pid)
	return 0
}

// waitGone waits until pid has exited (a zombie counts as exited).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs 15 s after the signal", what, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signalDuringWrite sends a write big enough to take a while (parsing and
// saving 20,000 entities), SIGTERMs cmd as soon as the write has taken the
// lock, and checks that the server and the launcher end, the lock is
// released, and the write is in the file whole or not at all.
func signalDuringWrite(t *testing.T, cs *mcp.ClientSession, cmd *exec.Cmd, file string, server, launcher int) {
	t.Helper()
	const n = 20000
	var batch []map[string]any
	for i := range n {
		batch = append(batch, map[string]any{"name": fmt.Sprintf("entity %d", i), "entityType": "thing", "observations": []string{strings.Repeat("an observation ", 8)}})
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{"entities": batch}})
	locked := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(file + ".lock"); err == nil {
			locked = true
			break
		}
	}
	if !locked {
		t.Fatal("the write never took the lock")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, server, "the server")
	waitGone(t, launcher, "the launcher")
	if _, err := os.Stat(file + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file %s.lock is left behind (%v)", file, err)
	}
	count := 0
	data, _ := os.ReadFile(file)
	for line := range strings.Lines(string(data)) {
		if !json.Valid([]byte(line)) {
			t.Fatalf("memory file line %q is not JSON", line)
		}
		count++
	}
	if count != 1 && count != 1+n {
		t.Errorf("memory file has %d lines after SIGTERM, want 1 (the write abandoned) or %d (finished)", count, 1+n)
	}
	t.Logf("SIGTERM while the write held the lock: the write was %s", map[bool]string{true: "finished", false: "abandoned"}[count > 1])
}

// timeMembers are the members the server adds to a line to say when its
// facts were learned: what the reference would drop, and the only part of
// a line that changes from run to run.
var timeMembers = regexp.MustCompile(`,"(createdAt|updatedAt|observationsHash)":"[^"]*"|,"observationTimes":\[[^\]]*\]`)

// withoutTimes is a memory file's text with its lines' time members
// removed.
func withoutTimes(file string) string { return timeMembers.ReplaceAllString(file, "") }
