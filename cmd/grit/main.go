// Command grit runs task files and operates grit's stores.
package main

import (
	"context"
	"os"

	"github.com/grit-run/grit/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
