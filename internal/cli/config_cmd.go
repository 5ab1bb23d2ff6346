package cli

import (
	"encoding/json"
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			type setting struct {
				Name   string `json:"name"`
				Env    string `json:"env"`
				Value  string `json:"value"`
				Source string `json:"source"`
			}
			storeSrc := "default"
			if cmd.Flags().Changed("store") {
				storeSrc = "flag --store"
			} else if e.getenv("GRIT_STORE") != "" {
				storeSrc = "env GRIT_STORE"
			}
			out := []setting{{"store", "GRIT_STORE", e.storeDSN, storeSrc}}
			for _, k := range workerKnobs {
				v, src := e.lookup(k, "")
				if k == knobHeartbeat && src == "default" {
					if lease, err := e.durationKnob(knobLease, ""); err == nil {
						v, src = retry.FormatDuration(lease/3), "default (a third of the lease)"
					}
				}
				if v == "" && k == knobWorkerID {
					v = "host-pid-random"
				}
				out = append(out, setting{k.name, k.env, v, src})
			}
			for _, k := range serverKnobs {
				v, src := e.lookup(k, "")
				out = append(out, setting{k.name, k.env, v, src})
			}
			tokens := setting{"tokens", server.TokensEnv, "(none)", "default"}
			if e.getenv(server.TokensEnv) != "" {
				tokens.Value, tokens.Source = "(set)", "env "+server.TokensEnv
			}
			out = append(out, tokens)
			_, knobs, err := client.FromEnv(e.getenv)
			for _, k := range knobs {
				out = append(out, setting{k.Name, k.Env, k.Value, k.Source})
			}
			if asJSON {
				if jerr := json.NewEncoder(e.stdout).Encode(out); jerr != nil {
					return jerr
				}
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				return nil
			}
			w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SETTING\tENV\tVALUE\tSOURCE")
			for _, s := range out {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.Env, s.Value, s.Source)
			}
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
