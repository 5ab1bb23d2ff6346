package polyglot

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Node.js example (examples/node) runs with node 18 or later and the
// packages its package-lock.json pins, which `npm ci` installs in
// examples/node/node_modules (scripts/test does).
func init() {
	languages["node"] = language{
		ready: nodeReady,
		worker: func(t *testing.T, server, id string, lease time.Duration) *exec.Cmd {
			return nodeCommand(t, "worker.js", "--server", server, "--worker-id", id,
				"--lease", strconv.FormatFloat(lease.Seconds(), 'f', -1, 64))
		},
		producer: func(t *testing.T, server string, args ...string) *exec.Cmd {
			return nodeCommand(t, "producer.js", append([]string{"--server", server}, args...)...)
		},
	}
}

// nodeMin is the oldest Node.js the example runs on (util.parseArgs came
// in 18.3).
var nodeMin = [2]int{18, 3}

// nodeReady says why the Node.js example cannot run here ("" when it
// can), once.
var nodeReady = sync.OnceValue(func() string {
	dir, err := nodeDir()
	if err != nil {
		return err.Error()
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return fmt.Sprintf("node does not run (%v): install Node.js %d.%d or later (Debian: apt-get install nodejs npm)", err, nodeMin[0], nodeMin[1])
	}
	version := strings.TrimSpace(string(out)) // v20.20.2
	var major, minor int
	if _, err := fmt.Sscanf(version, "v%d.%d", &major, &minor); err != nil || major < nodeMin[0] || major == nodeMin[0] && minor < nodeMin[1] {
		return fmt.Sprintf("node is %s: the example needs Node.js %d.%d or later", version, nodeMin[0], nodeMin[1])
	}
	for _, pkg := range []string{"@grpc/grpc-js", "@grpc/proto-loader"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return fmt.Sprintf("examples/node/node_modules has no %s: run `npm ci` in examples/node", pkg)
		}
	}
	return ""
})

// nodeCommand runs node on a script of examples/node, in that directory.
func nodeCommand(t *testing.T, script string, args ...string) *exec.Cmd {
	t.Helper()
	dir, err := nodeDir()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	return cmd
}

// nodeDir is examples/node of the module the test runs in: the tests run
// in examples/polyglot, and the module's root is the nearest directory
// above with a go.mod.
func nodeDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "examples", "node"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's directory: cannot find examples/node")
		}
		dir = up
	}
}
