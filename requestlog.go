package resourcedir

import (
	"log/slog"
	"strconv"
	"time"
)

// requestLog writes the one line per request that the binary logs, in the
// text or JSON form of slog's handlers, straight into the batching log
// writer. Through slog.Logger the line cost a request some 2 µs (the
// caller's program counter, boxed attributes, a Record, the handler's lock
// and buffer), a fifth of an indexed list's time in the server. Lines whose
// strings slog would quote or escape go through the logger instead, so that
// slog stays the one authority on escaping.
type requestLog struct {
	json bool
	out  *logWriter
}

// newRequestLog returns nil when the level hides request lines: the
// logger then drops them as it drops any other.
func newRequestLog(format string, level slog.Level, out *logWriter) *requestLog {
	if level > slog.LevelInfo {
		return nil
	}
	return &requestLog{json: format == "json", out: out}
}

// plainLogString reports whether s appears in a log line as it is, in both
// formats: printable ASCII that neither needs quoting in text (space, '=',
// '"') nor escaping in JSON ('"', '\\'). Methods, request ids and nearly
// every path are.
func plainLogString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' || c == '=' {
			return false
		}
	}
	return true
}

// requestRecord is the request line as a slog record: what the logger
// writes when there is no requestLog, or when a string is not plain.
func requestRecord(x *exchange, method string, now time.Time) slog.Record {
	rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", method), slog.String("path", x.path), slog.Int("status", x.did),
		slog.Int("bytes", x.bytes), slog.Duration("duration", now.Sub(x.start)), slog.String("request_id", x.requestID))
	return rec
}

// write logs the request line for x at now, or reports false when one of
// its strings is not plain and the logger must write it.
func (l *requestLog) write(x *exchange, method string, now time.Time) bool {
	var buf [512]byte
	line, ok := l.appendLine(buf[:0], method, x, now)
	if ok {
		l.out.Write(line) //nolint:errcheck // never fails; a dropped line is counted
	}
	return ok
}

// appendLine appends the line that slog's handler would write for
// the request; ok is false when a string is not plain.
func (l *requestLog) appendLine(b []byte, method string, x *exchange, now time.Time) (line []byte, ok bool) {
	if !plainLogString(method) || !plainLogString(x.path) || !plainLogString(x.requestID) {
		return b, false
	}
	status, duration := x.did, now.Sub(x.start)
	if l.json {
		b = append(b, `{"time":"`...)
		b = now.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request","method":"`...)
		b = append(b, method...)
		b = append(b, `","path":"`...)
		b = append(b, x.path...)
		b = append(b, `","status":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, int64(x.bytes), 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(duration), 10)
		b = append(b, `,"request_id":"`...)
		b = append(b, x.requestID...)
		b = append(b, "\"}\n"...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, now)
		b = append(b, " level=INFO msg=request method="...)
		b = append(b, method...)
		b = append(b, " path="...)
		b = append(b, x.path...)
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, " bytes="...)
		b = strconv.AppendInt(b, int64(x.bytes), 10)
		b = append(b, " duration="...)
		b = append(b, duration.String()...)
		b = append(b, " request_id="...)
		b = append(b, x.requestID...)
		b = append(b, '\n')
	}
	return b, true
}

// appendRFC3339Millis formats t as slog's text handler does: RFC 3339 with
// exactly three digits of fraction.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	// RFC3339Nano trims trailing zeros; a tenth of a millisecond added to
	// the truncated time guarantees four digits, and the fourth is cut.
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// newLogger is the binary's logger: slog's text or JSON handler.
func newLogger(format string, level slog.Level, out *logWriter) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}
