package grpcretry

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
)

// acceptedByGRPC reports whether a client accepts js as its default service
// config; grpc.NewClient parses it at once and connects to nothing.
func acceptedByGRPC(js string) error {
	conn, err := grpc.NewClient("passthrough:///unused",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(js))
	if err != nil {
		return err
	}
	return conn.Close()
}

func TestDefaultJSON(t *testing.T) {
	t.Parallel()
	js, err := Default().JSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":5,"initialBackoff":"0.1s","maxBackoff":"10s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE","RESOURCE_EXHAUSTED","DEADLINE_EXCEEDED"]}}],"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}`
	if js != want {
		t.Errorf("Default().JSON() =\n%s\nwant\n%s", js, want)
	}
	if err := acceptedByGRPC(js); err != nil {
		t.Errorf("grpc rejects Default(): %v", err)
	}
}

func TestServiceConfigJSONValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*ServiceConfig)
		want   []string // substrings of the JSON
	}{
		{"services", func(c *ServiceConfig) { c.Services = []string{"grit.v1.TasksService", "grpc.health.v1.Health"} },
			[]string{`"name":[{"service":"grit.v1.TasksService"},{"service":"grpc.health.v1.Health"}]`}},
		{"no throttle", func(c *ServiceConfig) { c.Throttle = nil }, []string{`"methodConfig"`}},
		{"two attempts", func(c *ServiceConfig) { c.MaxAttempts = 2 }, []string{`"maxAttempts":2`}},
		{"fine durations", func(c *ServiceConfig) {
			c.InitialBackoff, c.MaxBackoff = time.Nanosecond, 90*time.Minute+time.Millisecond
		},
			[]string{`"initialBackoff":"0.000000001s"`, `"maxBackoff":"5400.001s"`}},
		{"equal backoffs", func(c *ServiceConfig) { c.InitialBackoff, c.MaxBackoff = time.Second, time.Second }, []string{`"maxBackoff":"1s"`}},
		{"fractional multiplier", func(c *ServiceConfig) { c.Multiplier = 1.5 }, []string{`"backoffMultiplier":1.5`}},
		{"canceled code", func(c *ServiceConfig) { c.Codes = []codes.Code{codes.Canceled, codes.Unknown} }, []string{`["CANCELLED","UNKNOWN"]`}},
		{"throttle bounds", func(c *ServiceConfig) { c.Throttle = &Throttle{MaxTokens: 1000, TokenRatio: 0.001} }, []string{`{"maxTokens":1000,"tokenRatio":0.001}`}},
		{"ratio above one", func(c *ServiceConfig) { c.Throttle = &Throttle{MaxTokens: 0.5, TokenRatio: 12.125} }, []string{`{"maxTokens":0.5,"tokenRatio":12.125}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.change(&c)
			js, err := c.JSON()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(js, w) {
					t.Errorf("JSON %s lacks %s", js, w)
				}
			}
			if !json.Valid([]byte(js)) {
				t.Errorf("JSON %s is not valid JSON", js)
			}
			if err := acceptedByGRPC(js); err != nil {
				t.Errorf("grpc rejects %s: %v", js, err)
			}
		})
	}
}

func TestServiceConfigJSONInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*ServiceConfig)
		want   string // substring of the error
	}{
		{"zero", func(c *ServiceConfig) { *c = ServiceConfig{} }, "MaxAttempts 0 is out of range"},
		{"one attempt", func(c *ServiceConfig) { c.MaxAttempts = 1 }, "MaxAttempts 1 is out of range: gRPC allows 2 to 5"},
		{"six attempts", func(c *ServiceConfig) { c.MaxAttempts = 6 }, "it silently uses 5"},
		{"zero initial", func(c *ServiceConfig) { c.InitialBackoff = 0 }, "InitialBackoff 0s must be positive"},
		{"negative max", func(c *ServiceConfig) { c.MaxBackoff = -time.Second }, "MaxBackoff -1s must be positive"},
		{"max below initial", func(c *ServiceConfig) { c.MaxBackoff = 10 * time.Millisecond }, "MaxBackoff 10ms is less than InitialBackoff 100ms"},
		{"zero multiplier", func(c *ServiceConfig) { c.Multiplier = 0 }, "Multiplier 0 must be a positive number"},
		{"NaN multiplier", func(c *ServiceConfig) { c.Multiplier = math.NaN() }, "Multiplier NaN"},
		{"infinite multiplier", func(c *ServiceConfig) { c.Multiplier = math.Inf(1) }, "Multiplier +Inf"},
		{"no codes", func(c *ServiceConfig) { c.Codes = nil }, "Codes is empty"},
		{"OK code", func(c *ServiceConfig) { c.Codes = []codes.Code{codes.OK} }, "Codes holds OK"},
		{"undefined code", func(c *ServiceConfig) { c.Codes = []codes.Code{17} }, "Codes holds 17, which is not a gRPC status code"},
		{"empty service", func(c *ServiceConfig) { c.Services = []string{""} }, "Services holds an empty name"},
		{"method path", func(c *ServiceConfig) { c.Services = []string{"grit.v1.TasksService/Enqueue"} }, `"grit.v1.TasksService/Enqueue", which is not a fully qualified service name`},
		{"duplicate service", func(c *ServiceConfig) { c.Services = []string{"a.B", "a.B"} }, `names "a.B" twice`},
		{"zero tokens", func(c *ServiceConfig) { c.Throttle.MaxTokens = 0 }, "Throttle.MaxTokens 0 is out of range"},
		{"too many tokens", func(c *ServiceConfig) { c.Throttle.MaxTokens = 1000.5 }, "Throttle.MaxTokens 1000.5 is out of range"},
		{"zero ratio", func(c *ServiceConfig) { c.Throttle.TokenRatio = 0 }, "Throttle.TokenRatio 0 must be a positive number"},
		{"fine ratio", func(c *ServiceConfig) { c.Throttle.TokenRatio = 0.0001 }, "Throttle.TokenRatio 0.0001 has more than 3 decimals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			c.Throttle = &Throttle{MaxTokens: 10, TokenRatio: 0.1} // not shared with other cases
			tt.change(&c)
			js, err := c.JSON()
			if err == nil {
				t.Fatalf("JSON() = %s, want an error", js)
			}
			if js != "" {
				t.Errorf("JSON() returned %q with its error", js)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			for line := range strings.Lines(err.Error()) {
				if !strings.HasPrefix(line, "grpcretry: ") {
					t.Errorf("error line %q lacks the package prefix", line)
				}
			}
		})
	}
}

func TestServiceConfigJSONNamesEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := ServiceConfig{}.JSON()
	if err == nil {
		t.Fatal("the zero ServiceConfig is valid")
	}
	for _, field := range []string{"MaxAttempts", "InitialBackoff", "MaxBackoff", "Multiplier", "Codes"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Duration
		want string
	}{
		{100 * time.Millisecond, "0.1s"},
		{10 * time.Second, "10s"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Nanosecond, "0.000000001s"},
		{time.Second + time.Nanosecond, "1.000000001s"},
		{300 * time.Millisecond, "0.3s"},
		{time.Duration(math.MaxInt64), "9223372036.854775807s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.in); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestThousandths(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0.1, 0.2, 0.3, 0.001, 0.999, 1, 12.345, 999.999, 0.7} {
		if !thousandths(f) {
			t.Errorf("thousandths(%v) = false", f)
		}
	}
	for _, f := range []float64{0.0001, 0.1234, 1.0005, 1e-9} {
		if thousandths(f) {
			t.Errorf("thousandths(%v) = true", f)
		}
	}
}
