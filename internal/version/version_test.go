package version

import (
	"runtime/debug"
	"testing"
	"time"
)

func TestFromBuild(t *testing.T) {
	t.Parallel()
	const rev = "55bdfa8c1234567890abcdef1234567890abcdef"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-01-02T15:04:05Z"}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		version  string
		revision string
		modified bool
		str      string
	}{
		{"no build information", nil, "(devel)", "", false, "(devel)"},
		{"go test", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}}, "(devel)", "", false, "(devel)"},
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20260102150405-55bdfa8c1234+dirty"}, Settings: vcs("true")},
			"v0.0.0-20260102150405-55bdfa8c1234+dirty", rev, true, "v0.0.0-20260102150405-55bdfa8c1234+dirty"},
		{"revision without a version", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: vcs("true")},
			"(devel)", rev, true, "(devel)-55bdfa8c1234+dirty"},
		{"go install @v1.2.0", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v1.2.0"}}, "v1.2.0", "", false, "v1.2.0"},
		{"a dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v3.0.0"}, Settings: vcs("false"),
			Deps: []*debug.Module{{Path: "example.com/other", Version: "v9.9.9"}, {Path: Module, Version: "v1.4.0"}}}, "v1.4.0", "", false, "v1.4.0"},
		{"a replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.4.0", Replace: &debug.Module{Path: "../grit"}}}}, "(devel)", "", false, "(devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			i := FromBuild(tt.bi)
			if i.Version != tt.version || i.Revision != tt.revision || i.Modified != tt.modified || i.String() != tt.str {
				t.Errorf("got %+v (%s), want version %s, revision %q, modified %v (%s)", i, i, tt.version, tt.revision, tt.modified, tt.str)
			}
			if (i.CommitTime != nil) != (tt.revision != "") || i.Go == "" || i.Platform == "" {
				t.Errorf("commit time %v, go %q, platform %q", i.CommitTime, i.Go, i.Platform)
			}
		})
	}
}

func TestStamped(t *testing.T) {
	t.Parallel()
	const rev = "55bdfa8c1234567890abcdef1234567890abcdef"
	built := FromBuild(&debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}})
	if got := built.Stamped("", "", "", ""); got.Version != "(devel)" || got.Revision != "" || got.CommitTime != nil {
		t.Errorf("nothing stamped: %+v", got)
	}
	got := built.Stamped("v1.2.0", rev, "true", "2026-01-02T15:04:05Z")
	if got.Version != "v1.2.0" || got.Revision != rev || !got.Modified || got.CommitTime == nil ||
		!got.CommitTime.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)) || got.String() != "v1.2.0-55bdfa8c1234+dirty" {
		t.Errorf("stamped: %+v (%s)", got, got)
	}
	checkout := FromBuild(&debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20260102150405-aaaaaaaaaaaa+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "aaaa"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}}})
	if got := checkout.Stamped("", rev, "false", "not a time"); got.Revision != rev || got.Modified || got.CommitTime != nil {
		t.Errorf("a stamped revision replaces the recorded one, its modified and its time: %+v", got)
	}
}
