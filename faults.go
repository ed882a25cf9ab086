package resourcedir

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Faults (the README's "Faults") break a client the way production does.
const (
	// maxFaultDelay: long enough for any client timeout worth testing,
	// short enough that a forgotten fault does not hold connections for ever.
	maxFaultDelay = 2 * time.Minute
	// maxFaults bounds how many faults exist at once: those that can still
	// fire, and the spent ones kept listed in the room they leave.
	maxFaults = 1000
	// statusClientClosed is what the journal and the log show for a request
	// whose client hung up before it was answered (nginx's convention).
	statusClientClosed = 499
)

// The kinds of fault; faultKindTable says what each does.
const (
	kindResponse = "response"
	kindReset    = "reset"
	kindEmpty    = "empty"
	kindGarbage  = "garbage"
	kindHang     = "hang"
)

// faultKindTable is every kind, in the order the console offers them, with
// what it does as the console's fault form says it.
var faultKindTable = []struct{ kind, does string }{
	{kindResponse, "an HTTP answer, or a delay"},
	{kindReset, "a TCP reset, nothing written"},
	{kindEmpty, "closed, nothing written"},
	{kindGarbage, "bytes that are not HTTP"},
	{kindHang, "no answer (closed after DelayMs)"},
}

// faultKinds are the kinds' names, in the table's order.
var faultKinds = func() (kinds []string) {
	for _, k := range faultKindTable {
		kinds = append(kinds, k.kind)
	}
	return kinds
}()

// fault makes matching requests fail or wait, to test a client's retries.
type fault struct {
	ID      int `json:"Id"`
	Method  string
	Path    string
	Match   *faultMatch `json:",omitempty"`
	Skip    int         `json:",omitempty"`
	Times   int
	Chance  float64
	Seed    int64
	Kind    string
	Status  int               `json:",omitempty"`
	Headers map[string]string `json:",omitempty"`
	Body    json.RawMessage   `json:",omitempty"` // as given: a string is sent as its text, anything else as JSON
	DelayMs int
	After   bool
	Fired   int

	body        []byte     // what is sent
	contentType string     // of body, unless Headers say
	draws       *rand.Rand // for Chance, from Seed
	skipped     int        // matching requests let through, up to Skip
}

type faultList struct {
	mu     sync.Mutex
	faults []*fault
	lastID int
}

// held is what a fault keeps beyond its fixed fields: its body as given
// and as sent (one slice when it is JSON) and its headers.
func (f *fault) held() int64 {
	n := len(f.Body)
	if len(f.body) > 0 && &f.body[0] != &f.Body[0] {
		n += len(f.body)
	}
	m := cmp.Or(f.Match, &faultMatch{})
	n += 2 * len(m.Body) // as given, and as bodyText or bodyProps
	for _, kv := range []map[string]string{f.Headers, m.Query, m.Headers} {
		for name, value := range kv {
			n += len(name) + len(value)
		}
	}
	return int64(n)
}

// heldBytes is what the faults' bodies and headers hold (fault.held).
func (l *faultList) heldBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, f := range l.faults {
		n += f.held()
	}
	return n
}

func (l *faultList) add(parsed []*fault) ([]fault, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A spent fault takes no place a new one needs: it stays listed (the
	// console shows it as spent) until its room is needed, oldest first.
	live := 0
	for _, f := range l.faults {
		if !f.spent() {
			live++
		}
	}
	if live+len(parsed) > maxFaults {
		return nil, errorf(http.StatusBadRequest, "At most %d faults may exist at once; %d exist and this adds %d.", maxFaults, live, len(parsed))
	}
	excess := len(l.faults) + len(parsed) - maxFaults
	l.faults = slices.DeleteFunc(l.faults, func(f *fault) bool {
		if excess > 0 && f.spent() {
			excess--
			return true
		}
		return false
	})
	added := make([]fault, len(parsed))
	for i, f := range parsed {
		l.lastID++
		f.ID = l.lastID
		l.faults = append(l.faults, f)
		added[i] = *f
	}
	return added, nil
}

func (l *faultList) list() []fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]fault, len(l.faults))
	for i, f := range l.faults {
		out[i] = *f
	}
	return out
}

func (l *faultList) clear() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.faults)
	l.faults = nil
	return n
}

func (l *faultList) remove(id int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.faults)
	l.faults = slices.DeleteFunc(l.faults, func(f *fault) bool { return f.ID == id })
	return len(l.faults) < n
}

// exposedHeaders adds to base (sorted) the headers that faults that can
// still fire set: a page must be able to read what a fault answers with.
func (l *faultList) exposedHeaders(base []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clip(base) // an append copies it: base is shared by every request
	for _, f := range l.faults {
		for name := range f.Headers {
			if !f.spent() && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	if len(out) > len(base) {
		slices.Sort(out)
	}
	return out
}

// spent reports whether f has fired all its Times and never fires again.
func (f *fault) spent() bool { return f.Times != 0 && f.Fired >= f.Times }

// takeFault returns the first fault that fires for r, or the zero fault
// (ID 0); the error is the 503 when reading the body a fault matches on
// would pass -max-request-bytes.
func (s *Server) takeFault(x *exchange, r *http.Request) (fault, error) {
	if x.observer || !isAPIPath(r.URL.Path) {
		return fault{}, nil
	}
	// A body over the limit is the handler's 413 (at once, for a client
	// that waits for 100 Continue), whatever a fault would make of it.
	// A delay's reading is done here too, before a fault is taken: a
	// request refused for its request bytes does not spend a firing.
	var body matchBody
	if r.ContentLength <= s.cfg.MaxBody {
		if needsBody, needsProps, delays := x.ns.faults.needsBody(r); needsBody || delays {
			raw, err := readAhead(x, r, s.cfg.MaxBody)
			if err != nil {
				return fault{}, err
			}
			if needsBody {
				body.raw = raw
			}
			if needsProps {
				body.props = parseMatchBody(body.raw)
			}
		}
	}
	f := x.ns.faults.take(r, body)
	x.faultID = f.ID
	return f, nil
}

// applyFault delays and answers r as fault f says; it reports whether the
// request was answered (false for a delay only: the real answer follows).
// An After fault's real answer has been served already (ServeHTTP).
func (s *Server) applyFault(x *exchange, r *http.Request, f fault) bool {
	if f.DelayMs > 0 || f.Kind == kindHang {
		// Read already (takeFault) unless the body is over -max-body.
		if _, err := readAhead(x, r, s.cfg.MaxBody); err != nil {
			// The body is held through the delay: it counts. Refused, the
			// request was not faulted, and the firing is not spent.
			x.ns.faults.giveBack(f.ID)
			x.faultID = 0
			s.writeError(x, err)
			return true
		}
		d := time.Duration(f.DelayMs) * time.Millisecond
		if d == 0 {
			d = hangLimit(r)
		}
		if !s.wait(x, r, d) {
			return true
		}
	}
	switch {
	case f.Kind != kindResponse:
		readSentBody(r, s.cfg.MaxBody)
		s.closeConnection(x, f.Kind)
	case f.Status == 0:
		return false // a delay only: the real answer follows
	default:
		s.writeFaultResponse(x, r, f)
	}
	return true
}

// hangLimit is how long a hang without DelayMs holds a client that never
// gives up: the serving http.Server's write timeout, past which no answer
// could be written anyway, or writeTimeout when it has none.
func hangLimit(r *http.Request) time.Duration {
	if hs, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && hs.WriteTimeout > 0 {
		return hs.WriteTimeout
	}
	return writeTimeout
}

// wait holds a faulted request for d, unless the client gives up or the
// server shuts down first; it reports whether the fault should go on.
func (s *Server) wait(x *exchange, r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		if !x.wroteHeader && x.did == 0 {
			x.did = statusClientClosed // nobody is left to answer
		}
		return false
	case <-s.closing:
		// Shutdown waits for in-flight requests; a fault must not hold it.
		if !x.wroteHeader {
			s.writeError(x, errorf(http.StatusServiceUnavailable, "The server is shutting down."))
		}
		return false
	}
}

// writeFaultResponse sends a response fault's answer; as for every answer,
// its journal entry is in before the last write (exchange.Write).
func (s *Server) writeFaultResponse(x *exchange, r *http.Request, f fault) {
	h := x.Header()
	for name, value := range f.Headers {
		h.Set(name, value)
	}
	if f.Status < 200 {
		// An informational status is no final answer: send it, then
		// cut the connection, as a broken upstream would.
		x.WriteHeader(f.Status)
		s.closeConnection(x, kindEmpty)
		return
	}
	if f.body == nil {
		s.writeError(x, errorf(f.Status, "Injected fault %d: %s %s answers %d (see /__admin/faults).", f.ID, r.Method, r.URL.Path, f.Status))
		return
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", f.contentType)
	}
	h.Set("Content-Length", strconv.Itoa(len(f.body)))
	x.WriteHeader(f.Status)
	x.Write(f.body) //nolint:errcheck // the client has gone; nothing to tell it
}

// garbageBytes are what a garbage fault sends: with no space in its first
// line, no HTTP client can read it as a status line.
var garbageBytes = []byte("\x00\x8f\xfe\x16GARBAGE-FROM-AN-INJECTED-FAULT\x00\r\n\r\n\xff")

// closeConnection ends the connection without an HTTP answer, journaled first (hijack).
func (s *Server) closeConnection(x *exchange, kind string) {
	conn, buf := x.hijack()
	switch kind {
	case kindReset:
		if tcp, ok := conn.(*net.TCPConn); ok {
			tcp.SetLinger(0) //nolint:errcheck // closing anyway
		}
	case kindGarbage:
		buf.Write(garbageBytes) //nolint:errcheck // closing anyway
		buf.Flush()             //nolint:errcheck // closing anyway
	}
	conn.Close()
}
