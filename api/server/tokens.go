package server

import (
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

// LoadTokens returns the tokens of a tokens file (path; "" for none) and
// of env, the value of GRIT_TOKENS, together, without repeats. A file
// that cannot be read, or a token that cannot be used, is an error that
// says where it is.
func LoadTokens(path, env string) ([]string, error) {
	var out []string
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("tokens file: %w", err)
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
	return dedupe(append(out, ts...)), nil
}

// ParseTokens reads a tokens file: one token per line; blank lines and
// lines that start with # are skipped; spaces around a token are
// trimmed.
func ParseTokens(text string) ([]string, error) {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := checkToken(line); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, line)
	}
	return dedupe(out), nil
}

// ParseTokenList reads tokens separated by commas, as GRIT_TOKENS holds
// them; spaces around each are trimmed and empty ones skipped.
func ParseTokenList(s string) ([]string, error) {
	var out []string
	for i, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if err := checkToken(t); err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		out = append(out, t)
	}
	return dedupe(out), nil
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

func dedupe(ts []string) []string {
	out := ts[:0:0]
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
