package packaging

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const imageMemoryFile = "/app/dist/memory.jsonl"

// TestDockerImage builds the Dockerfile's final stage with podman from the
// release binary (these machines cannot pull the golang image the build
// stage starts from, nor run containers), then checks the image as the
// README describes it and runs its binary, chrooted into the image's
// exported file system with the image's environment, on the memory file in
// /app/dist.
func TestDockerImage(t *testing.T) {
	b := builtArtifacts(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || os.Geteuid() != 0 {
		t.Skip("builds a linux/amd64 image and chroots: needs root on linux/amd64")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (scripts/test-packaging.sh installs it in CI)")
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(dockerfile), "\nFROM ")
	buildStage, finalStage := string(dockerfile[:i]), string(dockerfile[i+1:])
	if !strings.HasPrefix(finalStage, "FROM scratch\n") {
		t.Fatalf("the final stage starts %q, want FROM scratch", strings.SplitN(finalStage, "\n", 2)[0])
	}
	// The build stage must build as scripts/release-lib.sh does.
	for _, want := range []string{"CGO_ENABLED=0 go build -trimpath", "-s -w -X main.releaseVersion=${VERSION} -X main.releaseCommit=${COMMIT}"} {
		if !strings.Contains(buildStage, want) {
			t.Errorf("the Dockerfile's build stage lacks %q", want)
		}
	}

	// The build context holds what the build stage leaves in /out.
	ctxDir := t.TempDir()
	name := fmt.Sprintf("mcp-server-memory_%s_linux_amd64", b.version)
	data, err := os.ReadFile(filepath.Join(b.relDir, name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	bin := readArchive(t, name, data)[name+"/mcp-server-memory"]
	if err := os.MkdirAll(filepath.Join(ctxDir, "out", "app", "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "out", "mcp-server-memory"), bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(strings.ReplaceAll(finalStage, "COPY --from=build ", "COPY ")), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("localhost/kgmemory/server-memory:packaging-test-%d", os.Getpid())
	podman(t, "build", "--quiet", "--tag", tag, ctxDir)
	t.Cleanup(func() { exec.Command("podman", "rmi", "--force", tag).Run() })

	var inspected []struct {
		Config struct {
			Entrypoint []string
			Env        []string
			Cmd        []string
		}
	}
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", tag)), &inspected); err != nil || len(inspected) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	config := inspected[0].Config
	if !slices.Equal(config.Entrypoint, []string{"/usr/local/bin/mcp-server-memory"}) || len(config.Cmd) != 0 {
		t.Errorf("entry point %q, command %q; want the binary alone, so `docker run … IMAGE --http …` passes flags to it", config.Entrypoint, config.Cmd)
	}
	if !slices.Contains(config.Env, "MEMORY_FILE_PATH="+imageMemoryFile) {
		t.Errorf("environment %q lacks MEMORY_FILE_PATH=%s", config.Env, imageMemoryFile)
	}

	container := strings.TrimSpace(podman(t, "create", tag))
	t.Cleanup(func() { exec.Command("podman", "rm", "--force", container).Run() })
	rootfs := filepath.Join(t.TempDir(), "rootfs.tar")
	podman(t, "export", "--output", rootfs, container)
	entries := listTar(t, rootfs)
	wantEntries := []string{"app/", "app/dist/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/mcp-server-memory"}
	if !slices.Equal(entries, wantEntries) {
		t.Errorf("the image's files are %v, want %v: the binary outside /app/dist and an empty /app/dist for the volume", entries, wantEntries)
	}

	// Run the image's binary in its own file system, as a container would:
	// a chroot with /proc mounted and only the image's environment.
	root := t.TempDir()
	if out, err := exec.Command("tar", "-C", root, "-xf", rootfs).CombinedOutput(); err != nil {
		t.Fatalf("unpacking the exported file system: %v\n%s", err, out)
	}
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o555); err != nil {
		t.Fatal(err)
	}
	inImage := func(args ...string) *exec.Cmd {
		cmd := exec.Command("unshare", append([]string{"--mount", "--pid", "--fork", "--mount-proc=" + filepath.Join(root, "proc"), "chroot", root}, append(config.Entrypoint, args...)...)...)
		cmd.Env = config.Env
		return cmd
	}
	out, err := inImage("--version").Output()
	if err != nil {
		t.Fatalf("the image's binary --version: %v", err)
	}
	checkVersionLine(t, b, string(out))

	cmd := inImage()
	cs := connect(t, cmd, "2025-11-25")
	callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{{"name": "Alice", "entityType": "person", "observations": []string{"kept in the volume"}}}})
	if got := entityNames(t, callTool(t, cs, "search_nodes", map[string]any{"query": "volume"})); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("search_nodes found %v, want [Alice]", got)
	}
	closeAndCheckExit(t, cs, cmd, 0)
	file := filepath.Join(root, imageMemoryFile)
	data, err = os.ReadFile(file)
	want := `{"type":"entity","name":"Alice","entityType":"person","observations":["kept in the volume"]}` + "\n"
	if err != nil || withoutTimes(string(data)) != want {
		t.Errorf("%s in the image: %q (%v), want %q", imageMemoryFile, data, err, want)
	}
}

func podman(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("podman", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func listTar(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimPrefix(h.Name, "./"))
	}
	slices.Sort(names)
	return names
}
