// Package packaging tests what a user downloads: the release archives, the
// npm packages installed from their tarballs and run through npx, and the
// Docker image. scripts/test-packaging.sh builds them and runs these tests;
// without it they skip.
package packaging

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// platform is one of the six release targets.
type platform struct {
	goos, goarch string // Go's names
	os, cpu      string // npm's (process.platform, process.arch)
}

var platforms = []platform{
	{"linux", "amd64", "linux", "x64"},
	{"linux", "arm64", "linux", "arm64"},
	{"darwin", "amd64", "darwin", "x64"},
	{"darwin", "arm64", "darwin", "arm64"},
	{"windows", "amd64", "win32", "x64"},
	{"windows", "arm64", "win32", "arm64"},
}

func (p platform) exe() string {
	if p.goos == "windows" {
		return "mcp-server-memory.exe"
	}
	return "mcp-server-memory"
}

func (p platform) isHost() bool { return p.goos == runtime.GOOS && p.goarch == runtime.GOARCH }

// build is what scripts/test-packaging.sh built: its version and commit,
// and the directories holding the npm tarballs and the release archives.
type build struct {
	version, commit string
	npmDir, relDir  string
}

func builtArtifacts(t *testing.T) build {
	t.Helper()
	b := build{
		version: os.Getenv("MCP_SERVER_MEMORY_PACKAGE_VERSION"),
		commit:  os.Getenv("MCP_SERVER_MEMORY_PACKAGE_COMMIT"),
		npmDir:  os.Getenv("MCP_SERVER_MEMORY_NPM_DIR"),
		relDir:  os.Getenv("MCP_SERVER_MEMORY_RELEASE_DIR"),
	}
	if b.version == "" || b.commit == "" || b.npmDir == "" || b.relDir == "" {
		t.Skip("run by scripts/test-packaging.sh, which builds the packages and archives first")
	}
	return b
}

func TestReleaseArchives(t *testing.T) {
	b := builtArtifacts(t)
	sums, err := os.ReadFile(filepath.Join(b.relDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for line := range strings.Lines(string(sums)) {
		sum, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS line %q: want \"<sha256>  <file>\"", line)
		}
		listed[name] = sum
	}
	var want []string
	for _, p := range platforms {
		ext := ".tar.gz"
		if p.goos == "windows" {
			ext = ".zip"
		}
		want = append(want, "mcp-server-memory_"+b.version+"_"+p.goos+"_"+p.goarch+ext)
	}
	entries, _ := os.ReadDir(b.relDir)
	var got []string
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" {
			got = append(got, e.Name())
		}
	}
	slices.Sort(got)
	if wantSorted := slices.Sorted(slices.Values(want)); !slices.Equal(got, wantSorted) {
		t.Fatalf("release directory holds %v, want %v", got, wantSorted)
	}
	for i, p := range platforms {
		name := want[i]
		t.Run(p.goos+"_"+p.goarch, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(b.relDir, name))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if listed[name] != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: SHA256SUMS says %q, the file's digest is %x", name, listed[name], sum)
			}
			dir := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
			files := readArchive(t, name, data)
			checkArchiveDocs(t, name, dir, files, p.exe())
			bin, ok := files[dir+"/"+p.exe()]
			if !ok {
				return
			}
			if p.goos != "windows" && bin.mode&0o111 == 0 {
				t.Errorf("%s: the binary is not executable (mode %v)", name, bin.mode)
			}
			checkBinary(t, b, bin.data, p)
		})
	}
}

// checkArchiveDocs asserts that an archive holds, in dir/, the binary and
// exactly the repository's README.md, LICENSE and docs/, so that the licence
// travels with the binary and every link in the documents that stays inside
// the repository leads to a file in the archive.
func checkArchiveDocs(t *testing.T, name, dir string, files map[string]archived, exe string) {
	t.Helper()
	want := map[string][]byte{}
	for _, doc := range shippedDocs(t) {
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		want[dir+"/"+doc] = data
	}
	wantNames := append(slices.Sorted(maps.Keys(want)), dir+"/"+exe)
	slices.Sort(wantNames)
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, wantNames) {
		t.Errorf("%s holds %v, want %v: the binary, README.md, LICENSE and docs/ in %s/", name, names, wantNames, dir)
	}
	for path, data := range want {
		if got, ok := files[path]; ok && !bytes.Equal(got.data, data) {
			t.Errorf("%s: %s differs from the repository's", name, path)
		}
	}
	for _, doc := range shippedDocs(t) {
		if !strings.HasSuffix(doc, ".md") {
			continue
		}
		for _, target := range relativeLinks(t, doc) {
			if _, ok := files[dir+"/"+target]; !ok && !slices.ContainsFunc(slices.Collect(maps.Keys(files)), func(f string) bool {
				return strings.HasPrefix(f, dir+"/"+strings.TrimSuffix(target, "/")+"/")
			}) {
				t.Errorf("%s: %s links to %s, which the archive does not hold", name, doc, target)
			}
		}
	}
}

type archived struct {
	data []byte
	mode os.FileMode
}

// readArchive returns the regular files of a .tar.gz or .zip archive.
func readArchive(t *testing.T, name string, data []byte) map[string]archived {
	t.Helper()
	files := map[string]archived{}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			files[f.Name] = archived{body, f.Mode()}
		}
		return files
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = archived{body, h.FileInfo().Mode()}
	}
	return files
}

// checkBinary asserts, through `go version -m`, that data is the server
// built for p as the release scripts build it (static, trimmed, stamped with
// the version and commit),
// and runs --version where p is this machine.
func checkBinary(t *testing.T, b build, data []byte, p platform) {
	t.Helper()
	path := filepath.Join(t.TempDir(), p.exe())
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	info := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(strings.TrimSpace(sc.Text()), "\t", 2)
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "path":
			info["path"] = f[1]
		case "build":
			k, v, _ := strings.Cut(f[1], "=")
			info[k] = v
		}
	}
	for k, want := range map[string]string{
		"path":        "github.com/kgmemory/mcp-server-memory/cmd/mcp-server-memory",
		"GOOS":        p.goos,
		"GOARCH":      p.goarch,
		"CGO_ENABLED": "0",
		"-trimpath":   "true",
	} {
		if info[k] != want {
			t.Errorf("%s/%s binary: go version -m shows %s=%q, want %q", p.goos, p.goarch, k, info[k], want)
		}
	}
	// -trimpath keeps -ldflags out of the build information, so look for
	// the stamped strings themselves.
	for _, stamped := range []string{b.version, b.commit} {
		if !bytes.Contains(data, []byte(stamped)) {
			t.Errorf("%s/%s binary: %q is not stamped in it", p.goos, p.goarch, stamped)
		}
	}
	if !p.isHost() {
		return
	}
	ver, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	checkVersionLine(t, b, string(ver))
}

// checkVersionLine asserts that --version names the release, its commit and
// the Go toolchain.
func checkVersionLine(t *testing.T, b build, line string) {
	t.Helper()
	commit, _ := strings.CutSuffix(b.commit, "-dirty")
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if !strings.HasPrefix(line, "mcp-server-memory "+b.version+" (") || !strings.Contains(line, "commit "+commit) ||
		!strings.Contains(line, " go1.") || !strings.Contains(line, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--version printed %q; want the version %s, commit %s, the Go version and the platform", line, b.version, commit)
	}
	if dev := strings.Contains(b.version, "-dev") || strings.HasSuffix(b.commit, "-dirty"); dev != strings.Contains(line, "development build") {
		t.Errorf("--version printed %q: a development build must say so, a release must not", line)
	}
}
