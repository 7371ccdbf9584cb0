package main

import (
	"encoding/json"
	"io"
	"time"
)

// The JSON report: the results as they are, with every duration in
// milliseconds. encoding/json writes it from these types.

type jsonLatency struct {
	Count     int       `json:"count"`
	P50       float64   `json:"p50Ms"`
	P95       float64   `json:"p95Ms"`
	P99       float64   `json:"p99Ms"`
	Min       float64   `json:"minMs"`
	Max       float64   `json:"maxMs"`
	Mean      float64   `json:"meanMs"`
	SamplesMs []float64 `json:"samplesMs"`
}

type jsonTool struct {
	*ToolResult
	Latency jsonLatency `json:"latency"`
	Wire    jsonLatency `json:"wire"`
}

type jsonRun struct {
	Command string      `json:"command"`
	Start   jsonLatency `json:"startToFirstAnswer"`
	*RunResult
	Tools []jsonTool `json:"tools"`
	// Ratio is this server's p50 over the first's per tool label (on
	// every run after the first): theirs/ours, or postgres/file.
	Ratio map[string]float64 `json:"ratioP50,omitempty"`
}

type jsonSize struct {
	N            int                 `json:"n"`
	Entities     int                 `json:"entities"`
	Observations int                 `json:"observations"`
	Relations    int                 `json:"relations"`
	FileBytes    int64               `json:"fileBytes"`
	Runs         map[string]*jsonRun `json:"runs"`
}

type jsonServer struct {
	Label    string  `json:"label"`
	Command  string  `json:"command"`
	Built    string  `json:"built,omitempty"`
	Memory   string  `json:"memory,omitempty"`
	PreRunMs float64 `json:"preRunMs"`
}

type jsonReport struct {
	Machine     machineInfo  `json:"machine"`
	CommandLine string       `json:"commandLine"`
	Seed        uint64       `json:"seed"`
	Protocol    string       `json:"protocol"`
	Client      string       `json:"client,omitempty"`
	Servers     []jsonServer `json:"servers"`
	Sizes       []jsonSize   `json:"sizes"`
}

func (r *report) writeJSON(w io.Writer) error {
	out := jsonReport{Machine: r.Machine, CommandLine: r.CommandLine, Seed: r.Seed, Protocol: r.Settings.client.protocol}
	if r.Settings.client.ts != nil {
		out.Client = r.Settings.client.describe()
	}
	for _, s := range r.Servers {
		out.Servers = append(out.Servers, jsonServer{s.label, s.command, s.built, s.where, ms(s.preRun)})
	}
	for _, sz := range r.Sizes {
		out.Sizes = append(out.Sizes, r.jsonSize(sz))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// jsonSize is one size's runs, the second carrying the ratios.
func (r *report) jsonSize(sz *sizeResult) jsonSize {
	js := jsonSize{N: sz.N, Entities: sz.Entities, Observations: sz.Observations, Relations: sz.Relations, FileBytes: sz.FileBytes, Runs: map[string]*jsonRun{}}
	for _, s := range r.Servers {
		if run := sz.Runs[s.label]; run != nil {
			js.Runs[s.label] = toJSONRun(s.command, run)
		}
	}
	labels := r.labels()
	for _, l := range labels[min(1, len(labels)):] {
		if sz.Runs[labels[0]] != nil && sz.Runs[l] != nil {
			js.Runs[l].Ratio = ratiosP50(sz.Runs[labels[0]], sz.Runs[l])
		}
	}
	return js
}

func toJSONRun(command string, run *RunResult) *jsonRun {
	jr := &jsonRun{Command: command, Start: toJSONLatency(run.StartSamples), RunResult: run, Tools: []jsonTool{}}
	for _, t := range run.Tools {
		jr.Tools = append(jr.Tools, jsonTool{ToolResult: t, Latency: toJSONLatency(t.Samples), Wire: toJSONLatency(t.WireSamples)})
	}
	return jr
}

// ratiosP50 is theirs's p50 over ours's per tool and for the start, where
// both have one.
func ratiosP50(ours, theirs *RunResult) map[string]float64 {
	ratios := map[string]float64{}
	for _, t := range theirs.Tools {
		if o := ours.tool(t.Label); o != nil && o.Latency.P50 > 0 && t.Latency.P50 > 0 {
			ratios[t.Label] = float64(t.Latency.P50) / float64(o.Latency.P50)
		}
	}
	if ours.Start.P50 > 0 && theirs.Start.P50 > 0 {
		ratios["start to first answer"] = float64(theirs.Start.P50) / float64(ours.Start.P50)
	}
	return ratios
}

func toJSONLatency(samples []time.Duration) jsonLatency {
	s := summarize(samples)
	j := jsonLatency{Count: s.Count, P50: ms(s.P50), P95: ms(s.P95), P99: ms(s.P99), Min: ms(s.Min), Max: ms(s.Max), Mean: ms(s.Mean)}
	j.SamplesMs = make([]float64, len(samples))
	for i, d := range samples {
		j.SamplesMs[i] = ms(d)
	}
	return j
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
