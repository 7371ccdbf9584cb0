package main

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted on purpose: summarize sorts
	}
	thirty := make([]int, 30)
	for i := range thirty {
		thirty[i] = i + 1
	}
	tests := []struct {
		name          string
		samples       []time.Duration
		p50, p95, p99 time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one sample", ms(7), ms(7)[0], ms(7)[0], ms(7)[0]},
		{"1..100", ms(hundred...), 50 * time.Millisecond, 95 * time.Millisecond, 99 * time.Millisecond},
		{"1..30: p99 is the max", ms(thirty...), 15 * time.Millisecond, 29 * time.Millisecond, 30 * time.Millisecond},
		{"two samples", ms(10, 20), 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond},
		{"one outlier in five", ms(1, 1, 1, 1, 100), time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(tt.samples)
			if s.P50 != tt.p50 || s.P95 != tt.p95 || s.P99 != tt.p99 {
				t.Errorf("p50/p95/p99 = %v/%v/%v, want %v/%v/%v", s.P50, s.P95, s.P99, tt.p50, tt.p95, tt.p99)
			}
			if s.Count != len(tt.samples) {
				t.Errorf("count %d, want %d", s.Count, len(tt.samples))
			}
		})
	}
}

func TestSummarizeLeavesSamplesAlone(t *testing.T) {
	samples := []time.Duration{3, 1, 2}
	s := summarize(samples)
	if samples[0] != 3 || samples[1] != 1 || samples[2] != 2 {
		t.Errorf("summarize reordered its input: %v", samples)
	}
	if s.Min != 1 || s.Max != 3 || s.Mean != 2 {
		t.Errorf("min/max/mean = %v/%v/%v, want 1/3/2", s.Min, s.Max, s.Mean)
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("1000, 10k,1M")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1000, 10000, 1000000}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"", "1", "ten", "10,,20", "-5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
}
