package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/retry"
)

func newConfigCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "print the effective settings and where each comes from",
		Long: `Prints every setting a deployment tunes, its GRIT_* variable, the value in
effect and where it came from: a flag, the variable, the config file
(--config or GRIT_CONFIG, as "file NAME:LINE"), or the default. It takes
the flags of the commands that have them (grit config --lease 1m shows
what grit worker --lease 1m would run with), and reads every value as
those commands do: a bad one is reported, and grit config exits 2. Each
command reads only the settings it has, so grit config is the one that
checks every value in a config file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.settings(cmd.Flags())
			out, cerr := e.configRows(s, storeFlag.source(cmd.Flags(), e.getenv, e.config), readStoreFlag.source(cmd.Flags(), e.getenv, e.config),
				notifyStoreFlag.source(cmd.Flags(), e.getenv, e.config))
			err = errors.Join(err, cerr)
			if asJSON {
				if jerr := json.NewEncoder(e.stdout).Encode(out); jerr != nil {
					return jerr
				}
			} else {
				w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "SETTING\tENV\tVALUE\tSOURCE")
				for _, s := range out {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.Env, s.Value, s.Source)
				}
				if ferr := w.Flush(); ferr != nil {
					return ferr
				}
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	registerKnobs(cmd.Flags(), allKnobs())
	readStoreFlag.register(cmd.Flags(), &e.readDSN, e.getenv)
	return cmd
}

// configRow is one setting as grit config prints it.
type configRow struct {
	Name   string `json:"name"`
	Env    string `json:"env"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// configRows are every setting grit config lists: the store, the read
// store and the notify store, every knob with its value in s, the
// server's tokens and the client's knobs. The error is the client knobs'.
func (e *env) configRows(s settings, storeSrc, readSrc, notifySrc string) ([]configRow, error) {
	read := "(none: the store)"
	if e.readDSN != "" {
		read = shownDSN(e.readDSN)
	}
	out := []configRow{{storeFlag.name, storeFlag.env, shownDSN(e.storeDSN), storeSrc}, {readStoreFlag.name, readStoreFlag.env, read, readSrc},
		{notifyStoreFlag.name, notifyStoreFlag.env, shownDSN(e.notifyDSN), notifySrc}}
	for _, k := range allKnobs() {
		v, src := k.shown(s.values[k.name]), s.sources[k.name]
		switch {
		case k.name == knobHeartbeat.name && src == "default" && s.lease > 0:
			v, src = retry.FormatDuration(s.heartbeat), "default (a third of the lease)"
		case k.name == knobWorkerID.name && v == "":
			v = "host-pid-random"
		case k.name == knobBreaker.name && v == "":
			v = "breaker's defaults"
		case k.name == knobAlertWebhook.name && v == "":
			v = "(none)"
		}
		out = append(out, configRow{k.name, k.env, v, src})
	}
	tokens := configRow{"tokens", server.TokensEnv, "(none)", "default"}
	if e.getenv(server.TokensEnv) != "" {
		tokens.Value, tokens.Source = "(set)", "env "+server.TokensEnv
	}
	out = append(out, tokens)
	_, knobs, err := client.FromEnv(e.getenv)
	for _, k := range knobs {
		out = append(out, configRow{k.Name, k.Env, k.Value, k.Source})
	}
	return out, err
}
