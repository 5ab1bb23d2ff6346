package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses: the fields count
	// from the last ')'.
	line := "4242 (post gres) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 100 0 0\n"
	st, ok := parseStat(line)
	if !ok || st.comm != "post gres) x" || st.ppid != 17 || st.cpu != 3250*time.Millisecond {
		t.Errorf("parseStat = %+v, %v; want comm \"post gres) x\", ppid 17, cpu 3.25s", st, ok)
	}
	for _, bad := range []string{"", "4242 no parens", "4242 (x) S 17", "4242 (x) S p 1 2 3 4 5 6 7 8 9 10 11 12"} {
		if st, ok := parseStat(bad); ok {
			t.Errorf("parseStat(%q) = %+v, want not ok", bad, st)
		}
	}
}

func TestReadStatOfThisProcess(t *testing.T) {
	st, ok := readStat(os.Getpid())
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		if ok {
			t.Errorf("readStat without /proc = %+v, want not ok", st)
		}
		return
	}
	if !ok || st.ppid != os.Getppid() || st.comm == "" {
		t.Errorf("readStat(self) = %+v, %v; want parent %d", st, ok, os.Getppid())
	}
}

func TestPerJob(t *testing.T) {
	// Backend 10 ran 3s more; 11 ended (its 5s are gone, not negative);
	// 12 started and ran 1s; pid 13 was taken by a new process.
	from := cpuUse{self: time.Second, server: map[int]time.Duration{10: 2 * time.Second, 11: 5 * time.Second, 13: 9 * time.Second}, serverOK: true}
	to := cpuUse{self: 3 * time.Second, server: map[int]time.Duration{10: 5 * time.Second, 12: time.Second, 13: 0}, serverOK: true}
	self, server := perJob(from, to, 1000)
	if self != 2000 || server == nil || *server != 4000 {
		t.Errorf("perJob = %v, %v; want 2000 and 4000 µs", self, server)
	}
	if _, server := perJob(cpuUse{}, to, 1000); server != nil {
		t.Errorf("perJob with an unread server = %v, want nil", *server)
	}
}
