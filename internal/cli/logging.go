package cli

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// logFlags are the root's --log-format and --log-level, which every command
// that logs (grit worker, grit server, grit run) reads through env.logger:
// a deployment picks JSON for its log collector and a level once, not per
// command.
type logFlags struct {
	format, level string
}

var (
	logFormats = []string{"text", "json"}
	logLevels  = []string{"debug", "info", "warn", "error"}
)

// register adds the flags, defaulting to GRIT_LOG_FORMAT and
// GRIT_LOG_LEVEL. An empty level means each command's own default: info
// for a worker or server, warn for grit run, whose progress is its output.
func (l *logFlags) register(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&l.format, "log-format", cmpOr(getenv("GRIT_LOG_FORMAT"), "text"),
		"how logs are written to stderr: "+strings.Join(logFormats, " or ")+" (env GRIT_LOG_FORMAT)")
	fs.StringVar(&l.level, "log-level", getenv("GRIT_LOG_LEVEL"),
		"the least severe log line written: "+strings.Join(logLevels, ", ")+" (env GRIT_LOG_LEVEL; default info, warn for grit run)")
}

// check refuses a format or level grit does not know, naming the flag and
// what it takes, before a command starts.
func (l *logFlags) check() error {
	if !slices.Contains(logFormats, l.format) {
		return usageErr("--log-format %q: want %s (or set GRIT_LOG_FORMAT)", l.format, strings.Join(logFormats, " or "))
	}
	if l.level != "" && !slices.Contains(logLevels, l.level) {
		return usageErr("--log-level %q: want one of %s (or set GRIT_LOG_LEVEL)", l.level, strings.Join(logLevels, ", "))
	}
	return nil
}

// logger is the command's logger on w, at def unless --log-level says
// otherwise. check has accepted the flags.
func (l *logFlags) logger(w io.Writer, def slog.Level) *slog.Logger {
	level := def
	if l.level != "" {
		if err := level.UnmarshalText([]byte(l.level)); err != nil {
			panic(fmt.Sprintf("log level %q passed check: %v", l.level, err))
		}
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: durationText}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logger is the logger of a command that logs to stderr, at def unless
// --log-level says otherwise.
func (e *env) logger(def slog.Level) *slog.Logger { return e.logs.logger(e.stderr, def) }

// durationText writes a duration as people and log collectors read it
// ("15s"), not as the nanoseconds slog's JSON handler writes
// (15000000000).
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
