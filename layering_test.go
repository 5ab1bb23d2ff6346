package grit_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering keeps the imports going downwards, as the design says: the
// standalone packages take nothing from the module but task (and batch
// the retry package beside it, breaker the rate package); the declarations (fsm, schedule,
// retention) import no store; the drivers import neither the root, the
// engine nor the API; and the API server takes its protection and rescue
// from the gate, not from the engine.
func TestLayering(t *testing.T) {
	t.Parallel()
	// A driver implements the store's contract: it knows nothing of the
	// front door, the engine, the rules the claimers share or the API.
	driverBanned := []string{"", "internal/engine", "internal/gate", "internal/decide", "api/server", "api/client", "internal/cli", "internal/dash"}
	const module = "github.com/grit-run/grit"
	tests := []struct {
		pkg     string
		allowed []string // module packages it may depend on
		banned  []string // module packages it must not depend on
	}{
		{pkg: "task", allowed: []string{"task"}},
		{pkg: "retry", allowed: []string{"retry"}},
		{pkg: "rate", allowed: []string{"rate"}},
		{pkg: "breaker", allowed: []string{"breaker", "rate"}},
		{pkg: "batch", allowed: []string{"batch", "retry"}},
		{pkg: "fsm", allowed: []string{"fsm", "task", "retry"}},
		{pkg: "schedule", allowed: []string{"schedule", "task", "retry"}},
		{pkg: "retention", allowed: []string{"retention", "task"}},
		{pkg: "api/server", banned: []string{"internal/engine"}},
		{pkg: "store", banned: []string{"internal/engine", "internal/gate", "api/server"}},
		{pkg: "store/sqlite", banned: driverBanned},
		{pkg: "store/postgres", banned: driverBanned},
	}
	for _, tt := range tests {
		out, err := exec.Command("go", "list", "-deps", "./"+tt.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", tt.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(dep, module+"/")
			if dep == module {
				rel, ok = "", true // the root
			}
			if !ok {
				continue
			}
			if tt.allowed != nil && !slices.Contains(tt.allowed, rel) {
				t.Errorf("%s depends on %s: it may depend on %v of this module alone", tt.pkg, rel, tt.allowed)
			}
			if slices.Contains(tt.banned, rel) {
				t.Errorf("%s depends on %s", tt.pkg, rel)
			}
		}
	}
}

// TestLightRoot: a program that imports the root for a worker on SQLite
// links no gRPC, no OTLP exporter and no PostgreSQL driver: those are
// behind their own imports (api/client, otelenv, store/postgres). Nor
// does a test that imports grittest to test its handlers.
func TestLightRoot(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{".", "./grittest"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, heavy := range []string{"google.golang.org/grpc", "go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/otel/sdk", "github.com/jackc/pgx", "github.com/prometheus/"} {
				if strings.HasPrefix(dep, heavy) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
