package dash

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestTextSearchAloneLooksAtTheNewestTasks: a text with nothing else to
// narrow it is sought in the newest textWindow tasks, and the page says
// so; with a state it looks at all of that state's.
func TestTextSearchAloneLooksAtTheNewestTasks(t *testing.T) {
	defer func(w int64) { textWindow = w }(textWindow)
	textWindow = 10
	st, err := sqlite.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var nts []task.NewTask
	for i := 1; i <= 30; i++ {
		args := `{"n":1}`
		if i == 1 || i == 25 {
			args = `{"note":"needle"}`
		}
		nts = append(nts, task.NewTask{Kind: "k", Args: []byte(args)})
	}
	if _, err := st.Enqueue(context.Background(), nts); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	page := func(path string) string {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Body.String()
	}
	alone := page("/tasks?q=needle")
	if !strings.Contains(alone, `href="/tasks/25"`) || strings.Contains(alone, `href="/tasks/1"`) || !strings.Contains(alone, "newest 10 tasks") {
		t.Errorf("a text alone: want task 25 of the newest 10, not task 1, and a note saying so:\n%s", alone)
	}
	withState := page("/tasks?q=needle&state=READY")
	if !strings.Contains(withState, `href="/tasks/25"`) || !strings.Contains(withState, `href="/tasks/1"`) || strings.Contains(withState, "newest 10 tasks") {
		t.Errorf("a text with a state: want tasks 25 and 1:\n%s", withState)
	}
}
