package proc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/grit-run/grit/internal/proc"
)

func ExampleRun() {
	res, err := proc.Run(context.Background(), proc.Spec{
		Shell: `echo converting; echo "disk full: /var/tmp" >&2; exit 75`,
	})
	if err != nil {
		fmt.Println(err) // the command did not start
		return
	}
	fmt.Printf("exit %d, stdout %q, last stderr line %q\n", res.ExitCode, res.Stdout, res.LastLine())
	// Output: exit 75, stdout "converting\n", last stderr line "disk full: /var/tmp"
}

func ExampleRun_timeout() {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := proc.Run(ctx, proc.Spec{Argv: []string{"sleep", "60"}, Grace: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.TimedOut, res.Killed, res.Signal)
	// Output: true false SIGTERM
}
