// Package version says which grit is running, from what the go command
// recorded in the binary (runtime/debug.ReadBuildInfo): the grit module's
// version and, when grit is the main module of a build from a git
// checkout, the commit it was built from and whether the tree had
// uncommitted changes. It is the one source of grit's version: grit
// version prints it and workers record it.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Module is grit's module path.
const Module = "github.com/grit-run/grit"

// Info is what the build says of grit.
type Info struct {
	// Version is the grit module's version: a tag (v1.2.0), a
	// pseudo-version (v0.0.0-20260102150405-55bdfa8c1234, +dirty when
	// modified), or "(devel)" when the go command did not know it.
	Version string `json:"version"`
	// Revision is the commit grit was built from, "" when the build did not
	// record one (go test, a git worktree, -buildvcs=false, or grit built as
	// a dependency of another module).
	Revision string `json:"revision"`
	// Modified reports that the tree had changes not committed.
	Modified bool `json:"modified"`
	// CommitTime is the commit's time, nil without a revision.
	CommitTime *time.Time `json:"commit_time"`
	Go         string     `json:"go"`       // the Go release that built it
	Platform   string     `json:"platform"` // GOOS/GOARCH
}

var (
	once sync.Once
	info Info
)

// What scripts/release stamps into a binary at link time (go build
// -ldflags "-X github.com/grit-run/grit/internal/version.stampRevision=…"):
// the version, the commit, "true" when the tree had uncommitted changes,
// and the commit's time (RFC 3339). They win over what the go command
// recorded, which is nothing in a build outside a git checkout (a source
// archive, a Docker build context without .git, a git worktree).
var stampVersion, stampRevision, stampModified, stampTime string

// Get returns what the running binary's build says of grit: what
// scripts/release stamped, else what the go command recorded.
func Get() Info {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		info = FromBuild(bi).Stamped(stampVersion, stampRevision, stampModified, stampTime)
	})
	return info
}

// Stamped is i with what a release build stamped: a version and a
// revision each replace i's when not "", and with the revision come
// whether the tree was modified ("true") and the commit's time.
func (i Info) Stamped(version, revision, modified, commitTime string) Info {
	if version != "" {
		i.Version = version
	}
	if revision != "" {
		i.Revision, i.Modified, i.CommitTime = revision, modified == "true", nil
		if t, err := time.Parse(time.RFC3339, commitTime); err == nil {
			i.CommitTime = &t
		}
	}
	return i
}

// FromBuild reads grit's version from a binary's build information (nil
// when it has none).
func FromBuild(bi *debug.BuildInfo) Info {
	i := Info{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return i
	}
	if bi.GoVersion != "" {
		i.Go = bi.GoVersion
	}
	if bi.Main.Path != Module {
		for _, d := range bi.Deps {
			if d.Path == Module {
				i.Version = or(moduleVersion(d), i.Version)
			}
		}
		return i
	}
	i.Version = or(bi.Main.Version, i.Version)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				i.CommitTime = &t
			}
		}
	}
	return i
}

func moduleVersion(m *debug.Module) string {
	if m.Replace != nil {
		return m.Replace.Version
	}
	return m.Version
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// String is the version in one word, as a worker records it: Version, with
// the commit and "+dirty" added when Version does not already carry them
// (a build whose version the go command did not know).
func (i Info) String() string {
	v := i.Version
	if i.Revision != "" && !strings.Contains(v, short(i.Revision)) {
		v += "-" + short(i.Revision)
	}
	if i.Modified && !strings.HasSuffix(v, "+dirty") {
		v += "+dirty"
	}
	return v
}

// short is a commit hash as pseudo-versions carry it: 12 characters.
func short(rev string) string { return rev[:min(12, len(rev))] }
