package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/version"
)

// Version is grit's version as workers record it, from the build.
var Version = version.Get().String()

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print grit's version and the commit it was built from (also grit --version)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(version.Get())
			}
			printVersion(e.stdout, version.Get())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"version", "revision", "modified", "commit_time", "go", "platform"}`)
	return cmd
}

func printVersion(w io.Writer, i version.Info) {
	fmt.Fprintf(w, "grit %s\n", i.Version)
	switch {
	case i.Revision == "":
		fmt.Fprintln(w, "revision unknown: built without version control information")
	case i.Modified:
		fmt.Fprintf(w, "revision %s, modified, committed %s\n", i.Revision, i.CommitTime.Format(time.RFC3339))
	default:
		fmt.Fprintf(w, "revision %s, committed %s\n", i.Revision, i.CommitTime.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "%s %s\n", i.Go, i.Platform)
}
