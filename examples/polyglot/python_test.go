package polyglot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// python is Debian's interpreter, which has Debian's grpcio and protobuf
// (a python3 earlier on PATH, such as pyenv's, may have neither).
const python = "/usr/bin/python3"

// pythonPackages are the Debian packages the Python example needs.
const pythonPackages = "protobuf-compiler protobuf-compiler-grpc libprotobuf-dev python3-grpcio python3-protobuf"

func init() {
	languages["python"] = language{ready: pythonReady, worker: pythonWorker, producer: pythonProducer}
}

// pythonReady says what of the Python example's needs is missing.
func pythonReady() string {
	var missing []string
	if out, err := exec.Command(python, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		why := err.Error()
		if o := strings.TrimSpace(string(out)); o != "" {
			why = o[strings.LastIndexByte(o, '\n')+1:] // the exception's last line
		}
		missing = append(missing, fmt.Sprintf("%s cannot import grpc and google.protobuf (%s)", python, why))
	}
	for _, bin := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin+" is not installed")
		}
	}
	if _, err := os.Stat("/usr/include/google/protobuf/duration.proto"); err != nil {
		missing = append(missing, "protobuf's own .proto files are not in /usr/include")
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, "; ") + " (apt-get install -y " + pythonPackages + "; scripts/test installs them as root)"
}

// pythonExample is the directory of the Python example.
var pythonExample = filepath.Join("..", "python")

// pythonStubs generates the Python stubs once per test binary, with the
// example's own script, and returns their directory.
var pythonStubs = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(scratch, "python-gen")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, filepath.Join(pythonExample, "genstubs"), dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("examples/python/genstubs: %v\n%s", err, out)
	}
	return dir, nil
})

func pythonWorker(t *testing.T, server, id string, lease time.Duration) *exec.Cmd {
	return pythonCommand(t, "worker.py", "--server", server, "--worker-id", id,
		"--lease", seconds(lease))
}

func pythonProducer(t *testing.T, server string, args ...string) *exec.Cmd {
	return pythonCommand(t, "producer.py", append([]string{"--server", server}, args...)...)
}

func pythonCommand(t *testing.T, script string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-u", filepath.Join(pythonExample, script)}, args...)...)
	// No __pycache__ left in the source tree.
	cmd.Env = append(os.Environ(), "GRIT_PY_GEN="+built(t, pythonStubs), "PYTHONDONTWRITEBYTECODE=1")
	return cmd
}
