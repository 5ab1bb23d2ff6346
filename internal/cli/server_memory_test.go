package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/poll"
)

// serverFloodBoundMiB is the resident memory grit server stays under
// while it refuses the flood of TestServerMemoryUnderAFlood, as
// docs/api.md states it.
const serverFloodBoundMiB = 256

// TestServerMemoryUnderAFlood builds grit as users run it (without the
// race detector, whose shadow memory would be measured too), starts grit
// server with a token, and sends it at once eight 15 MiB EnqueueBatch
// requests of 3.1 million one-letter tasks without a token and four with
// the token: the first are refused UNAUTHENTICATED, the others over the
// batch limit, and the server's resident memory (VmRSS while they run,
// VmHWM after) stays under serverFloodBoundMiB. Before the token was
// checked ahead of the message and the batch counted before it was
// decoded, each such request cost the server about 870 MiB.
func TestServerMemoryUnderAFlood(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds grit and floods a server")
	}
	const token = "0123456789abcdef0123"
	bin := filepath.Join(t.TempDir(), "grit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/grit")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--http", "off")
	cmd.Env = append(os.Environ(), "GRIT_TOKENS="+token)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := waitServing(t, out)
	pid := cmd.Process.Pid
	base := procStatusMiB(t, pid, "VmRSS")

	// The batch is sent as the request's unknown fields, so that this
	// process need not hold 3.1 million decoded tasks to send them: on the
	// wire it is the same EnqueueBatchRequest.
	req := &pb.EnqueueBatchRequest{}
	req.ProtoReflect().SetUnknown(oneLetterTasks(15 << 20))

	// A request the server decodes anyway would take it far past the
	// bound; the watch stops it there rather than let it take the machine.
	var peak atomic.Int64
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			rss := procStatusMiB(t, pid, "VmRSS")
			peak.Store(max(peak.Load(), rss))
			if rss > 2*serverFloodBoundMiB {
				cmd.Process.Kill()
				return
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() {
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if i >= 8 {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
			}
			_, errs[i] = pb.NewTasksServiceClient(conn).EnqueueBatch(ctx, req)
		})
	}
	wg.Wait()
	hwm := procStatusMiB(t, pid, "VmHWM")
	close(stopWatch)
	<-watched
	t.Logf("grit server: %d MiB at rest, peak VmRSS %d MiB, VmHWM %d MiB under the flood", base, peak.Load(), hwm)
	for i, err := range errs {
		want := []codes.Code{codes.Unauthenticated}
		if i >= 8 {
			want = []codes.Code{codes.InvalidArgument, codes.ResourceExhausted}
		}
		if c := status.Code(err); !slices.Contains(want, c) {
			t.Errorf("request %d: %v, want %v", i, err, want)
		}
	}
	if top := max(hwm, peak.Load()); hwm == 0 || top > serverFloodBoundMiB {
		t.Errorf("grit server's resident memory reached %d MiB under the flood (killed past %d MiB: %v): want under %d MiB", top, 2*serverFloodBoundMiB, hwm == 0, serverFloodBoundMiB)
	}
}

// waitServing waits for grit server to say where it serves.
func waitServing(t *testing.T, out *lockedBuffer) string {
	t.Helper()
	return waitSaid(t, out, `serving grit.v1 on (\S+)`, "grit server did not say where it serves")
}

// waitSaid waits for a process's output to match pattern and returns its
// first group.
func waitSaid(t *testing.T, out *lockedBuffer, pattern, failure string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var m []string
	poll.UntilSays(t, 30*time.Second, func() string { return failure + ":\n" + out.String() }, func() bool {
		m = re.FindStringSubmatch(out.String())
		return m != nil
	})
	return m[1]
}

// oneLetterTasks is the wire form of EnqueueBatchRequest.tasks (field 1)
// holding tasks of kind "a" (field 1 of NewTask), size bytes of them.
func oneLetterTasks(size int) []byte {
	one := []byte{0x0a, 3, 0x0a, 1, 'a'}
	return bytes.Repeat(one, size/len(one))
}

// procStatusMiB reads a field of /proc/PID/status, in MiB; 0 once the
// process is gone.
func procStatusMiB(t *testing.T, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Errorf("/proc/%d/status: %s: %v", pid, sc.Text(), err)
		}
		return kb >> 10
	}
	return 0
}
