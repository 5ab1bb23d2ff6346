// Command retrydemo calls a flaky payments API (a local test server that
// answers 503 twice, then 200) through retry.Do and httpretry, and then a
// call the API refuses with 400, which is not retried.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/httpretry"
)

func main() {
	var calls atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/charge/bad":
			http.Error(w, "card number is invalid", http.StatusBadRequest)
		case calls.Add(1) <= 2:
			http.Error(w, "upstream busy", http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, `{"id":"ch_123"}`)
		}
	}))
	defer api.Close()

	policy := retry.MustParse("4 50ms 1s") // 4 retries, 50ms doubling up to 1s, full jitter
	notify := retry.WithNotify(func(n retry.Notice) {
		fmt.Printf("  attempt %d: %v -> %s", n.Attempt, n.Err, n.Decision.Reason)
		if n.Decision.Retry {
			fmt.Printf(" in %s", n.Decision.Delay.Round(time.Millisecond))
		}
		fmt.Println()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	fmt.Println("POST /charge/o-42 (the API fails twice, then answers):")
	status, err := retry.Do(ctx, charge(api.URL+"/charge/o-42"), retry.WithPolicy(policy), notify)
	fmt.Printf("  result: %s, err: %v\n", status, err)

	fmt.Println("POST /charge/bad (the API refuses it: permanent, not retried):")
	_, err2 := retry.Do(ctx, charge(api.URL+"/charge/bad"), retry.WithPolicy(policy), notify)
	fmt.Printf("  err: %v\n", err2)
	if err != nil || err2 == nil {
		os.Exit(1)
	}
}

// charge returns an operation that posts to url and classifies the answer.
func charge(url string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return "", retry.Permanent(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err := httpretry.Classify(resp, err, time.Now()); err != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return "", err
		}
		defer resp.Body.Close()
		return resp.Status, nil
	}
}
