package grpcretry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// Limits gRPC puts on a retry policy and on retry throttling.
const (
	// MinAttempts and MaxAttempts bound ServiceConfig.MaxAttempts. gRPC
	// silently uses 5 for anything above 5 (unless the client raises its
	// own cap), so [ServiceConfig.JSON] rejects such values rather than
	// write a config that does not do what it says.
	MinAttempts = 2
	MaxAttempts = 5
	// MaxThrottleTokens bounds Throttle.MaxTokens.
	MaxThrottleTokens = 1000
)

// ServiceConfig is the channel retry layer: a gRPC retry policy and retry
// throttling, written out by [ServiceConfig.JSON] for
// grpc.WithDefaultServiceConfig. Every field except Services and Throttle
// must be set; [Default] is the configuration grit's client uses.
type ServiceConfig struct {
	// Services are the fully qualified service names the policy applies to
	// ("grit.v1.TasksService"). Empty means every method on the channel.
	Services []string
	// MaxAttempts counts the first attempt: 2 to 5.
	MaxAttempts int
	// InitialBackoff and MaxBackoff bound the delay before a retry; gRPC
	// waits a random time up to min(InitialBackoff*Multiplier^(n-1),
	// MaxBackoff) before the nth retry. Both must be positive, and
	// MaxBackoff at least InitialBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// Multiplier grows the backoff after each retry; it must be positive.
	Multiplier float64
	// Codes are the status codes gRPC retries; at least one, never OK.
	Codes []codes.Code
	// Throttle, if not nil, turns on retry throttling for the channel.
	Throttle *Throttle
}

// Throttle is gRPC retry throttling: the channel keeps a token count that
// starts at MaxTokens, loses 1 on each failed call and gains TokenRatio on
// each success; at or below MaxTokens/2, calls are not retried. It stops a
// client from multiplying an outage's load with retries.
type Throttle struct {
	// MaxTokens is in (0, 1000].
	MaxTokens float64
	// TokenRatio is positive, with at most 3 decimals (gRPC keeps
	// thousandths).
	TokenRatio float64
}

// Default returns the channel retry layer of grit's gRPC client: UNAVAILABLE,
// RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED, up to 5 attempts, backoff from
// 0.1s doubling up to 10s, throttled with 10 tokens and a ratio of 0.1, on
// every method of the channel.
func Default() ServiceConfig {
	return ServiceConfig{
		MaxAttempts:    5,
		InitialBackoff: 100 * time.Millisecond,
		MaxBackoff:     10 * time.Second,
		Multiplier:     2,
		Codes:          []codes.Code{codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded},
		Throttle:       &Throttle{MaxTokens: 10, TokenRatio: 0.1},
	}
}

// JSON validates c and returns it as a gRPC service config, ready for
// grpc.WithDefaultServiceConfig. An invalid c gives an error naming every
// field that is wrong.
func (c ServiceConfig) JSON() (string, error) {
	if err := c.validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(c.document())
	if err != nil {
		return "", fmt.Errorf("grpcretry: encode service config: %w", err)
	}
	return string(b), nil
}

func (c ServiceConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("grpcretry: "+format, args...))
	}
	if c.MaxAttempts < MinAttempts || c.MaxAttempts > MaxAttempts {
		bad("MaxAttempts %d is out of range: gRPC allows %d to %d (it silently uses %d for more)", c.MaxAttempts, MinAttempts, MaxAttempts, MaxAttempts)
	}
	if c.InitialBackoff <= 0 {
		bad("InitialBackoff %v must be positive (e.g. 100ms)", c.InitialBackoff)
	}
	if c.MaxBackoff <= 0 {
		bad("MaxBackoff %v must be positive (e.g. 10s)", c.MaxBackoff)
	} else if c.MaxBackoff < c.InitialBackoff {
		bad("MaxBackoff %v is less than InitialBackoff %v: raise MaxBackoff or lower InitialBackoff", c.MaxBackoff, c.InitialBackoff)
	}
	if !(c.Multiplier > 0) || math.IsInf(c.Multiplier, 0) {
		bad("Multiplier %v must be a positive number (e.g. 2)", c.Multiplier)
	}
	errs = append(errs, validateCodes(c.Codes)...)
	errs = append(errs, validateServices(c.Services)...)
	if c.Throttle != nil {
		errs = append(errs, c.Throttle.validate()...)
	}
	return errors.Join(errs...)
}

func validateCodes(cs []codes.Code) []error {
	if len(cs) == 0 {
		return []error{errors.New("grpcretry: Codes is empty: name at least one status code to retry (e.g. codes.Unavailable)")}
	}
	var errs []error
	for _, c := range cs {
		if c == codes.OK {
			errs = append(errs, errors.New("grpcretry: Codes holds OK, which is success and cannot be retried: remove it"))
		} else if _, ok := codeName(c); !ok {
			errs = append(errs, fmt.Errorf("grpcretry: Codes holds %d, which is not a gRPC status code (0 to 16)", uint32(c)))
		}
	}
	return errs
}

func validateServices(names []string) []error {
	var errs []error
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		switch {
		case n == "":
			errs = append(errs, errors.New("grpcretry: Services holds an empty name: leave Services empty to cover every method"))
		case strings.ContainsAny(n, "/ \t\r\n"):
			errs = append(errs, fmt.Errorf("grpcretry: Services holds %q, which is not a fully qualified service name (e.g. grit.v1.TasksService, without a method)", n))
		case seen[n]:
			errs = append(errs, fmt.Errorf("grpcretry: Services names %q twice, which gRPC rejects: remove one", n))
		}
		seen[n] = true
	}
	return errs
}

func (t *Throttle) validate() []error {
	var errs []error
	if !(t.MaxTokens > 0 && t.MaxTokens <= MaxThrottleTokens) {
		errs = append(errs, fmt.Errorf("grpcretry: Throttle.MaxTokens %v is out of range: gRPC allows more than 0 and up to %d", t.MaxTokens, MaxThrottleTokens))
	}
	if !(t.TokenRatio > 0) || math.IsInf(t.TokenRatio, 0) {
		errs = append(errs, fmt.Errorf("grpcretry: Throttle.TokenRatio %v must be a positive number (e.g. 0.1)", t.TokenRatio))
	} else if !thousandths(t.TokenRatio) {
		errs = append(errs, fmt.Errorf("grpcretry: Throttle.TokenRatio %v has more than 3 decimals, which gRPC does not keep (e.g. 0.125)", t.TokenRatio))
	}
	return errs
}

// thousandths reports whether f is a whole number of thousandths, allowing
// for the binary representation of decimals such as 0.1.
func thousandths(f float64) bool {
	m := f * 1000
	return math.Abs(m-math.Round(m)) <= 1e-9*math.Max(1, math.Abs(m))
}

// The JSON shapes of gRPC's service config (grpc/service_config.proto).
type (
	document struct {
		MethodConfig    []methodConfig `json:"methodConfig"`
		RetryThrottling *throttling    `json:"retryThrottling,omitempty"`
	}
	methodConfig struct {
		Name        []name      `json:"name"`
		RetryPolicy retryPolicy `json:"retryPolicy"`
	}
	name struct {
		Service string `json:"service,omitempty"`
	}
	retryPolicy struct {
		MaxAttempts          int      `json:"maxAttempts"`
		InitialBackoff       string   `json:"initialBackoff"`
		MaxBackoff           string   `json:"maxBackoff"`
		BackoffMultiplier    float64  `json:"backoffMultiplier"`
		RetryableStatusCodes []string `json:"retryableStatusCodes"`
	}
	throttling struct {
		MaxTokens  float64 `json:"maxTokens"`
		TokenRatio float64 `json:"tokenRatio"`
	}
)

func (c ServiceConfig) document() document {
	names := []name{{}} // one empty name: every method
	if len(c.Services) > 0 {
		names = names[:0]
		for _, s := range c.Services {
			names = append(names, name{Service: s})
		}
	}
	statusCodes := make([]string, len(c.Codes))
	for i, code := range c.Codes {
		statusCodes[i], _ = codeName(code)
	}
	doc := document{MethodConfig: []methodConfig{{
		Name: names,
		RetryPolicy: retryPolicy{
			MaxAttempts:          c.MaxAttempts,
			InitialBackoff:       formatDuration(c.InitialBackoff),
			MaxBackoff:           formatDuration(c.MaxBackoff),
			BackoffMultiplier:    c.Multiplier,
			RetryableStatusCodes: statusCodes,
		},
	}}}
	if c.Throttle != nil {
		doc.RetryThrottling = &throttling{MaxTokens: c.Throttle.MaxTokens, TokenRatio: c.Throttle.TokenRatio}
	}
	return doc
}

// formatDuration writes d as the decimal seconds protobuf's JSON mapping of
// Duration wants: "0.1s", "10s", "1.000000001s". It works in integers, so no
// nanosecond is lost to floating point.
func formatDuration(d time.Duration) string {
	sec, ns := int64(d/time.Second), int64(d%time.Second)
	if ns == 0 {
		return strconv.FormatInt(sec, 10) + "s"
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
	return strconv.FormatInt(sec, 10) + "." + frac + "s"
}
