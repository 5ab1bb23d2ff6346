package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestTableNamesEverything(t *testing.T) {
	sys := []system{systems[0], systems[2]}
	results := []result{
		{System: "river-defaults", Config: "river cfg", Throughput: throughputResult{JobsPerSec: 100}, Latency: dist{P99: 4}, Retry: dist{P99: 0}},
		{System: "grit", Config: "grit cfg", Throughput: throughputResult{JobsPerSec: 300}, Latency: dist{P99: 2}, Retry: dist{P99: 1}},
	}
	rep := report{Systems: results, Ratios: ratios(sys, results), Machine: machine{GOOS: "linux", PostgresVersion: "17"}}
	var b bytes.Buffer
	if err := rep.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"river-defaults", "grit ÷ river-defaults: throughput 3x, start p99 0.5x, retry late p99 n/a", "grit cfg", "PostgreSQL 17"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not say %q:\n%s", want, b.String())
		}
	}
}

func TestTableShowsEachRoundsRatio(t *testing.T) {
	sys := []system{systems[1], systems[2]}
	results := []result{
		{System: "river-tuned", Config: "river cfg", Throughput: throughputResult{JobsPerSec: 100, Rounds: []float64{100, 80, 120}}},
		{System: "grit", Config: "grit cfg", Throughput: throughputResult{JobsPerSec: 250, Rounds: []float64{250, 200, 180}}},
	}
	rep := report{Systems: results, Ratios: ratios(sys, results), Params: params{Rounds: 3}}
	var b bytes.Buffer
	if err := rep.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grit ÷ river-tuned: throughput 2.5x (by round: 2.5x, 2.5x, 1.5x)", "the median of 3 runs taken in turn"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not say %q:\n%s", want, b.String())
		}
	}
}

// TestRatiosStayOnOneStore: grit on a store is compared with the others on
// that store only.
func TestRatiosStayOnOneStore(t *testing.T) {
	var results []result
	for _, s := range systems {
		results = append(results, result{System: s.name, Throughput: throughputResult{JobsPerSec: 100}})
	}
	var got []string
	for _, r := range ratios(systems, results) {
		got = append(got, r.Grit+" ÷ "+r.River)
	}
	want := []string{
		"grit ÷ river-defaults", "grit ÷ river-tuned", "grit ÷ pg-limit",
		"grit-defaults ÷ river-defaults", "grit-defaults ÷ river-tuned", "grit-defaults ÷ pg-limit",
		"grit-features ÷ grit", "grit-tenants ÷ grit",
		"grit-sqlite ÷ river-sqlite", "grit-sqlite ÷ sqlite-limit", "grit-sqlite-tenants ÷ grit-sqlite",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ratios\n%v\nwant\n%v", got, want)
	}
}

func TestMachineLineSaysBothStores(t *testing.T) {
	m := machine{GOOS: "linux", PostgresVersion: "17", Fsync: "on", SQLiteVersion: "3.50.0", SQLiteSettings: sqliteSettings, SQLiteFS: "ext2/3/4"}
	for _, want := range []string{"PostgreSQL 17, fsync=on", "SQLite 3.50.0 (modernc.org/sqlite), journal_mode=WAL, synchronous=FULL, files on ext2/3/4"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("machine line %q does not say %q", m, want)
		}
	}
	if m := (machine{GOOS: "linux", SQLiteVersion: "3.50.0"}); strings.Contains(m.String(), "PostgreSQL") {
		t.Errorf("a run on SQLite alone names PostgreSQL: %q", m)
	}
}

// TestTableShowsGrowth: with --backlog and --future, the table compares
// each system with itself (the drain's rate, the p99 behind the future
// jobs) and grit with the others.
func TestTableShowsGrowth(t *testing.T) {
	sys := []system{systems[1], systems[2]}
	f := func(v float64) *float64 { return &v }
	results := []result{
		{System: "river-tuned", Throughput: throughputResult{JobsPerSec: 100}, Latency: dist{P99: 4},
			Backlog: &throughputResult{JobsPerSec: 50}, BacklogRatio: f(0.5), Future: &dist{P50: 3, P99: 30}, FutureRatio: f(7.5)},
		{System: "grit", Throughput: throughputResult{JobsPerSec: 300}, Latency: dist{P99: 2},
			Backlog: &throughputResult{JobsPerSec: 270}, BacklogRatio: f(0.9), Future: &dist{P50: 1, P99: 3}, FutureRatio: f(1.5)},
	}
	rep := report{Systems: results, Ratios: ratios(sys, results), Params: params{Jobs: 20000, Backlog: 1000000, Future: 1000000}}
	var b bytes.Buffer
	if err := rep.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"backlog drain 5.4x, start p99 behind the future jobs 0.1x",
		"grit: drained 1000000 jobs due before the start at 270 jobs/s, 0.9x its rate on 20000",
		"grit: enqueue→start p50/p99 1.00/3.00 ms with 1000000 jobs due in an hour waiting, p99 1.5x its p99 with none",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not say %q:\n%s", want, b.String())
		}
	}
}
