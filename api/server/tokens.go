package server

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// TokensEnv is the environment variable that holds bearer tokens,
// separated by commas.
const TokensEnv = "GRIT_TOKENS"

// minToken is the shortest token accepted: a guessable token is no lock.
const minToken = 16

// maxToken bounds a token, so that it fits a header comfortably.
const maxToken = 1024

// ErrBadToken is wrapped by the errors of tokens that cannot be used.
var ErrBadToken = errors.New("server: bad token")

// Role is what a token may do.
type Role string

const (
	// RoleOperator may do everything: enqueue, work tasks, cancel, act in
	// the dashboard. A token without a role is an operator's.
	RoleOperator Role = "operator"
	// RoleReadOnly may only read: the API's Get, List and Attempts, and
	// the dashboard's pages without its buttons.
	RoleReadOnly Role = "read-only"
)

// RightExec is the right, beside a role, to enqueue process tasks (kind
// exec): a command that a worker which allows it (grit worker
// --allow-exec) runs. Only an operator's token may have it.
const RightExec = "exec"

// Token is a bearer token, its role and whether it has RightExec.
type Token struct {
	Value string
	Role  Role
	Exec  bool
}

// LoadTokens returns the tokens of a tokens file (path; "" for none) and
// of env, the value of GRIT_TOKENS, together, without repeats. A file
// that cannot be read, that its group or others can read or write, or a
// token that cannot be used, is an error that says where it is.
func LoadTokens(path, env string) ([]Token, error) {
	var out []Token
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("tokens file: %w", err)
		}
		if err := checkPrivate(path); err != nil {
			return nil, err
		}
		ts, err := ParseTokens(string(b))
		if err != nil {
			return nil, fmt.Errorf("tokens file %s: %w", path, err)
		}
		out = append(out, ts...)
	}
	ts, err := ParseTokenList(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TokensEnv, err)
	}
	return dedupe(append(out, ts...))
}

// checkPrivate refuses a tokens file that its group or others may read
// or write: every token in it opens the API to whoever reads it.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: tokens file %s is readable or writable by its group or others (mode %04o): anyone on the host could take its tokens; make it private with: chmod 600 %s",
			ErrBadToken, path, perm, path)
	}
	return nil
}

// ParseTokens reads a tokens file: one token per line, optionally
// followed by a space and its role (operator, the default, or
// read-only), and by the right exec (an operator's token only); blank lines and lines that start with # are skipped;
// spaces around a token are trimmed.
func ParseTokens(text string) ([]Token, error) {
	var out []Token
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseToken(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, t)
	}
	return dedupe(out)
}

// ParseTokenList reads tokens separated by commas, as GRIT_TOKENS holds
// them, each optionally followed by a space and its role; spaces around
// each are trimmed and empty ones skipped.
func ParseTokenList(s string) ([]Token, error) {
	var out []Token
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		t, err := parseToken(item)
		if err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		out = append(out, t)
	}
	return dedupe(out)
}

// parseToken reads "TOKEN", "TOKEN ROLE", "TOKEN exec" or "TOKEN
// operator exec".
func parseToken(s string) (Token, error) {
	fields := strings.Fields(s)
	t := Token{Value: fields[0], Role: RoleOperator}
	if len(fields) > 3 {
		return Token{}, fmt.Errorf("%w: %d words: want a token, then optionally its role (operator or read-only) and the right exec", ErrBadToken, len(fields))
	}
	role := false
	for _, w := range fields[1:] {
		switch {
		case strings.EqualFold(w, RightExec):
			if t.Exec {
				return Token{}, fmt.Errorf("%w: the right exec given twice", ErrBadToken)
			}
			t.Exec = true
		case !role:
			r, err := ParseRole(w)
			if err != nil {
				return Token{}, err
			}
			t.Role, role = r, true
		default:
			return Token{}, fmt.Errorf("%w: %q after the token's role: want at most a role (operator or read-only) and the right exec", ErrBadToken, w)
		}
	}
	if t.Exec && t.Role == RoleReadOnly {
		return Token{}, fmt.Errorf("%w: a read-only token cannot have the right exec: give exec to an operator's token", ErrBadToken)
	}
	return t, checkToken(t.Value)
}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(s)); r {
	case RoleOperator, RoleReadOnly:
		return r, nil
	}
	return "", fmt.Errorf("%w: the role %q is not one: want operator or read-only (and, for an operator, the right exec)", ErrBadToken, s)
}

// Check reports whether t can be used (see ParseTokens).
func (t Token) Check() error {
	if err := checkToken(t.Value); err != nil {
		return err
	}
	if _, err := ParseRole(string(t.Role)); err != nil && t.Role != "" {
		return err
	}
	return nil
}

// TokenName names a token for logs and the audit log, the same way
// wherever it is shown: "token 3f9a1c", a prefix of its hash, never the
// token.
func TokenName(tok string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return "token " + hex.EncodeToString(sum[:3])
}

// TokenSet finds a bearer token's role without showing, in its timing,
// anything of the tokens it holds.
type TokenSet struct {
	hashes [][sha256.Size]byte
	roles  []Role
	exec   []bool
}

// NewTokenSet holds ts; a token without a role is an operator's.
func NewTokenSet(ts []Token) *TokenSet {
	s := &TokenSet{}
	for _, t := range ts {
		s.hashes = append(s.hashes, sha256.Sum256([]byte(t.Value)))
		s.roles = append(s.roles, cmp.Or(t.Role, RoleOperator))
		s.exec = append(s.exec, t.Exec)
	}
	return s
}

// Len is how many tokens the set holds: none means no authentication.
func (s *TokenSet) Len() int { return len(s.hashes) }

// Role returns tok's role, and false when the set does not hold tok. It
// compares tok's hash with every token's, in constant time, so that
// neither a token's content nor its length shows in the timing.
func (s *TokenSet) Role(tok string) (Role, bool) {
	found := s.find(tok)
	if found < 0 {
		return "", false
	}
	return s.roles[found], true
}

// Exec reports whether the set holds tok with the right exec, in constant
// time as Role.
func (s *TokenSet) Exec(tok string) bool {
	found := s.find(tok)
	return found >= 0 && s.exec[found]
}

// find returns tok's place in the set, or -1, comparing its hash with
// every token's.
func (s *TokenSet) find(tok string) int {
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i, t := range s.hashes {
		if subtle.ConstantTimeCompare(h[:], t[:]) == 1 {
			found = i
		}
	}
	return found
}

// describe names a token's role and rights, never the token.
func (t Token) describe() string {
	if t.Exec {
		return string(t.Role) + " exec"
	}
	return string(t.Role)
}

// checkToken accepts 16 to 1024 visible ASCII characters (what a header
// carries), without commas (GRIT_TOKENS separates with them). The message
// never repeats the token: it is a secret.
func checkToken(t string) error {
	if len(t) < minToken {
		return fmt.Errorf("%w: %d characters, want at least %d (make one with: openssl rand -hex 32)", ErrBadToken, len(t), minToken)
	}
	if len(t) > maxToken {
		return fmt.Errorf("%w: %d characters, want at most %d", ErrBadToken, len(t), maxToken)
	}
	for i := range len(t) {
		c := t[i]
		switch {
		case c == ' ' || c == '\t':
			return fmt.Errorf("%w: a space at character %d: one token per line (a comment is a line of its own starting with #)", ErrBadToken, i+1)
		case c == ',':
			return fmt.Errorf("%w: a comma at character %d: tokens cannot hold commas", ErrBadToken, i+1)
		case c < 0x21 || c > 0x7e:
			return fmt.Errorf("%w: character %d is not visible ASCII: use letters, digits and punctuation", ErrBadToken, i+1)
		}
	}
	return nil
}

// dedupe drops repeated tokens; one token given two roles is an error.
func dedupe(ts []Token) ([]Token, error) {
	out := ts[:0:0]
	for _, t := range ts {
		i := slices.IndexFunc(out, func(o Token) bool { return o.Value == t.Value })
		switch {
		case i < 0:
			out = append(out, t)
		case out[i].Role != t.Role || out[i].Exec != t.Exec:
			return nil, fmt.Errorf("%w: one token is given twice, as %s and as %s: give each token one role and rights", ErrBadToken, out[i].describe(), t.describe())
		}
	}
	return out, nil
}
