package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A suite that failed under resourcedir -- left nothing but its own
// output; the server's record of what the client sent went with it. Now
// the last 10 requests of each namespace that received any are written to
// stderr, whatever the log level; a namespace with none is left out.
func TestMainCommandFailureShowsLastRequests(t *testing.T) {
	t.Parallel()
	const script = `
json='Content-Type: application/json'
base=$(curl -fsS -X POST -H "$json" -d '{"Prefix":"t-"}' "$RESOURCEDIR_URL/__admin/namespaces" | sed 's/.*"BaseURL":"\([^"]*\)".*/\1/')
curl -fsS -o /dev/null -X POST -H "$json" -d '{"Prefix":"idle-"}' "$RESOURCEDIR_URL/__admin/namespaces"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do curl -s -o /dev/null "$RESOURCEDIR_URL/api/v2/resource?requestParams.page=$i"; done
curl -fsS -o /dev/null -X POST -H "$json" -d '{"Path":"/api/v2/resource","Kind":"reset","Times":1}' "$base/__admin/faults"
curl -s -o /dev/null "$base/api/v2/resource"
curl -s -o /dev/null -X POST -H "$json" -d '{}' "$base/api/v2/resource"
exit 3`
	got := runBinary(t, t.TempDir(), nil, "", "--", "sh", "-c", script)
	var want strings.Builder
	fmt.Fprintf(&want, "resourcedir: sh exited with status 3; the last requests (at most 10) of each namespace that received any:\n"+
		"namespace default, console %s/:\n", got.served)
	for i := 3; i <= 12; i++ {
		fmt.Fprintf(&want, "  GET /api/v2/resource?requestParams.page=%d 200 (client got 200)\n", i)
	}
	ns := regexp.MustCompile(`namespace (t-[0-9a-f-]+), console`).FindStringSubmatch(got.stderr)
	if ns == nil {
		t.Fatalf("exit %d, no namespace t- in stderr:\n%s", got.code, got.stderr)
	}
	fmt.Fprintf(&want, "namespace %s, console %s/ns/%s/:\n"+
		"  GET /api/v2/resource - (client got no answer)\n"+
		"  POST /api/v2/resource 400 (client got 400)\n", ns[1], got.served, ns[1])
	if got.code != 3 || got.stdout != "" || got.stderr != want.String() {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3 and:\n%s", got.code, got.stdout, got.stderr, want.String())
	}
	// A success says nothing; a failure with no requests says so.
	if got := runBinary(t, t.TempDir(), nil, "", "--", "sh", "-c", `curl -fsS -o /dev/null "$RESOURCEDIR_URL/api/v2/resource"`); got.code != 0 || got.stderr != "" {
		t.Errorf("success: exit %d, stderr %q", got.code, got.stderr)
	}
	if got := runBinary(t, t.TempDir(), nil, "", "--", "false"); got.code != 1 || got.stderr != "resourcedir: false exited with status 1; no namespace received requests\n" {
		t.Errorf("a failure without requests: exit %d, stderr %q", got.code, got.stderr)
	}
}

// At most 20 namespaces are shown, then how many more received requests;
// -auth does not keep the server's own reading out.
func TestMainCommandFailureShowsAtMost20Namespaces(t *testing.T) {
	t.Parallel()
	const script = `
for i in $(seq 1 23); do curl -fsS -o /dev/null -u u:t "$RESOURCEDIR_URL/ns/n$(printf %02d $i)/api/v2/resource"; done
exit 1`
	got := runBinary(t, t.TempDir(), nil, "", "-auth", "u:t", "--", "sh", "-c", script)
	if got.code != 1 || strings.Count(got.stderr, "\nnamespace n") != 20 || !strings.Contains(got.stderr, "namespace n20, console") ||
		strings.Contains(got.stderr, "namespace n21") ||
		!strings.HasSuffix(got.stderr, fmt.Sprintf("  GET /api/v2/resource 200 (client got 200)\n... and 3 more namespaces (GET %s/__admin/namespaces lists them)\n", got.served)) {
		t.Errorf("exit %d, stderr:\n%s", got.code, got.stderr)
	}
}

// -linger keeps the server and its console up after the command, whatever
// its status, until interrupted; then resourcedir exits with the command's
// status.
func TestMainCommandLinger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		signal syscall.Signal
	}{
		{"failed", nil, []string{"-linger", "--", "sh", "-c", "exit 4"}, 4, syscall.SIGINT},
		{"passed, from the environment", []string{"RESOURCEDIR_LINGER=true"}, []string{"--", "true"}, 0, syscall.SIGTERM},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(builtBinary(t), tt.args...)
			cmd.Dir, cmd.Env = t.TempDir(), append(binaryEnv(), tt.env...)
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }() //nolint:errcheck // ProcessState says how it ended
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			lingering := regexp.MustCompile(`(?m)^resourcedir: \S+ exited with status ` + fmt.Sprint(tt.code) +
				`; lingering: serving (http://127\.0\.0\.1:[0-9]+), console (http://127\.0\.0\.1:[0-9]+)/, until interrupted \(Ctrl-C, or kill -TERM ` + fmt.Sprint(cmd.Process.Pid) + `\)$`)
			eventually(t, 30*time.Second, "the lingering line", func() bool { return lingering.MatchString(stderr.String()) })
			m := lingering.FindStringSubmatch(stderr.String())
			// The command has exited; the server still answers.
			clientAt(t, m[1]).expect(http.StatusOK, http.MethodGet, "/__admin/health", "")
			if err := cmd.Process.Signal(tt.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("resourcedir did not exit within 30s of %v; stderr: %s", tt.signal, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
		})
	}
}
