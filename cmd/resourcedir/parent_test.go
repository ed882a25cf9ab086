package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExitWithParent: a launcher killed with SIGKILL (a CI job's timeout,
// the OOM killer) cannot stop the server it started; with
// -exit-with-parent the server sees its parent change and stops as at
// SIGTERM, writing its snapshot. Without the flag it outlives the launcher,
// as a server shared by several CI steps must.
func TestExitWithParent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary under a shell")
	}
	t.Parallel()
	bin := builtBinary(t)
	for _, tc := range []struct {
		flag  bool
		stops bool
	}{{true, true}, {false, false}} {
		t.Run(fmt.Sprintf("flag=%v", tc.flag), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			snap, addrFile := filepath.Join(dir, "rd.gob"), filepath.Join(dir, "addr")
			args := fmt.Sprintf("%q -addr 127.0.0.1:0 -addr-file %q -snapshot %q", bin, addrFile, snap)
			if tc.flag {
				args += " -exit-with-parent"
			}
			// The launcher: a shell that starts the server and waits.
			launcher := exec.Command("sh", "-c", args+" & echo $! > pid; wait")
			launcher.Dir, launcher.Env = dir, binaryEnv()
			if err := launcher.Start(); err != nil {
				t.Fatal(err)
			}
			url := waitAddrFile(t, addrFile, 10*time.Second, nil, func() string { return "" })
			// A change, for the stop to write.
			clientAt(t, url).createPerson("Kept")
			b, err := os.ReadFile(filepath.Join(dir, "pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			killed := time.Now()
			launcher.Process.Kill()
			launcher.Wait()
			gone := func() bool { return !processAlive(pid) }
			if !tc.stops {
				// Twice the watch's poll and more: had it been watching, it would have gone.
				deadline := time.Now().Add(4 * parentPoll)
				for time.Now().Before(deadline) {
					if gone() {
						t.Fatal("the server stopped with its launcher without -exit-with-parent")
					}
					time.Sleep(50 * time.Millisecond)
				}
				return
			}
			eventually(t, 10*time.Second, "the server stops after its launcher's SIGKILL", gone)
			t.Logf("stopped %v after the launcher's SIGKILL", time.Since(killed).Round(10*time.Millisecond))
			if n, err := snapshotResources(t, snap); err != nil || n != 1 {
				t.Errorf("the snapshot written at the stop holds %d resources (%v), want the 1 created", n, err)
			}
			if _, err := os.Stat(addrFile); !os.IsNotExist(err) {
				t.Errorf("the -addr-file is still there after the stop: %v", err)
			}
		})
	}
}

// processAlive reports whether pid runs: a zombie (exited, not yet reaped
// by its new parent) counts as gone.
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: macOS
	}
	// The state follows the command's name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
