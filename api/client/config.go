package client

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is how a Client reaches the server and retries. Zero fields mean
// the defaults beside them; FromEnv fills them from GRIT_* variables.
type Config struct {
	// Addr is the server's host:port (GRIT_SERVER).
	Addr string
	// Token is the bearer token sent with every call (GRIT_TOKEN); "" sends
	// none.
	Token string
	// TLS dials with TLS (GRIT_SERVER_TLS), checking the server's
	// certificate against the system's roots, or CAFile's when set
	// (GRIT_SERVER_CA, which implies TLS).
	TLS    bool
	CAFile string

	// Timeout bounds each attempt of a call (GRIT_GRPC_TIMEOUT, 30s).
	Timeout time.Duration
	// SendRetries is the retry budget of one batch, shared by its three
	// layers (GRIT_SEND_RETRIES, 3); negative turns every layer's retries
	// off.
	SendRetries int
	// SendBackoff is the batch layer's first delay, doubling up to four
	// times it (GRIT_SEND_BACKOFF_MS, 100ms).
	SendBackoff time.Duration
	// MaxBatchSize is the most tasks per EnqueueBatch (GRIT_MAX_BATCH_SIZE,
	// 50); FlushInterval how long the first task of a batch waits for
	// others (GRIT_FLUSH_INTERVAL, 0.1s).
	MaxBatchSize  int
	FlushInterval time.Duration
	// ReportBatchSize is the most results per Report that SendResult
	// gathers (GRIT_REPORT_BATCH_SIZE, 500); ReportInterval how long the
	// first result of a report waits for others (GRIT_REPORT_INTERVAL,
	// 2ms: a worker waits for its results' answers, so a long window
	// would slow it more than a call per result).
	ReportBatchSize int
	ReportInterval  time.Duration
	// CallRetries is the budget of a call made on its own, not batched
	// (default 4: enough for the channel layer's retries).
	CallRetries int
}

// Knob is one setting with its environment variable, its effective value
// and where that came from, for grit config.
type Knob struct {
	Name   string `json:"name"`
	Env    string `json:"env"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

type knobDef struct {
	name, env, def string
	set            func(c *Config, v string) error
}

var knobDefs = []knobDef{
	{"server", "GRIT_SERVER", "127.0.0.1:7420", func(c *Config, v string) error { c.Addr = v; return nil }},
	{"grpc-timeout", "GRIT_GRPC_TIMEOUT", "30s", func(c *Config, v string) (err error) { c.Timeout, err = seconds(v); return err }},
	{"send-retries", "GRIT_SEND_RETRIES", "3", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errors.New("want a whole number of retries, 0 for none")
		}
		c.SendRetries = n
		if n == 0 {
			c.SendRetries = -1
		}
		return nil
	}},
	{"send-backoff-ms", "GRIT_SEND_BACKOFF_MS", "100", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("want a positive whole number of milliseconds")
		}
		c.SendBackoff = time.Duration(n) * time.Millisecond
		return nil
	}},
	{"max-batch-size", "GRIT_MAX_BATCH_SIZE", "50", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("want a positive whole number of tasks")
		}
		c.MaxBatchSize = n
		return nil
	}},
	{"flush-interval", "GRIT_FLUSH_INTERVAL", "0.1s", func(c *Config, v string) (err error) { c.FlushInterval, err = seconds(v); return err }},
	{"report-batch-size", "GRIT_REPORT_BATCH_SIZE", "500", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("want a positive whole number of results")
		}
		c.ReportBatchSize = n
		return nil
	}},
	{"report-interval", "GRIT_REPORT_INTERVAL", "2ms", func(c *Config, v string) (err error) { c.ReportInterval, err = seconds(v); return err }},
	{"server-tls", "GRIT_SERVER_TLS", "false", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("want true or false")
		}
		c.TLS = c.TLS || b
		return nil
	}},
	{"server-ca", "GRIT_SERVER_CA", "", func(c *Config, v string) error {
		c.CAFile = v
		c.TLS = c.TLS || v != "" // a CA is only for TLS
		return nil
	}},
}

// seconds reads a positive duration: a Go duration (100ms, 30s) or a
// number of seconds (0.1, 30).
func seconds(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f <= 0 || f > 1e6 {
			return 0, errors.New("want a positive duration such as 30s or 0.1 (seconds)")
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d <= 0 {
		return 0, errors.New("want a positive duration such as 30s or 0.1 (seconds)")
	}
	return d, nil
}

// FromEnv returns the Config the GRIT_* variables give (getenv nil reads
// the process's), and each knob's value and source. A bad value is an
// error naming the variable and what it wants.
func FromEnv(getenv func(string) string) (Config, []Knob, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var c Config
	var knobs []Knob
	var errs []error
	for _, k := range knobDefs {
		v, src := getenv(k.env), "env "+k.env
		if v == "" {
			v, src = k.def, "default"
		}
		if err := k.set(&c, strings.TrimSpace(v)); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", k.env, v, err))
		}
		knobs = append(knobs, Knob{k.name, k.env, v, src})
	}
	c.Token = getenv("GRIT_TOKEN")
	tokSrc, tokVal := "default", "(none)"
	if c.Token != "" {
		tokSrc, tokVal = "env GRIT_TOKEN", "(set)"
	}
	knobs = append(knobs, Knob{"token", "GRIT_TOKEN", tokVal, tokSrc})
	return c, knobs, errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.SendRetries == 0 {
		c.SendRetries = 3
	}
	if c.SendBackoff <= 0 {
		c.SendBackoff = 100 * time.Millisecond
	}
	if c.MaxBatchSize <= 0 {
		c.MaxBatchSize = 50
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 100 * time.Millisecond
	}
	if c.ReportBatchSize <= 0 {
		c.ReportBatchSize = 500
	}
	if c.ReportInterval <= 0 {
		c.ReportInterval = 2 * time.Millisecond
	}
	if c.CallRetries == 0 {
		c.CallRetries = 4
	}
	return c
}

func (c Config) validate() error {
	if c.Addr == "" {
		return errors.New("client: no server address: set Config.Addr or GRIT_SERVER (e.g. 127.0.0.1:7420)")
	}
	if c.CAFile != "" && !c.TLS {
		return errors.New("client: CAFile is set without TLS: set TLS too")
	}
	return nil
}
