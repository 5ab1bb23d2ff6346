package httpretry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/httpretry"
)

func ExampleClassify() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/send", "application/json", nil)
	if resp != nil {
		defer resp.Body.Close() // Classify leaves the body to the caller
	}
	err = httpretry.Classify(resp, err, time.Now())

	class, delay := retry.Classify(err)
	fmt.Println(class, delay)
	var se *httpretry.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Method, se.RetryAfter)
	}
	// Output:
	// after 2s
	// 503 POST 2s
}

func ExampleClassify_statuses() {
	for _, code := range []int{200, 404, 408, 429, 500, 501} {
		err := httpretry.Classify(&http.Response{StatusCode: code}, nil, time.Time{})
		class, _ := retry.Classify(err)
		fmt.Println(code, class, err)
	}
	// Output:
	// 200 unclassified <nil>
	// 404 permanent httpretry: 404 Not Found
	// 408 transient httpretry: 408 Request Timeout
	// 429 transient httpretry: 429 Too Many Requests
	// 500 transient httpretry: 500 Internal Server Error
	// 501 permanent httpretry: 501 Not Implemented
}

func ExampleClassify_transportError() {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: errors.New("connection refused")}
	class, _ := retry.Classify(httpretry.Classify(nil, err, time.Now()))
	fmt.Println(class)
	// Output:
	// transient
}

func ExampleParseRetryAfter() {
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	for _, v := range []string{"120", " 0 ", "Tue, 21 Oct 2025 07:29:30 GMT", "-1", "1.5", "soon"} {
		d, ok := httpretry.ParseRetryAfter(v, now)
		fmt.Printf("%q: %v %v\n", v, d, ok)
	}
	// Output:
	// "120": 2m0s true
	// " 0 ": 0s true
	// "Tue, 21 Oct 2025 07:29:30 GMT": 1m30s true
	// "-1": 0s false
	// "1.5": 0s false
	// "soon": 0s false
}

func ExampleStatusError() {
	err := &httpretry.StatusError{
		Code:       503,
		Status:     "503 Service Unavailable",
		Method:     "POST",
		URL:        "https://x/y",
		RetryAfter: 2 * time.Second,
	}
	fmt.Println(err)
	// Output:
	// httpretry: POST https://x/y: 503 Service Unavailable (retry after 2s)
}
