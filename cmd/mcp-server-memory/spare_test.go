package main

import (
	"runtime"
	"testing"
)

// TestSpareProcessor checks that the process runs with one processor more
// while any caller holds it, and as before once every caller restored.
func TestSpareProcessor(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	first := spareProcessor()
	second := spareProcessor()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("GOMAXPROCS %d while held, want %d", got, before+1)
	}
	first()
	first() // twice is once
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("GOMAXPROCS %d while one caller still holds it, want %d", got, before+1)
	}
	second()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS %d after, want %d", got, before)
	}
}

// TestSpareProcessorLeavesTheUsersChoice: GOMAXPROCS in the environment
// is the user's.
func TestSpareProcessorLeavesTheUsersChoice(t *testing.T) {
	t.Setenv("GOMAXPROCS", "1")
	before := runtime.GOMAXPROCS(0)
	restore := spareProcessor()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d with the variable set, want %d", got, before)
	}
	restore()
}
