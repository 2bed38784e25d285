// Command kernelkit fits, applies and benchmarks kernel models built on
// random features.
//
//	kernelkit demo                      the letter benchmark table and plot
//	kernelkit fit --train A.csv ...     fit a model, report test metrics
//	kernelkit predict --model m.kk ...  predictions of a saved model
//	kernelkit transform ...             random features of rows, as CSV
//
// Every command reports errors as one line on standard error and exits
// with status 1. An interrupt (SIGINT, SIGTERM) cancels the running work;
// output files are written atomically, so an interrupted command leaves
// the old file in place.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		if interrupted && errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "kernelkit:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine returns msg on one line of at most 300 bytes.
func oneLine(msg string) string {
	msg = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg)
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	return msg
}
