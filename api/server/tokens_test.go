package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/server"
)

const (
	tokA = "aaaaaaaaaaaaaaaa-1"
	tokB = "bbbbbbbbbbbbbbbb-2"
)

// operators is tokens of the operator's role.
func operators(vals ...string) []server.Token {
	var out []server.Token
	for _, v := range vals {
		out = append(out, server.Token{Value: v, Role: server.RoleOperator})
	}
	return out
}

func TestParseTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []server.Token
		err  string
	}{
		{"", nil, ""},
		{"# grit tokens\n\n" + tokA + "\n  " + tokB + "  \r\n" + tokA + "\n", operators(tokA, tokB), ""},
		{tokA + " read-only\n" + tokB + " Operator\n", []server.Token{{Value: tokA, Role: server.RoleReadOnly}, {Value: tokB, Role: server.RoleOperator}}, ""},
		{"short\n", nil, "line 1: server: bad token: 5 characters, want at least 16"},
		{"# c\n" + tokA + " # the CI's\n", nil, "line 2: server: bad token: 4 words: want a token, then optionally its role"},
		{tokA + " admin\n", nil, `line 1: server: bad token: the role "admin" is not one: want operator or read-only`},
		{tokA + "\n" + tokA + " read-only\n", nil, "one token is given twice, as operator and as read-only"},
		{tokA + ",x\n", nil, "a comma"},
		{tokA + "\x01\n", nil, "not visible ASCII"},
		{strings.Repeat("t", 1025), nil, "at most 1024"},
	}
	for _, tt := range tests {
		got, err := server.ParseTokens(tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, server.ErrBadToken) {
				t.Errorf("ParseTokens(%q) = %v, %v; want an error saying %q", tt.text, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseTokens(%v) = %v, %v; want %v", tt.text, got, err, tt.want)
		}
	}
}

func TestParseTokenList(t *testing.T) {
	t.Parallel()
	got, err := server.ParseTokenList(" " + tokA + ",," + tokB + " read-only ," + tokA)
	if err != nil || !slices.Equal(got, []server.Token{{Value: tokA, Role: server.RoleOperator}, {Value: tokB, Role: server.RoleReadOnly}}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := server.ParseTokenList(tokA + ",secret"); err == nil || !strings.Contains(err.Error(), "token 2") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a short token: %v (want its position, never the token)", err)
	}
}

func TestLoadTokens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# ops\n"+tokA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := server.LoadTokens(path, tokB+","+tokA)
	if err != nil || !slices.Equal(got, operators(tokA, tokB)) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := server.LoadTokens(path, ""); !errors.Is(err, server.ErrBadToken) || !strings.Contains(err.Error(), "chmod 600 "+path) || strings.Contains(err.Error(), tokA) {
			t.Errorf("a tokens file of mode %04o: %v (want a refusal saying chmod 600 %s)", mode, err, path)
		}
	}
	if _, err := server.LoadTokens(filepath.Join(t.TempDir(), "missing"), ""); err == nil || !strings.Contains(err.Error(), "tokens file") {
		t.Fatalf("a missing file: %v", err)
	}
	if _, err := server.LoadTokens("", "short"); err == nil || !strings.Contains(err.Error(), "GRIT_TOKENS: token 1") {
		t.Fatalf("a bad GRIT_TOKENS: %v", err)
	}
	if got, err := server.LoadTokens("", ""); err != nil || len(got) != 0 {
		t.Fatalf("no tokens: %v, %v", got, err)
	}
}

// FuzzParseTokens: any text parses to usable tokens or to an error that
// never repeats a token's characters beyond a line number.
func FuzzParseTokens(f *testing.F) {
	f.Add("# c\n" + tokA + "\n\n" + tokB + "\r\n")
	f.Add(tokA + " x")
	f.Add(tokA + " read-only\n" + tokB + " operator")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, text string) {
		ts, err := server.ParseTokens(text)
		if err != nil {
			if !errors.Is(err, server.ErrBadToken) {
				t.Fatalf("error %v does not match ErrBadToken", err)
			}
			return
		}
		var lines []string
		for _, tok := range ts {
			if len(tok.Value) < 16 || strings.ContainsAny(tok.Value, " \t\r\n,") || strings.HasPrefix(tok.Value, "#") || tok.Check() != nil {
				t.Fatalf("unusable token %v from %v", tok, text)
			}
			lines = append(lines, tok.Value+" "+string(tok.Role))
		}
		again, err := server.ParseTokens(strings.Join(lines, "\n"))
		if err != nil || !slices.Equal(again, ts) {
			t.Fatalf("tokens %v do not parse back: %v, %v", ts, again, err)
		}
	})
}

// TestTokensExecRight: a token's line may give it the right exec, after
// its role or alone (an operator's); a read-only token cannot have it.
func TestTokensExecRight(t *testing.T) {
	t.Parallel()
	got, err := server.ParseTokens(tokA + " exec\n" + tokB + " operator exec\n")
	if err != nil || len(got) != 2 || !got[0].Exec || !got[1].Exec || got[0].Role != server.RoleOperator {
		t.Fatalf("got %v, %v; want two operators' tokens with the right exec", got, err)
	}
	set := server.NewTokenSet(append(got, server.Token{Value: "plain-token-0123456789"}))
	if !set.Exec(tokA) || set.Exec("plain-token-0123456789") || set.Exec("unknown-token-0123456789") {
		t.Errorf("Exec: the set tells the right wrongly")
	}
	for line, want := range map[string]string{
		tokA + " read-only exec": "a read-only token cannot have the right exec",
		tokA + " exec exec":      "given twice",
		tokA + " operator root":  "at most a role",
	} {
		if _, err := server.ParseTokens(line); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), tokA) {
			t.Errorf("%q: %v, want an error saying %q that does not repeat the token", line, err, want)
		}
	}
	if _, err := server.ParseTokenList(tokA + " exec," + tokA); err == nil || !strings.Contains(err.Error(), "operator exec and as operator") {
		t.Errorf("one token with and without exec: %v", err)
	}
}
