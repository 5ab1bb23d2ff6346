package dash

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/grit-run/grit/api/server"
)

// The dashboard's security follows the gRPC API's rule: without tokens it
// serves only a loopback address (Serve refuses any other, through
// server.Insecure), and everyone who reaches it is the local operator.
// With tokens, a visitor logs in with one; the session cookie then says
// who they are and their role, signed with a key that lives as long as
// the process (a restart logs everyone out, which is a fair price for
// keeping no secret on disk). Every POST carries a CSRF token derived
// from the session, so that another site cannot make a logged-in
// operator's browser act.

// sessionCookie is the session cookie's name.
const sessionCookie = "grit_session"

// sessionTTL is how long a login lasts.
const sessionTTL = 12 * time.Hour

// who is the visitor of a request.
type who struct {
	Name string      `json:"n"` // for the audit log: "local", or "token 3f9a1c" (a hash's prefix, never the token)
	Role server.Role `json:"r"`
	Exp  int64       `json:"e"` // unix seconds; 0 for the local operator
	// Nonce makes each session's CSRF token its own.
	Nonce string `json:"c"`
}

func (w who) operator() bool { return w.Role == server.RoleOperator }

// sessions signs and checks session cookies and CSRF tokens.
type sessions struct {
	key    []byte
	tokens *server.TokenSet
	now    func() time.Time
}

func newSessions(tokens []server.Token) (*sessions, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &sessions{key: key, tokens: server.NewTokenSet(tokens), now: time.Now}, nil
}

// open reports whether the dashboard has no tokens: everyone is the local
// operator.
func (s *sessions) open() bool { return s.tokens.Len() == 0 }

// local is the visitor of a dashboard without tokens. Its CSRF nonce is
// fixed for the process: without sessions there is nothing to tie it to,
// and a loopback-only dashboard is still reachable from a browser's other
// tabs, so POSTs keep their check.
func (s *sessions) local() who {
	return who{Name: "local", Role: server.RoleOperator, Nonce: s.mac("local")[:16]}
}

// login checks a token and returns the visitor it makes.
func (s *sessions) login(token string) (who, bool) {
	role, ok := s.tokens.Role(strings.TrimSpace(token))
	if !ok {
		return who{}, false
	}
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		return who{}, false
	}
	return who{
		Name: server.TokenName(token), Role: role,
		Exp: s.now().Add(sessionTTL).Unix(), Nonce: hex.EncodeToString(nonce),
	}, true
}

// cookie is w's signed session cookie.
func (s *sessions) cookie(w who, secure bool) *http.Cookie {
	b, _ := json.Marshal(w)
	v := base64.RawURLEncoding.EncodeToString(b)
	return &http.Cookie{
		Name: sessionCookie, Value: v + "." + s.mac(v), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: secure, MaxAge: int(sessionTTL / time.Second),
	}
}

// visitor is who a request comes from: the local operator on a dashboard
// without tokens; else the session its cookie holds, or the bearer token
// its Authorization header holds (for scripts); false when neither is
// valid.
func (s *sessions) visitor(r *http.Request) (who, bool) {
	if s.open() {
		return s.local(), true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			w, ok := s.login(tok)
			return w, ok
		}
		return who{}, false
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return who{}, false
	}
	v, mac, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.mac(v))) {
		return who{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return who{}, false
	}
	var w who
	if json.Unmarshal(b, &w) != nil || w.Exp < s.now().Unix() {
		return who{}, false
	}
	if _, err := server.ParseRole(string(w.Role)); err != nil {
		return who{}, false
	}
	return w, true
}

// csrf is the CSRF token of w's forms.
func (s *sessions) csrf(w who) string { return s.mac("csrf:" + w.Nonce) }

// checkCSRF reports whether a state-changing request carries w's CSRF
// token (the form field csrf, or the X-CSRF-Token header). A request
// with a bearer token needs none: a browser never adds that header by
// itself.
func (s *sessions) checkCSRF(r *http.Request, w who) bool {
	if !s.open() && r.Header.Get("Authorization") != "" {
		return true
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && hmac.Equal([]byte(got), []byte(s.csrf(w)))
}

func (s *sessions) mac(v string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(v))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
