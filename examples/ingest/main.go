// Command ingest runs an ingest pipeline on grit's embedded store, in the
// shape of a real one: a run starts with StartIngest, which publishes
// IngestRunStarted (a notice) and NextBatchRequested; the ingester handles
// each NextBatchRequested, publishes IngesterBatchReady, and requests the
// next batch while there is more; hook runners turn each ready batch into
// jobs on a simulated cluster of fixed capacity, which rejects work with
// scheduling timeouts when full and evicts some (resource pressure,
// retried later), and fails jobs whose image does not exist (permanent,
// failed at once). Every delivery belongs to the run, so the run fails
// once its failed deliveries pass max_failures.
//
// Running it shows the cluster kept busy at its capacity without immediate
// retries (the cluster group's pressure holds its jobs back when the
// cluster is full), and each permanent error failing its job at once.
//
//	go run ./examples/ingest                      # 6 batches of 8 jobs, capacity 4
//	go run ./examples/ingest -bad-images 3,9,20   # three bad images: past -max-failures 2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	cfg := config{}
	var bad string
	flag.IntVar(&cfg.Batches, "batches", 6, "batches to ingest")
	flag.IntVar(&cfg.JobsPerBatch, "jobs", 8, "jobs per batch")
	flag.IntVar(&cfg.Capacity, "capacity", 4, "jobs the cluster runs at once")
	flag.DurationVar(&cfg.JobTime, "job-time", 150*time.Millisecond, "how long a job runs")
	flag.IntVar(&cfg.MaxFailures, "max-failures", 2, "failed deliveries the run tolerates")
	flag.IntVar(&cfg.EvictEvery, "evict-every", 7, "evict every n-th job started, once (0: never)")
	flag.StringVar(&bad, "bad-images", "5", "jobs (numbered from 1) whose image does not exist, comma-separated")
	flag.Parse()
	for _, f := range strings.Split(bad, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "ingest: -bad-images %q: %q is not a job number (1, 2, …)\n", bad, f)
			os.Exit(2)
		}
		cfg.BadImages = append(cfg.BadImages, n)
	}
	dir, err := os.MkdirTemp("", "grit-ingest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	cfg.DSN = "sqlite:" + filepath.Join(dir, "grit.db")
	rep, err := runIngest(context.Background(), cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
}
