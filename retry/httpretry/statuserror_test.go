package httpretry

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestStatusErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  StatusError
		want string
	}{
		{"full", StatusError{Code: 503, Status: "503 Service Unavailable", Method: "POST", URL: "https://x/y", RetryAfter: 2 * time.Second},
			"httpretry: POST https://x/y: 503 Service Unavailable (retry after 2s)"},
		{"no retry after", StatusError{Code: 404, Status: "404 Not Found", Method: "GET", URL: "http://x/"},
			"httpretry: GET http://x/: 404 Not Found"},
		{"no request", StatusError{Code: 500, Status: "500 Internal Server Error"},
			"httpretry: 500 Internal Server Error"},
		{"url only", StatusError{Code: 500, Status: "500 Oops", URL: "http://x/"},
			"httpretry: http://x/: 500 Oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewStatusError(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://bob:secret@api.example/v1/tasks?page=2")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		resp *http.Response
		want StatusError
	}{
		{"from a request", &http.Response{StatusCode: 502, Status: "502 Bad Gateway", Request: &http.Request{Method: "PUT", URL: u}},
			StatusError{Code: 502, Status: "502 Bad Gateway", Method: "PUT", URL: "https://bob:xxxxx@api.example/v1/tasks?page=2"}},
		{"empty method is GET", &http.Response{StatusCode: 400, Status: "400 Bad Request", Request: &http.Request{URL: u}},
			StatusError{Code: 400, Status: "400 Bad Request", Method: "GET", URL: "https://bob:xxxxx@api.example/v1/tasks?page=2"}},
		{"no status line", &http.Response{StatusCode: 418},
			StatusError{Code: 418, Status: "418 I'm a teapot"}},
		{"unknown code", &http.Response{StatusCode: 499},
			StatusError{Code: 499, Status: "499"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := newStatusError(tt.resp); *got != tt.want {
				t.Errorf("newStatusError = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
