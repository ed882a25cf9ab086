package resourcedir

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP is the request pipeline, in this order:
//
//  1. request id: every answer carries X-Request-Id;
//  2. recovery, journal and log, when the answer is done (finish);
//  3. routing: /ns/{name} picks the namespace, and the rest of the path is
//     matched as ASP.NET matches routes;
//  4. local access: a web page may not reach in (Host, Origin and Fetch
//     Metadata checks);
//  5. CORS: preflights answered, headers added;
//  6. authentication, when -auth is set; the journal of an existing
//     namespace starts recording an /api/v2 request before it, so that a
//     request refused for its credentials is recorded too;
//  7. a new namespace is created (after auth, so that strangers cannot fill
//     the server with namespaces; not for an anonymous health probe; not
//     for OPTIONS, which only CORS answers; and only for a path some route
//     answers, so that a mistyped URL leaves nothing behind), and its
//     journal starts recording an /api/v2 request;
//  8. injected faults;
//  9. the route's handler, whose value or error one adapter writes.
//
// The console's own requests (consoleHeader) skip the journal and the
// faults: a test's faults, counts and waits must not depend on whether a
// console is open.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := s.begin(w, r)
	defer s.finish(x, r)
	r, nsName, err := routedRequest(x, r)
	if err != nil {
		s.writeError(x, err)
		return
	}
	if !s.checkLocal(x, r) {
		return
	}
	if len(s.cfg.CORSOrigins) > 0 && s.cors(x, r, nsName) {
		return
	}
	if x.ns = s.lookupNamespace(nsName); x.ns != nil {
		s.startJournal(x, r) // requests refused for their credentials are journaled too
	}
	if s.cfg.Auth != "" && !s.authenticate(x, r) {
		return
	}
	// An anonymous health probe answers Status alone, which needs no
	// namespace: without credentials nothing is created.
	if x.ns == nil && !x.anonymous {
		if !s.routed(r) {
			s.writeError(x, errNoRoute(x.path))
			return
		}
		// No route answers OPTIONS but with a 405, and a preflight that
		// CORS did not answer comes from a page it does not admit: neither
		// may leave a namespace behind.
		if r.Method == http.MethodOptions {
			s.mux.ServeHTTP(x, r)
			return
		}
		if x.ns, err = s.namespace(nsName); err != nil {
			s.writeError(x, err)
			return
		}
		s.startJournal(x, r)
	}
	if x.ns != nil && !x.observer {
		x.ns.lastRequest.Store(time.Now().UnixNano())
	}
	if s.applyFault(x, r) {
		return
	}
	s.mux.ServeHTTP(x, r)
}

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

	code        int
	bytes       int
	wroteHeader bool

	journaled bool         // the request goes into its namespace's journal
	capture   capturedBody // the body as the journal keeps it
	faultID   int          // the fault that answered, 0 for none
	// servedStatus is what the handler answered when an After fault then
	// replaced the answer: the journal shows what was done.
	servedStatus int

	// observer: the console sent the request, so it is neither journaled
	// nor answered by a fault.
	observer bool
	// cut: the connection ended without a final answer (a fault that closes
	// it, or a panic after part of the answer was out).
	cut bool
	// recorded: the journal entry and the log line are written. A fault
	// writes them before its answer or close goes out, so that a client that
	// has seen what happened finds it in the journal.
	recorded bool
	// The answer as the journal shows it: the headers it was sent with and
	// the first maxJournalResponse bytes of its body. With an After fault
	// that sends no answer, the real answer that was lost.
	respHeader    http.Header
	respBody      []byte
	respTruncated bool
	// contentLength holds the first answer's Content-Length value
	// (respond.go's contentLength).
	contentLength [1]string
	// answer is the handler's answer when it is a madeAnswer, which the
	// journal makes again when read instead of keeping its bytes:
	// answerNext while writeValue writes it (answerLen bytes), answerMade
	// once it is the answer captured, whose respBody then stays empty.
	answer                 madeAnswer
	answerLen              int
	answerNext, answerMade bool

	// The length the answer declared (-1: none), and the server and request
	// to record, so that Write can record the entry before the last bytes
	// go out.
	declared int
	srv      *Server
	req      *http.Request // as the client sent it

	// anonymous: no credentials were sent, and the route answers without them.
	anonymous bool
	// refused: answered 401 for its credentials; the journal keeps only
	// its request line and status.
	refused bool
	// silenced: an After fault answers instead, so the handler's answer is
	// measured but not sent.
	silenced bool
	scratch  http.Header

	// held is what the request's body holds of -max-request-bytes.
	held int64
}

// exchangeOf returns the exchange that the pipeline passes to handlers as
// their ResponseWriter.
func exchangeOf(w http.ResponseWriter) *exchange { return w.(*exchange) }

func (x *exchange) Header() http.Header {
	if x.silenced {
		return x.scratch
	}
	return x.ResponseWriter.Header()
}

func (x *exchange) WriteHeader(code int) {
	if !x.wroteHeader {
		x.code, x.wroteHeader = code, true
		if x.journaled {
			// The map itself, not a copy: nothing writes to it once the
			// answer is out, and the entry is added when it is.
			x.respHeader, x.respBody, x.respTruncated = x.Header(), x.respBody[:0], false
			x.answerMade, x.answerNext = x.answerNext, false
			x.declared = -1
			if cl := x.Header()["Content-Length"]; len(cl) == 1 {
				if n, err := strconv.Atoi(cl[0]); err == nil {
					x.declared = n
				}
			}
		}
	}
	if !x.silenced {
		x.ResponseWriter.WriteHeader(code)
	}
}

func (x *exchange) Write(b []byte) (int, error) {
	if !x.wroteHeader {
		x.WriteHeader(http.StatusOK)
	}
	x.bytes += len(b)
	if x.journaled {
		x.keepResponse(b)
	}
	if x.silenced {
		return len(b), nil
	}
	// The write that completes a journaled answer goes out after its entry
	// is in: a client that has the whole answer must find it in the journal,
	// and net/http sends a body larger than its buffers before the handler
	// returns to the pipeline's own recording.
	if x.journaled && !x.recorded && x.bytes == x.declared {
		x.srv.record(x)
	}
	return x.ResponseWriter.Write(b)
}

// recordedStatus is the status the journal and the log show: what the
// handler answered when an After fault then replaced the answer, and 0 (or
// 499 when the client gave up) when a fault gave no HTTP answer at all.
func (x *exchange) recordedStatus() int {
	switch {
	case x.servedStatus != 0:
		return x.servedStatus
	case x.faultID != 0 && !x.wroteHeader:
		return x.code
	}
	return x.status()
}

// keepResponse keeps the start of the answer's body for the journal, in a
// buffer bounded by maxJournalResponse.
func (x *exchange) keepResponse(b []byte) {
	if x.answerMade {
		return
	}
	room := maxJournalResponse - len(x.respBody)
	if len(b) > room {
		b, x.respTruncated = b[:max(room, 0)], true
	}
	x.respBody = append(x.respBody, b...)
}

// deliveredStatus is the status of the answer the client received: 0 when
// the connection ended without a final answer.
func (x *exchange) deliveredStatus() int {
	switch {
	case x.cut, x.faultID != 0 && !x.wroteHeader, x.wroteHeader && x.code < 200:
		return 0
	}
	return x.status()
}

func (x *exchange) status() int {
	if x.code == 0 {
		return http.StatusOK
	}
	return x.code
}

// Unwrap lets http.ResponseController reach the connection.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// begin gives the request its id: the caller's when it is safe to echo.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) *exchange {
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		var buf [64]byte
		b := append(buf[:0], s.requestIDPrefix...)
		b = append(b, '-')
		id = string(strconv.AppendUint(b, s.requestSeq.Add(1), 10))
	}
	_, observer := r.Header[consoleHeader]
	x := &exchange{ResponseWriter: w, requestID: id, start: time.Now(), path: maskPath(r.URL.Path), observer: observer, srv: s, req: r}
	// The header's value lives in the exchange, which is made anyway; the
	// name is canonical already: Set would check it again.
	x.idHeader[0] = id
	w.Header()["X-Request-Id"] = x.idHeader[:]
	return x
}

// consoleHeader marks the console's own requests (any value; the console
// sends 1).
const consoleHeader = "X-Resourcedir-Console"

// routed reports whether some route answers r's path (with any method): a
// new namespace is created only for such a request.
func (s *Server) routed(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	return pattern != "/"
}

// finish turns a panic into a JSON 500 (or a cut connection when part of
// the answer is out), then records the journal entry and the log line.
func (s *Server) finish(x *exchange, r *http.Request) {
	defer x.release()
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			x.cut = true
			s.record(x)
			panic(p)
		}
		s.log.Error("panic serving request", "request_id", x.requestID, "method", r.Method, "path", x.path,
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		if x.wroteHeader && !x.silenced {
			// Part of a response is out: cut the connection so the client
			// sees a failure rather than a truncated 200.
			x.code, x.cut = http.StatusInternalServerError, true
			s.record(x)
			panic(http.ErrAbortHandler)
		}
		x.silenced = false
		x.code, x.wroteHeader = 0, false
		s.writeError(x, errInternal(x.requestID))
	}
	s.record(x)
}

// record writes the journal entry and the log line of an answered request,
// once.
func (s *Server) record(x *exchange) {
	if x.recorded {
		return
	}
	x.recorded = true
	r := x.req
	now := time.Now()
	if x.journaled {
		x.ns.journal.add(x, r, now)
	}
	if s.requestLog != nil && s.requestLog.write(x, r.Method, now) {
		return
	}
	if h := s.log.Handler(); h.Enabled(r.Context(), slog.LevelInfo) {
		h.Handle(r.Context(), requestRecord(x, r.Method, now)) //nolint:errcheck // nowhere to report a log failure
	}
}

// routedRequest returns the request the routes see (r itself, or a copy
// with its path as the routes spell it, inside the namespace it names) and
// that namespace's name ("" for the default), and notes both forms of the
// path in x. A path that no route may match is a 404: an unclean one
// (ServeMux would answer it with an HTML redirect), OPTIONS * (net/http's
// own plain answer otherwise), or a server-wide control under a namespace.
// GET /ns/{name} is redirected to /ns/{name}/, where its console is.
//
// The routes see the path with its secrets masked (maskPath): a path that
// holds one is no route's, and every message that repeats it (a 400 naming
// an id or a namespace, a 404, a 405) must not repeat the secret.
func routedRequest(x *exchange, r *http.Request) (*http.Request, string, error) {
	p := x.path
	if !strings.HasPrefix(p, "/") || p != cleanPath(p) {
		return nil, "", errNoRoute(p)
	}
	name, rest, prefixed := splitNamespace(p)
	if prefixed {
		// An encoded slash (sl%2Fash) is part of the name the client meant,
		// not a segment break: name it rather than answer 404 for "sl".
		if rawName, _, ok := splitNamespace(r.URL.RawPath); ok {
			if decoded, err := url.PathUnescape(rawName); err == nil {
				name = maskPath(decoded)
			}
		}
		if !validNamespaceName(name) {
			return nil, "", badRequest("The namespace name %q is not %s.", name, namespaceNameHelp)
		}
		if rest == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			to := p + "/"
			if r.URL.RawQuery != "" {
				to += "?" + r.URL.RawQuery
			}
			return nil, "", &apiError{Status: http.StatusPermanentRedirect, Message: fmt.Sprintf(
				"The console of the namespace %s is at %s/.", name, p), location: to}
		}
		if rest == "" || slices.ContainsFunc(serverWide, func(c string) bool { return rest == c || strings.HasPrefix(rest, c+"/") }) {
			return nil, "", errNoRoute(p)
		}
	}
	canonical := canonicalAPIPath(rest)
	x.apiPath, x.route = rest, canonical
	if canonical == r.URL.Path && r.Body == http.NoBody {
		return r, name, nil
	}
	// A shallow copy: the journal and faults replace its Body, and after
	// the handler net/http looks at the original's Body to decide whether
	// to read the unread rest, which would wait for a body held back for a
	// 100 Continue. Without a body, nothing is replaced.
	r2 := new(http.Request)
	*r2 = *r
	if canonical != r.URL.Path {
		u := *r.URL
		u.Path, u.RawPath = canonical, ""
		r2.URL = &u
	}
	return r2, name, nil
}

// apiSegments are the fixed segments of the API's routes.
var apiSegments = [3]string{"api", "v2", "resource"}

// canonicalAPIPath spells an /api/v2 path as the routes do: ASP.NET matches
// the fixed segments in any case and tolerates one trailing slash. Other
// paths, and the id segment, stay exactly as sent. A path spelled as the
// routes spell it comes back as it is, without an allocation.
func canonicalAPIPath(p string) string {
	const collection = "/api/v2/resource"
	trimmed := p
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		trimmed = p[:len(p)-1]
	}
	rest := trimmed[1:]
	for i, want := range apiSegments {
		seg, after, more := strings.Cut(rest, "/")
		if !strings.EqualFold(seg, want) || (!more && i < len(apiSegments)-1) {
			return p
		}
		if !more {
			return collection
		}
		rest = after
	}
	// rest is what follows /api/v2/resource/: one id segment, or no route.
	if rest == "" || strings.Contains(rest, "/") {
		return p
	}
	if trimmed == p && strings.HasPrefix(p, collection+"/") {
		return p
	}
	return collection + "/" + rest
}

// cleanPath is the path ServeMux would redirect p to.
func cleanPath(p string) string {
	cleaned := path.Clean(p)
	if strings.HasSuffix(p, "/") && cleaned != "/" {
		cleaned += "/"
	}
	return cleaned
}

// isAPIPath reports whether p is on the emulated API, which the journal
// records and faults may target.
func isAPIPath(p string) bool { return strings.HasPrefix(p, "/api/v2/") || p == "/api/v2" }

// validRequestID accepts a caller's request id only when it is short and
// printable, so that it is safe to echo and log.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}
