package dash

import (
	"net/http"
	"strings"
)

type loginData struct {
	Next   string
	Failed bool
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	if d.sess.open() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	d.render(w, r, who{}, "login", "Log in", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

// login checks the posted token and sets the session cookie. A login
// form needs no CSRF token: it changes nothing but the visitor's own
// session, and SameSite cookies keep another site from riding it.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := safeNext(r.PostFormValue("next"))
	v, ok := d.sess.login(r.PostFormValue("token"))
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		d.render(w, r, who{}, "login", "Log in", loginData{Next: next, Failed: true})
		return
	}
	http.SetCookie(w, d.sess.cookie(v, r.TLS != nil))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if v, ok := d.sess.visitor(r); ok && !d.sess.checkCSRF(r, v) {
		http.Error(w, "the form's CSRF token is missing or wrong: reload the page and try again", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a redirect after login on this site.
func safeNext(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") {
		return "/"
	}
	return s
}
