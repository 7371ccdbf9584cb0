package main

import (
	"slices"
	"time"
)

// Summary describes a set of latency samples.
type Summary struct {
	Count          int
	P50, P95, P99  time.Duration
	Min, Max, Mean time.Duration
}

// summarize computes the percentiles of samples (which it does not modify).
// An empty set gives the zero Summary.
func summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var total time.Duration
	for _, d := range sorted {
		total += d
	}
	return Summary{
		Count: len(sorted),
		P50:   percentile(sorted, 50),
		P95:   percentile(sorted, 95),
		P99:   percentile(sorted, 99),
		Min:   sorted[0],
		Max:   sorted[len(sorted)-1],
		Mean:  total / time.Duration(len(sorted)),
	}
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted samples by
// the nearest-rank method: the smallest sample such that at least p percent
// of the samples are less than or equal to it. Every reported value is a
// latency that was actually observed; with 30 samples p99 is the maximum.
func percentile(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ceil(p/100 * n) in integers: no float rounding
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}
