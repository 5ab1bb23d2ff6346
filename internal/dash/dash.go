// Package dash is grit's web dashboard: what an on-call operator looks
// at, and acts from, when work goes wrong. It is served by grit server
// (beside the gRPC API) and by grit dashboard alone on a store.
//
// Its pages are rendered on the server with html/template and read
// without JavaScript; a small script makes them live, refreshing the
// page's main part when the server-sent events of /live say the store
// changed. Its reads go through the store's optional capabilities
// (store.Overview, store.Console, store.GroupBreakers, store.Auditor,
// store.Scheduler, store.Machines), each of which answers from indexes,
// so that a page stays fast on a store of millions of tasks; a store
// without one shows less, never fails.
package dash

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config sets a dashboard up.
type Config struct {
	// Store is what the dashboard shows and acts on; required.
	Store store.Store
	// ReadStore, when set, is a replica of Store that the pages read
	// instead (sparing the primary); actions still go to Store. Every
	// page then says how far behind Store it is (store.Replicated).
	ReadStore store.Store
	// Tokens are those a visitor may log in with, each with its role (see
	// server.LoadTokens): read-only visitors see everything and change
	// nothing. Without tokens, Serve allows only a loopback address, and
	// every visitor is the local operator.
	Tokens []server.Token
	// Lease is the workers' lease: a worker not seen for that long is
	// shown as silent. 0 is 30s.
	Lease time.Duration
	// Metrics, when set, is served at /metrics (to the same visitors as
	// the pages, or to a bearer token).
	Metrics http.Handler
	// Version is shown in the footer.
	Version string
	// Logger gets the dashboard's errors; nil is slog.Default().
	Logger *slog.Logger
	// Live is how often the store is looked at for changes while a page
	// is open; 0 is a second.
	Live time.Duration
}

// Dashboard serves the pages.
type Dashboard struct {
	cfg Config
	// read is what the pages read: ReadStore, else Store.
	read  store.Store
	lag   *cached[string] // nil without a ReadStore
	sess  *sessions
	pages map[string]*template.Template
	mux   *http.ServeMux
	live  *hub
	// The overview's heavy reads, kept (see cached); nil when the store
	// cannot answer them.
	counts  *cached[[]store.QueueCount]
	series  *cached[[]store.AttemptBucket]
	letters *cached[[]store.DeadLetterGroup]
	// ramps are the ramped replays going on in the background; Close
	// stops them and waits for them.
	ramps struct {
		ctx  context.Context
		stop context.CancelFunc
		wg   sync.WaitGroup
	}
}

// New makes a dashboard.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Store == nil {
		return nil, errors.New("dashboard: no store")
	}
	for i, t := range cfg.Tokens {
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("dashboard: token %d: %w", i+1, err)
		}
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Live <= 0 {
		cfg.Live = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	sess, err := newSessions(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{cfg: cfg, sess: sess, read: cmp.Or[store.Store](cfg.ReadStore, cfg.Store)}
	d.ramps.ctx, d.ramps.stop = context.WithCancel(context.Background())
	if d.pages, err = parsePages(); err != nil {
		return nil, err
	}
	if cfg.ReadStore != nil {
		d.lag = newCached("the read store's lag", cfg.Logger.Warn, d.readLag)
	}
	if o, ok := d.read.(store.Overview); ok {
		d.counts = newCached("the counts of tasks", cfg.Logger.Warn, o.QueueCounts)
	}
	if c, ok := d.read.(store.Console); ok {
		d.series = newCached("the attempts of the last hour", cfg.Logger.Warn, func(ctx context.Context) ([]store.AttemptBucket, error) {
			return c.AttemptSeries(ctx, seriesSince(time.Now()), time.Minute)
		})
		d.letters = newCached("the dead letters", cfg.Logger.Warn, c.DeadLetterGroups)
	}
	d.live = newHub(d.signature, cfg.Live, cfg.Logger)
	d.routes()
	return d, nil
}

// readLag says how far the read store is behind the store, as every page
// shows it; a lag that cannot be told says why. It waits at most
// lagWait, so that a page does not wait for a store that is gone.
func (d *Dashboard) readLag(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, lagWait)
	defer cancel()
	lag, err := ops.ReplicaLag(ctx, d.cfg.Store, d.cfg.ReadStore)
	if err != nil {
		return "its lag behind the store is unknown: " + err.Error(), nil
	}
	return lag.String(), nil
}

// lagWait bounds the reading of the read store's lag.
const lagWait = 2 * time.Second

// ServeHTTP serves the dashboard.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; script-src 'self'; frame-ancestors 'none'; form-action 'self'")
	d.mux.ServeHTTP(w, r)
}

// ServeListener serves the dashboard on l until ctx ends, refusing, as
// the API does, an address other machines reach when it has no tokens
// (server.Insecure).
func (d *Dashboard) ServeListener(ctx context.Context, l net.Listener) error {
	if _, err := server.Insecure(l.Addr().String(), d.cfg.Tokens); err != nil {
		l.Close()
		return fmt.Errorf("dashboard: %w", err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		d.Close() // ends the streams, which Shutdown would wait for, and stops the ramps
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return fmt.Errorf("dashboard: %w", err)
}

// Close ends the live updates of open pages, and stops the ramped
// replays between two replays and waits for them (each records where it
// stopped). ServeListener closes the dashboard when its context ends.
func (d *Dashboard) Close() {
	d.live.close()
	d.ramps.stop()
	d.ramps.wg.Wait()
}

// handler is a page or an action: it gets the visitor, and returns an
// error to show.
type handler func(w http.ResponseWriter, r *http.Request, v who) error

func (d *Dashboard) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", cacheFor(time.Hour, http.FileServerFS(static))))
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	m.HandleFunc("GET /login", d.loginPage)
	m.HandleFunc("POST /login", d.login)
	m.HandleFunc("POST /logout", d.logout)
	m.Handle("GET /{$}", d.page(d.overview))
	m.Handle("GET /runs", d.page(d.runs))
	m.Handle("GET /runs/{id}", d.page(d.run))
	m.Handle("GET /tasks", d.page(d.tasks))
	m.Handle("GET /tasks/{id}", d.page(d.task))
	m.Handle("GET /dead-letters", d.page(d.deadLetters))
	m.Handle("GET /groups", d.page(d.groups))
	m.Handle("GET /schedules", d.page(d.schedules))
	m.Handle("GET /limits", d.page(d.limits))
	m.Handle("GET /machines", d.page(d.machines))
	m.Handle("GET /machines/{machine}/{key...}", d.page(d.instance))
	m.Handle("GET /workers", d.page(d.workers))
	m.Handle("GET /audit", d.page(d.audit))
	m.Handle("POST /tasks/{id}/act", d.action(d.actTask))
	m.Handle("POST /tasks/act", d.action(d.actTasks))
	m.Handle("POST /runs/{id}/redrive", d.action(d.actRedrive))
	m.Handle("POST /dead-letters/act", d.action(d.actDeadLetters))
	m.Handle("POST /dead-letters/quarantined", d.action(d.actQuarantined))
	m.Handle("POST /groups/breaker", d.action(d.actBreaker))
	m.Handle("POST /pauses", d.action(d.actPause))
	m.Handle("POST /limits", d.action(d.actLimit))
	m.Handle("POST /schedules/act", d.action(d.actSchedule))
	m.Handle("POST /machines/{machine}/{key...}", d.action(d.actSend))
	m.Handle("GET /live", d.page(d.stream))
	if d.cfg.Metrics != nil {
		m.Handle("GET /metrics", d.page(func(w http.ResponseWriter, r *http.Request, _ who) error {
			d.cfg.Metrics.ServeHTTP(w, r)
			return nil
		}))
	}
	d.mux = m
}

// page wraps a page: a visitor who is not logged in is sent to the login
// page (or answered 401 when they asked for something else than a page).
func (d *Dashboard) page(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := d.sess.visitor(r)
		if !ok {
			if strings.Contains(r.Header.Get("Accept"), "text/html") {
				http.Redirect(w, r, "/login?next="+urlEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, "not logged in: log in at /login, or send \"Authorization: Bearer TOKEN\"", http.StatusUnauthorized)
			return
		}
		if err := h(w, r, v); err != nil {
			d.fail(w, r, v, err)
		}
	})
}

// action wraps a state-changing request: it needs an operator, and its
// CSRF token.
func (d *Dashboard) action(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		v, ok := d.sess.visitor(r)
		switch {
		case !ok:
			http.Error(w, "not logged in: log in at /login, or send \"Authorization: Bearer TOKEN\"", http.StatusUnauthorized)
		case !d.sess.checkCSRF(r, v):
			http.Error(w, "the form's CSRF token is missing or wrong: reload the page and try again", http.StatusForbidden)
		case !v.operator():
			http.Error(w, "your token is read-only: log in with an operator's token to act", http.StatusForbidden)
		default:
			if err := h(w, r, v); err != nil {
				d.fail(w, r, v, err)
			}
		}
	})
}

// errNotFound is a page for something the store does not have.
type errNotFound struct{ what string }

func (e errNotFound) Error() string { return e.what + " not found" }

// errBadRequest is a request the dashboard cannot serve as asked.
type errBadRequest struct{ msg string }

func (e errBadRequest) Error() string { return e.msg }

// fail shows err as a page, with its status.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, v who, err error) {
	code := http.StatusInternalServerError
	var nf errNotFound
	var bad errBadRequest
	switch {
	case errors.As(err, &nf):
		code = http.StatusNotFound
	case errors.As(err, &bad):
		code = http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return
	default:
		d.cfg.Logger.Error("dashboard page failed", "path", r.URL.Path, "err", err)
	}
	w.WriteHeader(code)
	d.render(w, r, v, "error", "Error", map[string]any{"Code": code, "Message": err.Error()})
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(d/time.Second)))
		h.ServeHTTP(w, r)
	})
}

// hub runs one watcher of the store for every open page: it computes the
// store's signature every interval while someone listens, and tells each
// listener when it changed.
type hub struct {
	sig      func(context.Context) (string, error)
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	last   string
	cancel context.CancelFunc
	closed bool
}

func newHub(sig func(context.Context) (string, error), interval time.Duration, log *slog.Logger) *hub {
	return &hub{sig: sig, interval: interval, log: log, subs: map[chan struct{}]struct{}{}}
}

// subscribe returns a channel that receives a value after each change,
// and a function to stop. ok is false once the hub is closed.
func (h *hub) subscribe() (ch chan struct{}, stop func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, false
	}
	ch = make(chan struct{}, 1)
	h.subs[ch] = struct{}{}
	if h.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.cancel = cancel
		go h.watch(ctx)
	}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
		if len(h.subs) == 0 && h.cancel != nil {
			h.cancel()
			h.cancel = nil
		}
	}, true
}

func (h *hub) watch(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, h.interval*5)
		sig, err := h.sig(qctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				h.log.Debug("dashboard: could not look at the store for changes", "err", err)
			}
			continue
		}
		h.mu.Lock()
		if sig != h.last {
			h.last = sig
			for ch := range h.subs {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		h.mu.Unlock()
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
	for ch := range h.subs {
		close(ch)
		delete(h.subs, ch)
	}
}
