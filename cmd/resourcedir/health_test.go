package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The built binary against a running server: exit 0, with the URL probed;
// and as under resourcedir -- COMMAND, where RESOURCEDIR_URL names it.
func TestHealthBinaryServing(t *testing.T) {
	bin := builtBinary(t)
	p := startBinary(t, bin, t.TempDir(), "-snapshot", "off", "-auth", "svc:secret")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"URL argument", nil, []string{"health", p.url}},
		{"RESOURCEDIR_URL", []string{urlVar + "=" + p.url}, []string{"health"}},
		{"RESOURCEDIR_ADDR's port", []string{"RESOURCEDIR_ADDR=:" + strings.TrimPrefix(p.url, "http://127.0.0.1:")}, []string{"health"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinary(t, t.TempDir(), tc.env, "", tc.args...)
			// -auth does not hide health: a probe has no credentials.
			if r.code != 0 || r.stdout != "ok "+p.url+"/__admin/health\n" || r.stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and one ok line", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// The built binary against a port nothing listens on: exit 1 with one
// line that says so.
func TestHealthBinaryNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	r := runBinary(t, t.TempDir(), nil, "", "health", "-timeout", "5s", url)
	want := regexp.MustCompile(`^resourcedir: health: Get "` + regexp.QuoteMeta(url) + `/__admin/health": dial tcp [0-9.:]+: connect: connection refused\n$`)
	if r.code != 1 || r.stdout != "" || !want.MatchString(r.stderr) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line matching %s", r.code, r.stdout, r.stderr, want)
	}
}

// Answers that are not a healthy resourcedir's, and a server that never
// answers, each give status 1 and a one-line reason.
func TestHealthUnhealthy(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/__admin/health" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			w.Write([]byte(body)) //nolint:errcheck // the probe reports what it got
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	// Accepts and never answers: only the timeout ends the probe.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	for _, tc := range []struct {
		name, base, want string
	}{
		{"503", answer(503, "{\"Message\": \"busy\"}\n"), " answered 503 Service Unavailable: {\"Message\": \"busy\"}"},
		{"not ok", answer(200, `{"Status":"starting"}`), ` answered 200 OK: {"Status":"starting"}`},
		{"not JSON", answer(200, "<html>\n<body>hello</body>\n</html>"), " answered 200 OK: <html> <body>hello</body> </html>"},
		{"empty", answer(200, ""), " answered 200 OK: (empty body)"},
		{"silent", "http://" + silent.Addr().String(), ": no answer within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"health", "-timeout", "200ms", tc.base}, nil, &stdout, &stderr)
			want := "health: " + tc.base + "/__admin/health" + tc.want
			if err == nil || exitCode(err) != 1 || err.Error() != want || stdout.Len() != 0 {
				t.Errorf("got %v (status %d), stdout %q; want status 1 and %q", err, exitCode(err), stdout.String(), want)
			}
		})
	}
}

func TestHealthBase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg  string
		env  map[string]string
		want string
	}{
		{"", nil, "http://127.0.0.1:8080"},
		{"http://h:1/", map[string]string{urlVar: "http://u:2"}, "http://h:1/"},
		{"localhost:9000", nil, "http://localhost:9000"},
		{"", map[string]string{urlVar: "http://u:2", "RESOURCEDIR_ADDR": ":3"}, "http://u:2"},
		{"", map[string]string{"RESOURCEDIR_ADDR": "0.0.0.0:9090"}, "http://127.0.0.1:9090"},
		{"", map[string]string{"RESOURCEDIR_ADDR": ":9090"}, "http://127.0.0.1:9090"},
		{"", map[string]string{"RESOURCEDIR_ADDR": "[::]:9090"}, "http://127.0.0.1:9090"},
		{"", map[string]string{"RESOURCEDIR_ADDR": "[::1]:9090"}, "http://[::1]:9090"},
		{"", map[string]string{"RESOURCEDIR_ADDR": "localhost:9090"}, "http://localhost:9090"},
		{"", map[string]string{"RESOURCEDIR_ADDR": "127.0.0.1:0"}, "http://127.0.0.1:8080"},
	} {
		if got := healthBase(tc.arg, tc.env); got != tc.want {
			t.Errorf("healthBase(%q, %v) = %q, want %q", tc.arg, tc.env, got, tc.want)
		}
	}
}

// A release build's stamp (-ldflags -X, .goreleaser.yaml) wins over what
// the build recorded; goreleaser's snapshot in .ci/ship checks the flags.
func TestVersionTextStamped(t *testing.T) {
	defer func(v, c, d string) { buildVersion, buildCommit, buildDate = v, c, d }(buildVersion, buildCommit, buildDate)
	buildVersion, buildCommit, buildDate = "1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-11-26T18:00:00Z"
	want := "resourcedir 1.2.3\nrevision 0123456789abcdef0123456789abcdef01234567 (2026-11-26T18:00:00Z)\n" +
		runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := versionText(); got != want {
		t.Errorf("versionText() = %q, want %q", got, want)
	}
}
