package resourcedir

import (
	"bufio"
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"
)

// One life of a request: the exchange is the ResponseWriter every step and
// handler writes through, and its recorder writes the journal entry and
// the log line exactly once, before the client can see the answer or lose
// the connection. Three moments can be the last before the client knows:
// the write that completes a declared answer (Write), the hijack that ends
// the connection without one (hijack), and the pipeline's end (finish).
// Nothing else records.

// exchange is one request on its way through the pipeline: the
// ResponseWriter that every step and handler writes through, and what the
// journal and the log need once it is answered.
type exchange struct {
	http.ResponseWriter
	requestID string
	idHeader  [1]string // X-Request-Id's value
	start     time.Time
	path      string     // as the client sent it, its secrets masked (maskPath)
	apiPath   string     // path without its /ns/{name} prefix, as the namespace's journal shows it
	route     string     // apiPath as the routes spell it (canonicalAPIPath)
	ns        *namespace // nil until authentication has passed
	using     *namespace // the namespace this request counts in (activity, in flight), until finish
	client    bool       // not the console's, and past authentication: it counts as a client's request

	// The answer being written: its status once its header is (0 before),
	// and its body's length so far.
	code        int
	wroteHeader bool
	bytes       int

	// What the server did and what the client got, as the journal and the
	// log show them, settled when the request is recorded. did is the
	// status of the answer the server made: the handler's when an After
	// fault then answered instead (set then), 499 when the client left
	// before any answer (set then), 0 when a fault gave no HTTP answer. got
	// is the status of the final answer the client received, 0 for none.
	did, got int
	// recorded: the journal entry and the log line are written.
	recorded bool

	journaled bool         // the request goes into its namespace's journal
	capture   capturedBody // the body as the journal keeps it
	faultID   int          // the fault that answered, 0 for none

	// observer: the console sent the request, so it is neither journaled
	// nor answered by a fault.
	observer bool

	kept keptAnswer // the answer as the journal shows it
	// contentLength holds the first answer's Content-Length value
	// (respond.go's contentLength).
	contentLength [1]string
	// answer is the handler's answer when it is a madeAnswer, which the
	// journal makes again when read instead of keeping its bytes
	// (keptAnswer.made).
	answer madeAnswer

	// The server and the request to record, so that Write and hijack can
	// record the entry before the client sees the answer or the close.
	srv *Server
	req *http.Request // as the client sent it

	// anonymous: no credentials were sent, and the route answers without them.
	anonymous bool
	// refused: answered 401 for its credentials; the journal keeps only
	// its request line and status.
	refused bool
	// silenced holds the handler's headers while an After fault is to
	// answer instead (nil otherwise): its answer is measured and kept for
	// the journal, but not sent.
	silenced http.Header

	// held is what the request's body holds of -max-request-bytes.
	held int64
}

// keptAnswer is the answer as the journal shows it: the headers it was sent
// with and the first maxJournalResponse bytes of its body. With an After
// fault that sends no answer, the real answer that was lost.
type keptAnswer struct {
	header    http.Header
	body      []byte
	truncated bool
	// next while writeValue writes the exchange's madeAnswer (madeLen
	// bytes); made once it is the answer kept, whose body then stays empty.
	next, made bool
	madeLen    int
	// declared is the length the answer declared (-1: none), so that Write
	// can record the entry before the last bytes go out.
	declared int
}

func (x *exchange) Header() http.Header {
	if x.silenced != nil {
		return x.silenced
	}
	return x.ResponseWriter.Header()
}

func (x *exchange) WriteHeader(code int) {
	if !x.wroteHeader {
		x.code, x.wroteHeader = code, true
		if x.journaled {
			// The map itself, not a copy: nothing writes to it once the
			// answer is out, and the entry is added when it is.
			x.kept.header, x.kept.body, x.kept.truncated = x.Header(), x.kept.body[:0], false
			x.kept.made, x.kept.next = x.kept.next, false
			x.kept.declared = -1
			if cl := x.Header()["Content-Length"]; len(cl) == 1 {
				if n, err := strconv.Atoi(cl[0]); err == nil {
					x.kept.declared = n
				}
			}
		}
	}
	if x.silenced == nil {
		x.ResponseWriter.WriteHeader(code)
	}
}

func (x *exchange) Write(b []byte) (int, error) {
	if !x.wroteHeader {
		x.WriteHeader(http.StatusOK)
	}
	x.bytes += len(b)
	if x.journaled && !x.kept.made {
		// The start of the body, within maxJournalResponse.
		keep := min(len(b), max(maxJournalResponse-len(x.kept.body), 0))
		x.kept.body = append(x.kept.body, b[:keep]...)
		x.kept.truncated = x.kept.truncated || keep < len(b)
	}
	if x.silenced != nil {
		return len(b), nil
	}
	// The write that completes a journaled answer goes out after its entry
	// is in: a client that has the whole answer must find it in the journal,
	// and net/http sends a body larger than its buffers before the handler
	// returns to the pipeline's own recording.
	if x.journaled && !x.recorded && x.bytes == x.kept.declared {
		x.record(true)
	}
	return x.ResponseWriter.Write(b)
}

// silence makes the handler's answer measured and kept for the journal,
// but not sent: an After fault answers instead.
func (x *exchange) silence() { x.silenced = http.Header{} }

// unsilence ends the handler's silenced answer: it is what the server did
// (net/http's 200 when the handler wrote nothing), and the fault's answer
// starts anew.
func (x *exchange) unsilence() {
	x.did = cmp.Or(x.code, http.StatusOK)
	x.silenced, x.code, x.wroteHeader, x.bytes = nil, 0, false, 0
}

// Unwrap lets http.ResponseController reach the connection.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// finish turns a panic into a JSON 500, or into a cut connection when
// part of the answer is out, then records the request.
func (s *Server) finish(x *exchange, r *http.Request) {
	defer x.release()
	if ns := x.using; ns != nil {
		defer ns.leave(x)
	}
	cut := false
	if p := recover(); p != nil {
		cut = s.recovered(x, r, p)
	}
	x.record(!cut)
	if cut {
		panic(http.ErrAbortHandler)
	}
}

// recovered answers a panic with a JSON 500 when no answer is out, or
// reports that the connection must be cut: the handler aborted it, or the
// client has part of an answer and must see a failure rather than a
// truncated 200.
func (s *Server) recovered(x *exchange, r *http.Request, p any) (cut bool) {
	if p == http.ErrAbortHandler {
		return true
	}
	s.log.Error("panic serving request", "request_id", x.requestID, "method", r.Method, "path", x.path,
		"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if x.wroteHeader && x.silenced == nil {
		x.code = http.StatusInternalServerError
		return true
	}
	x.silenced = nil
	x.code, x.wroteHeader = 0, false
	s.writeError(x, errInternal(x.requestID))
	return false
}

// hijack takes the connection from net/http, to end it without an HTTP
// answer, with the request recorded first: a client that sees the
// connection end finds the entry.
func (x *exchange) hijack() (net.Conn, *bufio.ReadWriter) {
	conn, buf, err := http.NewResponseController(x).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server cuts the connection itself
	}
	// Hijack clears the deadlines: the journal takes what has arrived of a
	// body readSentBody left unread, without waiting for the rest.
	conn.SetReadDeadline(time.Now()) //nolint:errcheck // closing anyway
	x.record(false)
	return conn, buf
}

// record writes the journal entry and the log line, once; answered is
// false when the connection ends without the answer written so far.
func (x *exchange) record(answered bool) {
	if x.recorded {
		return
	}
	x.recorded = true
	x.settle(answered)
	r := x.req
	now := time.Now()
	if x.journaled {
		x.ns.journal.add(x, r, now)
	}
	// The line goes to the handler straight, with no caller's program
	// counter: through Logger.LogAttrs it cost twice as much.
	if h := x.srv.log.Handler(); h.Enabled(r.Context(), slog.LevelInfo) {
		rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
		rec.AddAttrs(slog.String("method", r.Method), slog.String("path", x.path), slog.Int("status", x.did),
			slog.Int("bytes", x.bytes), slog.Duration("duration", now.Sub(x.start)), slog.String("request_id", x.requestID))
		h.Handle(r.Context(), rec) //nolint:errcheck // nowhere to report a log failure
	}
}

// settle sets what the server did and what the client got from the answer
// written so far, unless an earlier moment set them. An answer without a
// header is net/http's 200 for a handler that wrote nothing, and none at
// all from a fault; an informational status is no final answer.
func (x *exchange) settle(answered bool) {
	status := x.code
	if !x.wroteHeader && x.faultID == 0 {
		status = http.StatusOK
	}
	if x.did == 0 {
		x.did = status
	}
	if answered && status >= http.StatusOK {
		x.got = status
	}
}
