package proc

import (
	"os/exec"
	"testing"
)

// BenchmarkRun and BenchmarkBareExec run the same program; the difference is
// Run's overhead: the locked thread, waitid, the group kill, the tails.
func BenchmarkRun(b *testing.B) {
	ctx := b.Context()
	for b.Loop() {
		res, err := Run(ctx, Spec{Argv: []string{"/bin/true"}})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run = %+v, %v", res, err)
		}
	}
}

func BenchmarkBareExec(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
