package chaos

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// inject injects faults at random until end: the gap before each is
// drawn around cfg.Every, the fault and its worker from the seed.
func (r *run) inject(ctx context.Context, end time.Time) {
	kinds := []string{"kill", "stop"}
	if r.cfg.PGData != "" {
		kinds = append(kinds, "pg-restart")
	}
	for {
		gap := time.Duration(float64(r.cfg.Every) * (0.5 + r.rng.Float64()))
		if time.Now().Add(gap).After(end) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(end)):
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		w := r.workers[r.rng.IntN(len(r.workers))]
		f := r.fault(kinds[r.rng.IntN(len(kinds))], w)
		r.mu.Lock()
		r.faults = append(r.faults, f)
		r.mu.Unlock()
		fmt.Fprintf(r.cfg.Out, "chaos: %s %s %s (%v)\n", f.At.Format("15:04:05.000"), f.Kind, f.Worker, f.End.Sub(f.At).Round(time.Millisecond))
	}
}

// fault injects one fault and returns it once it is over.
func (r *run) fault(kind string, w *worker) fault {
	f := fault{Kind: kind, Worker: w.id, At: time.Now()}
	switch kind {
	case "kill":
		w.cmd.Process.Signal(syscall.SIGKILL)
		w.cmd.Wait()
		f.End = time.Now()
		if err := r.start(w); err != nil {
			fmt.Fprintf(r.cfg.Out, "chaos: restart %s: %v\n", w.id, err)
		}
	case "stop":
		// Past its lease, so that siblings take its tasks over.
		d := r.cfg.Lease + time.Duration(r.rng.Float64()*float64(r.cfg.Lease))
		w.cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(d) // the fault's own length, not a wait for a result
		w.cmd.Process.Signal(syscall.SIGCONT)
		f.End = time.Now()
	case "pg-restart":
		f.Worker = ""
		// The server's output goes to a file of the run's: a pipe would be
		// held open by the server, and the restart never seen to end.
		log := filepath.Join(r.cfg.Dir, "postgres.log")
		out, err := exec.Command(r.cfg.PGCtl, "-D", r.cfg.PGData, "-l", log, "-m", "fast", "-w", "restart").CombinedOutput()
		if err != nil {
			fmt.Fprintf(r.cfg.Out, "chaos: pg_ctl restart: %v\n%s", err, out)
		}
		f.End = time.Now()
	}
	return f
}
