package graph

import "hash/maphash"

// obsTable finds an observation of a long entity by its text: an open
// addressing table of positions in Entity.Observations (plus one; 0 is an
// empty slot), probed linearly from the text's hash. It costs 4 to 8 bytes
// per observation where a map of the texts cost about 40 (a string header
// per entry and the map's overhead), and it holds no strings of its own.
type obsTable []uint32

// ref returns t where an entity keeps it.
func (t obsTable) ref() *obsTable { return &t }

var obsSeed = maphash.MakeSeed()

// newObsTable indexes every observation of obs, which are distinct.
func newObsTable(obs []string) obsTable {
	size := 64
	for size < 2*len(obs) {
		size *= 2
	}
	t := make(obsTable, size)
	for i, o := range obs {
		t.insert(o, i)
	}
	return t
}

// slot returns where o is in t, or the empty slot where it would go.
func (t obsTable) slot(obs []string, o string) int {
	mask := len(t) - 1
	for i := int(maphash.String(obsSeed, o)) & mask; ; i = (i + 1) & mask {
		if p := t[i]; p == 0 || obs[p-1] == o {
			return i
		}
	}
}

func (t obsTable) has(obs []string, o string) bool { return t[t.slot(obs, o)] != 0 }

func (t obsTable) insert(o string, at int) {
	mask := len(t) - 1
	i := int(maphash.String(obsSeed, o)) & mask
	for t[i] != 0 {
		i = (i + 1) & mask
	}
	t[i] = uint32(at + 1)
}

// added records that obs's last observation was just appended, and returns
// the table to use from now on: the same one, or a bigger one when more
// than half of its slots are taken.
func (t obsTable) added(obs []string) obsTable {
	if 2*len(obs) > len(t) {
		return newObsTable(obs)
	}
	t.insert(obs[len(obs)-1], len(obs)-1)
	return t
}
