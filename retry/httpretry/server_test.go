package httpretry

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

// do sends one request to target, bounded so a broken server cannot hang the
// test, and classifies what came back. The body is the caller's to close, so
// do closes it.
func do(t *testing.T, client *http.Client, method, target string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return doCtx(t, ctx, client, method, target)
}

func doCtx(t *testing.T, ctx context.Context, client *http.Client, method, target string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if resp != nil {
		defer resp.Body.Close()
	}
	return Classify(resp, err, now)
}

// statusServer answers /?code=N&retry-after=V with status N and, if given,
// a Retry-After of V.
func statusServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("retry-after"); v != "" {
			w.Header().Set("Retry-After", v)
		}
		code, err := strconv.Atoi(r.URL.Query().Get("code"))
		if err != nil {
			code = http.StatusOK
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte("body that Classify must not read"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClassifyRealResponses(t *testing.T) {
	t.Parallel()
	srv := statusServer(t)
	date := url.QueryEscape(now.Add(90 * time.Second).Format(http.TimeFormat))
	tests := []struct {
		query     string
		wantNil   bool
		wantClass retry.Class
		wantDelay time.Duration
		wantMsg   string
	}{
		{query: "code=200", wantNil: true},
		{query: "code=304", wantNil: true},
		{query: "code=400", wantClass: retry.ClassPermanent, wantMsg: "400 Bad Request"},
		{query: "code=404", wantClass: retry.ClassPermanent, wantMsg: "404 Not Found"},
		{query: "code=408", wantClass: retry.ClassTransient, wantMsg: "408 Request Timeout"},
		{query: "code=429", wantClass: retry.ClassTransient, wantMsg: "429 Too Many Requests"},
		{query: "code=429&retry-after=7", wantClass: retry.ClassAfter, wantDelay: 7 * time.Second, wantMsg: "429 Too Many Requests (retry after 7s)"},
		{query: "code=503&retry-after=" + date, wantClass: retry.ClassAfter, wantDelay: 90 * time.Second, wantMsg: "503 Service Unavailable (retry after 1m30s)"},
		{query: "code=503&retry-after=later", wantClass: retry.ClassTransient, wantMsg: "503 Service Unavailable"},
		{query: "code=500", wantClass: retry.ClassTransient, wantMsg: "500 Internal Server Error"},
		{query: "code=501", wantClass: retry.ClassPermanent, wantMsg: "501 Not Implemented"},
		{query: "code=502", wantClass: retry.ClassTransient, wantMsg: "502 Bad Gateway"},
		{query: "code=504", wantClass: retry.ClassTransient, wantMsg: "504 Gateway Timeout"},
		{query: "code=505", wantClass: retry.ClassPermanent, wantMsg: "505 HTTP Version Not Supported"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			target := srv.URL + "/v1/send?" + tt.query
			err := do(t, srv.Client(), http.MethodPost, target)
			if tt.wantNil {
				if err != nil {
					t.Fatalf("Classify = %v, want nil", err)
				}
				return
			}
			class, delay := retry.Classify(err)
			if class != tt.wantClass || delay != tt.wantDelay {
				t.Errorf("retry.Classify = %v, %v; want %v, %v", class, delay, tt.wantClass, tt.wantDelay)
			}
			if want := "httpretry: POST " + target + ": " + tt.wantMsg; err.Error() != want {
				t.Errorf("message = %q\nwant      %q", err.Error(), want)
			}
		})
	}
}

func TestClassifyLeavesBodyUnread(t *testing.T) {
	t.Parallel()
	srv := statusServer(t)
	resp, err := srv.Client().Get(srv.URL + "/?code=503")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := Classify(resp, nil, now); !errors.Is(err, retry.ErrTransient) {
		t.Fatalf("Classify = %v, want transient", err)
	}
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	if got := string(buf[:n]); got != "body that Classify must not read" {
		t.Errorf("body after Classify = %q", got)
	}
}

func TestClassifyRealTransportErrors(t *testing.T) {
	t.Parallel()
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		lis.Close()
		err = do(t, http.DefaultClient, http.MethodGet, "http://"+addr+"/")
		wantClass(t, err, retry.ClassTransient)
	})
	t.Run("EOF", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		defer srv.Close()
		wantClass(t, do(t, srv.Client(), http.MethodPost, srv.URL), retry.ClassTransient)
	})
	t.Run("connection reset", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // close with RST
			}
			conn.Close()
		}))
		defer srv.Close()
		wantClass(t, do(t, srv.Client(), http.MethodPost, srv.URL), retry.ClassTransient)
	})
	t.Run("client timeout", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // until the client gives up
		}))
		defer srv.Close()
		client := &http.Client{Timeout: 50 * time.Millisecond}
		wantClass(t, do(t, client, http.MethodGet, srv.URL), retry.ClassTransient)
	})
	t.Run("canceled", func(t *testing.T) {
		t.Parallel()
		srv := statusServer(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		wantClass(t, doCtx(t, ctx, srv.Client(), http.MethodGet, srv.URL), retry.ClassCanceled)
	})
	t.Run("unknown certificate authority", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is expected
		srv.StartTLS()
		defer srv.Close()
		err := do(t, &http.Client{}, http.MethodGet, srv.URL) // trusts only the system roots
		wantClass(t, err, retry.Unclassified)
		if !badCertificate(err) {
			t.Errorf("%v is not a certificate error", err)
		}
	})
	t.Run("too many redirects", func(t *testing.T) {
		t.Parallel()
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, srv.URL+"/again", http.StatusFound)
		}))
		defer srv.Close()
		wantClass(t, do(t, srv.Client(), http.MethodGet, srv.URL), retry.Unclassified)
	})
}

func wantClass(t *testing.T, err error, want retry.Class) {
	t.Helper()
	if err == nil {
		t.Fatal("Classify = nil, want an error")
	}
	if class, _ := retry.Classify(err); class != want {
		t.Errorf("Classify = %v: class %v, want %v", err, class, want)
	}
}
