package resourcedir

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// slogLine is the line slog's handler of format writes for the request.
func slogLine(t testing.TB, format string, x *exchange, method string, now time.Time) string {
	var out bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&out, nil)
	if format == "json" {
		h = slog.NewJSONHandler(&out, nil)
	}
	if err := h.Handle(context.Background(), requestRecord(x, method, now)); err != nil {
		t.Fatalf("slog %s: %v", format, err)
	}
	return out.String()
}

// checkRequestLine asserts that the request line is slog's, byte for byte,
// in both formats, or that it is left to slog (plain=false).
func checkRequestLine(t testing.TB, x *exchange, method string, now time.Time, plain bool) {
	t.Helper()
	for _, format := range []string{"text", "json"} {
		l := newRequestLog(format, slog.LevelInfo, nil)
		got, ok := l.appendLine(nil, method, x, now)
		if ok != plain {
			t.Fatalf("%s: method %q path %q id %q: written=%v, want %v", format, method, x.path, x.requestID, ok, plain)
		}
		if !ok {
			continue
		}
		if want := slogLine(t, format, x, method, now); string(got) != want {
			t.Errorf("%s line:\n got %s\nwant %s", format, got, want)
		}
	}
}

// TestRequestLineIsSlogs: the hand-written request line is the one slog
// writes, and strings slog would quote or escape are left to slog.
func TestRequestLineIsSlogs(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 21, 34, 2, 123_456_789, time.UTC)
	tests := []struct {
		name             string
		method, path, id string
		code, bytes      int
		faultID          int
		took             time.Duration
		plain            bool
	}{
		{"list", "GET", "/api/v2/resource", "rd-1", 200, 528, 0, 16_851 * time.Nanosecond, true},
		{"created", "POST", "/ns/team-a/api/v2/resource", "caller-id_42", 200, 566, 0, 3 * time.Millisecond, true},
		{"no answer fault", "GET", "/api/v2/resource", "rd-2", 0, 0, 7, 2 * time.Second, true},
		{"status unset", "PUT", "/api/v2/resource/x", "rd-3", 0, 0, 0, 0, true},
		{"whole millisecond", "GET", "/", "rd-4", 404, 90, 0, 876_544_211 * time.Nanosecond, true},
		{"long run", "GET", "/__admin/requests", "rd-5", 200, 1 << 30, 0, 90 * time.Minute, true},
		{"space in path", "GET", "/api/v2/resource/a b", "rd-6", 404, 0, 0, time.Millisecond, false},
		{"equals in path", "GET", "/a=b", "rd-7", 404, 0, 0, time.Millisecond, false},
		{"quote in path", "GET", `/a"b`, "rd-8", 404, 0, 0, time.Millisecond, false},
		{"backslash in path", "GET", `/a\b`, "rd-9", 404, 0, 0, time.Millisecond, false},
		{"non-ASCII path", "GET", "/api/v2/resource/é", "rd-10", 404, 0, 0, time.Millisecond, false},
		{"control byte in path", "GET", "/a\bb", "rd-11", 404, 0, 0, time.Millisecond, false},
		{"empty path", "GET", "", "rd-12", 404, 0, 0, time.Millisecond, false},
	}
	for _, tt := range tests {
		for _, zone := range []*time.Location{time.UTC, time.FixedZone("CET", 3600)} {
			x := &exchange{path: tt.path, requestID: tt.id, start: start.In(zone), code: tt.code,
				wroteHeader: tt.code != 0, bytes: tt.bytes, faultID: tt.faultID}
			x.settle(true)
			t.Run(tt.name+"/"+zone.String(), func(t *testing.T) {
				checkRequestLine(t, x, tt.method, x.start.Add(tt.took), tt.plain)
			})
		}
	}
}

// TestRequestLogLevel: a level above info hides request lines, so there
// is no requestLog and the logger drops them.
func TestRequestLogLevel(t *testing.T) {
	t.Parallel()
	for level, want := range map[slog.Level]bool{slog.LevelDebug: true, slog.LevelInfo: true, slog.LevelWarn: false, slog.LevelError: false} {
		if got := newRequestLog("text", level, nil) != nil; got != want {
			t.Errorf("level %v: requestLog=%v, want %v", level, got, want)
		}
	}
}

func FuzzRequestLine(f *testing.F) {
	f.Add("GET", "/api/v2/resource", "rd-1", 200, 528, int64(16_851), int64(1_795_000_000_123_456_789))
	f.Add("POST", "/a b", "x", 0, 0, int64(0), int64(0))
	f.Add("DELETE", "/ns/é/x", "id=1", 404, 7, int64(time.Hour), int64(-1))
	f.Fuzz(func(t *testing.T, method, path, id string, code, n int, took, unixNano int64) {
		start := time.Unix(0, unixNano).UTC()
		if start.Year() < 1 || start.Year() > 9999 {
			return // slog's JSON handler refuses such times; a clock never gives them
		}
		x := &exchange{path: path, requestID: id, start: start, code: code, wroteHeader: code != 0, bytes: n}
		x.settle(true)
		plain := plainLogString(method) && plainLogString(path) && plainLogString(id)
		checkRequestLine(t, x, method, start.Add(time.Duration(took)), plain)
	})
}
