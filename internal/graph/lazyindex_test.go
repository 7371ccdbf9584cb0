package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSearchIndexesBuiltInSteps writes at random while both search
// indexes are built a step at a time (Graph.IndexStep, as BuildIndexes runs
// them in the background), dropping them now and then so builds start
// over, and checks every few writes that each index, finished by the
// search that needs it, holds what a fresh build holds.
func TestSearchIndexesBuiltInSteps(t *testing.T) {
	defer func(slack int) { rebuildSlack = slack }(rebuildSlack)
	rebuildSlack = 16
	rng := rand.New(rand.NewPCG(uint64(*quickSeed), 11))
	w := &randomWrites{rng: rng, vocab: []string{"support group", "groups", "Caroline", "Москва", "группа", "東京都", "the", "tea", "teas", "works_at", "knows"}}
	g := New()
	var history []string
	writesWhileBuilding, finished := 0, 0
	for step := range 2000 {
		if g.idx.building != nil || g.words.building != nil {
			writesWhileBuilding++
		}
		if what := w.write(t, g); what != "" {
			history = append(history, what)
		}
		switch n := rng.IntN(40); {
		case n < 4:
			g.idx.x, g.words.x = nil, nil
		case n < 14:
			if g.IndexStep(1 + rng.IntN(3)) {
				finished++
			}
		}
		if step%11 == 0 {
			checkIndexesFresh(t, g, step, history)
			checkScores(t, g, step, w.text(), history)
		}
	}
	if writesWhileBuilding < 100 || finished == 0 {
		t.Errorf("%d writes while an index was being built, %d steps finished both: the run did not test the steps", writesWhileBuilding, finished)
	}
}

// TestIndexStepGivesWay: a step stops at the next entity when a search
// waits for the search lock, and goes on when none does.
func TestIndexStepGivesWay(t *testing.T) {
	g := New()
	for i := range 100 {
		g.LoadEntity(Entity{Name: string(rune('a'+i%26)) + string(rune('A'+i/26)), EntityType: "thing"})
	}
	g.searchMu.waiting.Add(1) // a search waiting
	if g.IndexStep(1000) {
		t.Fatal("a step with a search waiting finished the build")
	}
	if n := len(g.idx.building.byID) - 1; n != 0 {
		t.Fatalf("a step with a search waiting indexed %d entities", n)
	}
	g.searchMu.waiting.Add(-1)
	if !g.IndexStep(1000) {
		t.Fatal("a step of 1000 entities with no search waiting did not finish the build of 100")
	}
}

// viewStore is a Store of one graph whose Views are counted.
type viewStore struct {
	g     *Graph
	views int
}

func (s *viewStore) View(_ context.Context, fn func(*Graph) error) error {
	s.views++
	return fn(s.g)
}
func (s *viewStore) Update(context.Context, Write) (bool, error)  { return false, nil }
func (s *viewStore) Watch(context.Context, time.Duration, func()) {}

// TestViewIndexedBuildsInSteps checks that ViewIndexed runs fn once, on
// whole indexes built a step per View, that it stops with ctx's error, and
// that on a graph already indexed it is fn's View alone.
func TestViewIndexedBuildsInSteps(t *testing.T) {
	g := New()
	for i := range 3 * indexStepLen {
		g.LoadEntity(Entity{Name: fmt.Sprintf("e%d", i), EntityType: "t", Observations: []string{"plays the violin"}})
	}
	s := &viewStore{g: g}
	runs := 0
	fn := func(g *Graph) error {
		runs++
		if g.idx.x == nil || g.words.x == nil {
			t.Error("fn ran on a graph whose indexes are not whole")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ViewIndexed(ctx, s, fn); !errors.Is(err, context.Canceled) || runs != 0 {
		t.Fatalf("ViewIndexed with an ended context = %v after %d runs of fn, want %v and none", err, runs, context.Canceled)
	}
	if err := ViewIndexed(context.Background(), s, fn); err != nil || runs != 1 {
		t.Fatalf("ViewIndexed = %v after %d runs of fn, want no error and one", err, runs)
	}
	if s.views < 3 { // three steps, each of both indexes side by side
		t.Errorf("ViewIndexed built %d entities in %d Views, want a step of %d per View", 3*indexStepLen, s.views, indexStepLen)
	}
	views := s.views
	errFn := errors.New("fn failed")
	if err := ViewIndexed(context.Background(), s, func(*Graph) error { return errFn }); err != errFn {
		t.Errorf("ViewIndexed = %v, want fn's error", err)
	}
	if s.views != views+1 {
		t.Errorf("ViewIndexed on a graph already indexed took %d Views, want 1 (fn's)", s.views-views)
	}
}

// contendedStore is a viewStore that says a write waits for it during its
// first View (Contended).
type contendedStore struct {
	viewStore
	indexedInFirst int // entities the first View's step indexed
}

func (s *contendedStore) ExclusiveWanted() bool { return s.views == 1 }

func (s *contendedStore) View(ctx context.Context, fn func(*Graph) error) error {
	err := s.viewStore.View(ctx, fn)
	if s.views == 1 {
		s.indexedInFirst = len(s.g.idx.building.byID) - 1 + len(s.g.words.building.byID) - 1
	}
	return err
}

// TestViewIndexedGivesWayToWrites: a step of ViewIndexed stops at the
// next entity while the store says a write waits for it, and the build
// goes on once none does.
func TestViewIndexedGivesWayToWrites(t *testing.T) {
	g := New()
	for i := range 3 * indexStepLen {
		g.LoadEntity(Entity{Name: fmt.Sprintf("e%d", i), EntityType: "t", Observations: []string{"plays the violin"}})
	}
	s := &contendedStore{viewStore: viewStore{g: g}}
	runs := 0
	if err := ViewIndexed(context.Background(), s, func(*Graph) error { runs++; return nil }); err != nil || runs != 1 {
		t.Fatalf("ViewIndexed = %v after %d runs of fn, want no error and one", err, runs)
	}
	if s.indexedInFirst != 0 {
		t.Errorf("the step with a write waiting indexed %d entities, want none", s.indexedInFirst)
	}
	if g.idx.x == nil || g.words.x == nil {
		t.Error("the build did not finish once no write waited")
	}
}

// TestRWMutexCountsWriters: Wanted reports a caller waiting in Lock, and
// no longer once it has the lock.
func TestRWMutexCountsWriters(t *testing.T) {
	var m RWMutex
	if m.Wanted() {
		t.Fatal("Wanted with nobody waiting")
	}
	m.RLock()
	locked := make(chan struct{})
	go func() {
		m.Lock()
		close(locked)
	}()
	for deadline := time.Now().Add(10 * time.Second); !m.Wanted(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Wanted stayed false while Lock waited for a reader")
		}
	}
	m.RUnlock()
	<-locked
	if m.Wanted() {
		t.Error("Wanted still true once Lock returned")
	}
	m.Unlock()
}
