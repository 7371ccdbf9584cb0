package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import refuses what it cannot hold, with exit 1 and a message, and leaves
// the memory as it was: a device that never ends (/dev/zero crashed the
// command out of memory), a named pipe (opening one waits for a writer), a
// directory, and a file over the size limit (sparse: no disk is used).
func TestImportRefusesWhatItCannotHold(t *testing.T) {
	dir := t.TempDir()
	memory := filepath.Join(dir, "memory.jsonl")
	huge := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxImportSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cases := []struct{ name, file, want string }{
		{"directory", dir, "is a directory, not a regular file"},
		{"too big", huge, "is bigger than 1 GiB, the most import reads at once"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ name, file, want string }{"device", "/dev/zero", "/dev/zero is a character device, not a regular file"})
	}
	if fifo := filepath.Join(dir, "fifo"); mkfifo(fifo) == nil {
		cases = append(cases, struct{ name, file, want string }{"named pipe", fifo, "is a named pipe, not a regular file"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run([]string{"import", "--file", memory, c.file}, strings.NewReader(""), &stdout, &stderr)
			if code != exitFailed {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitFailed, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "nothing was imported") {
				t.Errorf("stderr %q; want it to say %q and that nothing was imported", stderr.String(), c.want)
			}
			if _, err := os.Stat(memory); !os.IsNotExist(err) {
				t.Errorf("the memory file exists after a refused import (%v)", err)
			}
		})
	}
}

// readJSONExport decodes an export one element at a time; what is not one
// JSON object with entities or relations is left to the JSON Lines reader.
func TestReadJSONExport(t *testing.T) {
	for _, c := range []struct {
		name, data string
		ok         bool
		err        string
		entities   int
		relations  int
	}{
		{"export", `{"entities":[{"name":"A","entityType":"t","observations":["o"]}],"relations":[{"from":"A","to":"A","relationType":"r"}]}`, true, "", 1, 1},
		{"relations first", `{"relations":[{"from":"A","to":"B","relationType":"r"}],"other":{"x":[1]},"entities":[{"name":"A","entityType":"t"},{"name":"B","entityType":"t"}]}`, true, "", 2, 1},
		{"null lists", "\xef\xbb\xbf" + `{"entities":null,"relations":[]}`, true, "", 0, 0},
		{"missing member", `{"entities":[{"name":"A","entityType":"t"},{"name":"B"}]}`, true, "entity 2 lacks name or entityType", 0, 0},
		{"wrong type", `{"entities":[{"name":"A","entityType":"t","observations":"o"}]}`, true, "entities: json: cannot unmarshal string", 0, 0},
		{"not an array", `{"relations":{}}`, true, "relations: want an array, not an object", 0, 0},
		{"json lines", "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[]}\n{\"type\":\"entity\",\"name\":\"B\",\"entityType\":\"t\",\"observations\":[]}\n", false, "", 0, 0},
		{"export and more", `{"entities":[]}` + "\n{}", false, "", 0, 0},
		{"broken", `{"entities":[{"name":"A"`, false, "", 0, 0},
		{"no lists", `{"name":"A"}`, false, "", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap, ok, err := readJSONExport([]byte(c.data))
			if ok != c.ok || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("ok %v, err %v; want ok %v, err containing %q", ok, err, c.ok, c.err)
			}
			if len(snap.Entities) != c.entities || len(snap.Relations) != c.relations {
				t.Errorf("%d entities, %d relations; want %d, %d", len(snap.Entities), len(snap.Relations), c.entities, c.relations)
			}
		})
	}
}
