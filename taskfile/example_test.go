package taskfile_test

import (
	"fmt"

	"github.com/grit-run/grit/taskfile"
)

func Example() {
	const file = `
name: settlement
defaults:
  retry: "3 1s 30s"
  timeout: 30s
tasks:
  fetch:
    run: ./fetch.sh --day today
  settle:
    run: [./settle, --merchant, "42"]
    needs: fetch
    retry: {attempts: 5, min: 1s, max: 1m, jitter: decorrelated}
    retry_on_exit: [3]
    env: {REGION: eu}
`
	f, err := taskfile.Parse("settle.yaml", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := f.NewRun("settlement-2026-01-02")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range run.Tasks {
		fmt.Printf("%s needs %v, policy %q, timeout %v\n  %s\n", t.Name, t.Needs, t.Policy, t.Timeout, t.Args)
	}
	// Output:
	// fetch needs [], policy "3 1s 30s", timeout 30s
	//   {"shell":"./fetch.sh --day today"}
	// settle needs [fetch], policy "4 1s 1m jitter=decorrelated", timeout 30s
	//   {"argv":["./settle","--merchant","42"],"env":["REGION=eu"],"retry_on_exit":[3]}
}

func ExampleParse_errors() {
	const file = `name: settlement
tasks:
  fetch:
    run: ./fetch.sh
    timout: 30s
  settle:
    run: ./settle
    needs: [fetc]
    retry: "10 5x"
`
	_, err := taskfile.Parse("settle.yaml", []byte(file))
	fmt.Println(err)
	// Output:
	// taskfile settle.yaml:5: unknown key "timout" (did you mean "timeout"?)
	// taskfile settle.yaml:8: task "settle" needs "fetc", which is not a task of this file (did you mean "fetch"? tasks: fetch)
	// taskfile settle.yaml:9: retry "10 5x": "5x" is not a duration (e.g. 300ms, 5s, 2m)
}

func ExampleParse_schedules() {
	const file = `name: reports
tasks:
  report:
    run: ./report.sh
    retry: "3 1s 30s"
schedules:
  nightly-report:
    task: report
    cron: "0 2 * * *"
    zone: Europe/Paris
  every-hour:
    task: report
    every: 1h
    overlap: buffer_one
`
	f, err := taskfile.Parse("reports.yaml", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range f.Schedules {
		s = s.OrDefault()
		fmt.Printf("%s: cron %q every %v in %s, overlap %s: %s %s, policy %q\n", s.Name, s.Cron, s.Every, s.Zone, s.Overlap, s.Task.Kind, s.Task.Args, s.Task.Policy)
	}
	// Output:
	// nightly-report: cron "0 2 * * *" every 0s in Europe/Paris, overlap skip: exec {"shell":"./report.sh"}, policy "3 1s 30s"
	// every-hour: cron "" every 1h0m0s in UTC, overlap buffer_one: exec {"shell":"./report.sh"}, policy "3 1s 30s"
}
