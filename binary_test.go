package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests that run resourcedir as a user does, from a shell, share one
// build per test run.

var builtBin struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// builtBinary returns the path of resourcedir built from this folder, built
// on the first call of the test run.
func builtBinary(t testing.TB) string {
	t.Helper()
	builtBin.once.Do(func() {
		goTool, err := exec.LookPath("go") // go test puts $GOROOT/bin first in PATH
		if err != nil {
			builtBin.err = err
			return
		}
		if builtBin.dir, builtBin.err = os.MkdirTemp("", "resourcedir-test-"); builtBin.err != nil {
			return
		}
		path := filepath.Join(builtBin.dir, "resourcedir")
		if out, err := exec.Command(goTool, "build", "-o", path, ".").CombinedOutput(); err != nil {
			builtBin.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		builtBin.path = path
	})
	if builtBin.err != nil {
		t.Fatal(builtBin.err)
	}
	return builtBin.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin.dir != "" {
		os.RemoveAll(builtBin.dir)
	}
	os.Exit(code)
}

// binaryRun is how one run of the binary ended.
type binaryRun struct {
	code           int
	stdout, stderr string
}

// runBinary runs the built resourcedir to its end in dir with args, the
// environment without RESOURCEDIR_ variables plus env, and stdin. A run
// that should end must not hang: the deadline kills it and fails the test.
func runBinary(t *testing.T, dir string, env []string, stdin string, args ...string) binaryRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(readmeEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("resourcedir %q did not exit within 60s; stderr: %s", args, stderr.String())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("resourcedir %q: %v", args, err)
	}
	return binaryRun{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}
