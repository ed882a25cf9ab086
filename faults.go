package resourcedir

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// faultProps are the properties a fault may have, as the wire spells them.
var faultProps = []string{"Method", "Path", "Match", "Skip", "Times", "Chance", "Seed", "Kind", "Status", "Headers", "Body", "DelayMs", "After"}

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

// listFaults streams the listing: built whole, one of large fault bodies took several times their size.
func (s *Server) listFaults(x *exchange, r *http.Request) (any, error) {
	faults := x.ns.faults.list()
	return streamList(`{"Faults":[`, len(faults), func(b []byte, i int) ([]byte, error) {
		text, err := marshalText(&faults[i])
		return append(b, text...), err
	}, "]}"), nil
}

func (s *Server) addFaults(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	parsed, err := parseFaults(body)
	if err != nil {
		return nil, err
	}
	// The bound is on every namespace's faults together: one add at a
	// time checks it, so that two cannot both take the last room.
	s.faultAdds.Lock()
	defer s.faultAdds.Unlock()
	var held, adding int64
	for _, ns := range s.sortedNamespaces() {
		held += ns.faults.heldBytes()
	}
	for _, f := range parsed {
		adding += f.held()
	}
	if held+adding > s.cfg.MaxFaultBodies {
		return nil, badRequest("The bodies and headers of all faults together may hold at most %d bytes (-max-fault-bodies); %d are held and this adds %d. Clear faults (DELETE /__admin/faults) to make room.",
			s.cfg.MaxFaultBodies, held, adding)
	}
	added, err := x.ns.faults.add(parsed)
	if err != nil {
		return nil, err
	}
	return struct{ Faults []fault }{added}, nil
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

func (s *Server) clearFaults(x *exchange, r *http.Request) (any, error) {
	return struct{ Cleared int }{x.ns.faults.clear()}, nil
}

func (s *Server) deleteFault(x *exchange, r *http.Request) (any, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || !x.ns.faults.remove(id) {
		return nil, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No fault has the id %s.", r.PathValue("id"))}
	}
	return struct{ Deleted int }{id}, nil
}

// parseFaults reads one fault object or an array of them, strictly: an
// unknown property, a wrong type or an impossible value is a 400 naming it.
func parseFaults(body []byte) ([]*fault, error) {
	trimmed := bytes.TrimSpace(withoutBOM(body))
	isArray := bytes.HasPrefix(trimmed, []byte("["))
	if !isArray { // one fault: read as an array of one
		trimmed = slices.Concat([]byte("["), trimmed, []byte("]"))
	}
	var specs []map[string]json.RawMessage
	err := json.Unmarshal(trimmed, &specs)
	isNull := func(m map[string]json.RawMessage) bool { return m == nil }
	if err != nil || !isArray && len(specs) != 1 || slices.ContainsFunc(specs, isNull) {
		return nil, badRequest("A fault is a JSON object (or an array of them) such as %s.",
			`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Headers": {"Retry-After": "2"}, "Times": 1}`)
	}
	if len(specs) > maxFaults {
		return nil, badRequest("At most %d faults may exist at once; this asks for %d.", maxFaults, len(specs))
	}
	ms := modelState{}
	parsed := make([]*fault, 0, len(specs))
	for i, spec := range specs {
		prefix := ""
		if isArray {
			prefix = fmt.Sprintf("[%d].", i)
		}
		parsed = append(parsed, parseFault(spec, prefix, &ms))
	}
	if !ms.empty() {
		return nil, invalidAs("The fault is invalid; nothing was added.", ms)
	}
	return parsed, nil
}

func parseFault(spec map[string]json.RawMessage, prefix string, ms *modelState) *fault {
	// The Seed drawn when none is given is below 2^53, so that a JavaScript
	// client can copy it exactly.
	f := &fault{Chance: 1, Kind: kindResponse, Seed: rand.Int64N(1 << 53)}
	into := map[string]any{"Method": &f.Method, "Path": &f.Path, "Skip": &f.Skip, "Times": &f.Times,
		"Chance": &f.Chance, "Seed": &f.Seed, "Kind": &f.Kind, "Status": &f.Status, "Headers": &f.Headers,
		"DelayMs": &f.DelayMs, "After": &f.After}
	seen := map[string]bool{}
	props := adminProps(spec, faultProps, prefix, "A fault", ms)
	for _, name := range faultProps {
		raw, ok := props[name]
		if !ok || name == "Body" && string(raw) == "null" {
			continue // absent, or a null Body: the error shape is sent
		}
		seen[name] = true
		switch name {
		case "Match":
			f.Match = parseFaultMatch(raw, prefix+"Match", ms)
		case "Body":
			var text string
			f.Body = compactJSON(raw)
			if json.Unmarshal(raw, &text) == nil {
				f.body, f.contentType = []byte(text), "text/plain; charset=utf-8"
			} else {
				f.body, f.contentType = f.Body, jsonMediaType // one copy: nothing writes to either
			}
		default:
			if json.Unmarshal(raw, into[name]) != nil {
				ms.add(prefix+name, fmt.Sprintf("%s has the wrong JSON type.", name))
			}
		}
	}
	f.draws = rand.New(rand.NewPCG(uint64(f.Seed), uint64(f.Seed)^0x9e3779b97f4a7c15))
	f.check(seen, prefix, ms)
	return f
}

// check adds to ms what is wrong with a fault as read (seen: the properties
// given), and spells its Method, Path and header names canonically.
func (f *fault) check(seen map[string]bool, prefix string, ms *modelState) {
	f.Method = strings.ToUpper(f.Method)
	if f.Method == "*" {
		f.Method = ""
	}
	if f.Method != "" && strings.ContainsFunc(f.Method, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		ms.add(prefix+"Method", fmt.Sprintf("Method %q is not an HTTP method; use GET, POST, PUT, ... or * for any.", f.Method))
	}
	switch canonical, ok := faultPath(f.Path); {
	case !seen["Path"]:
		ms.add(prefix+"Path", `Path is required: an /api/v2 route (/api/v2/resource, or /api/v2/resource/{id}, where an {name} segment matches any id), or "*" for every /api/v2 path.`)
	case ok:
		f.Path = canonical
	default:
		ms.add(prefix+"Path", fmt.Sprintf(`Path %q can never match: it must be an /api/v2 route, /api/v2/resource or /api/v2/resource/{id} (an {name} segment matches any id), or "*" for every /api/v2 path.`, f.Path))
	}
	if f.Skip < 0 || f.Skip > maxSkip {
		ms.add(prefix+"Skip", fmt.Sprintf("Skip must be from 0 to %d: how many matching requests go through before the fault fires.", maxSkip))
	}
	if f.Times < 0 {
		ms.add(prefix+"Times", "Times must be 0 (until cleared) or more.")
	}
	if !(f.Chance > 0 && f.Chance <= 1) {
		ms.add(prefix+"Chance", "Chance must be more than 0 and at most 1.")
	}
	if !slices.Contains(faultKinds, f.Kind) {
		ms.add(prefix+"Kind", fmt.Sprintf("Kind %q is unknown; it is one of %s.", f.Kind, strings.Join(faultKinds, ", ")))
	}
	if f.DelayMs < 0 || int64(f.DelayMs) > maxFaultDelay.Milliseconds() {
		ms.add(prefix+"DelayMs", fmt.Sprintf("DelayMs must be from 0 to %d.", maxFaultDelay.Milliseconds()))
	}
	if f.Kind == kindResponse {
		switch {
		case seen["Status"] && (f.Status < 100 || f.Status > 599):
			ms.add(prefix+"Status", "Status must be an HTTP status code from 100 to 599.")
		case !seen["Status"] && (seen["Headers"] || seen["Body"]):
			ms.add(prefix+"Status", "Headers and Body need a Status to be sent with.")
		case !seen["Status"] && f.DelayMs == 0:
			ms.add(prefix+"Status", "A response fault needs a Status, a DelayMs, or both.")
		case !seen["Status"] && f.After:
			ms.add(prefix+"After", "After replaces the real answer, so it needs a Status or another Kind.")
		}
	} else if slices.Contains(faultKinds, f.Kind) {
		for _, p := range []string{"Status", "Headers", "Body"} {
			if seen[p] {
				ms.add(prefix+p, fmt.Sprintf("%s goes with Kind %q only; a %q fault writes no HTTP answer.", p, kindResponse, f.Kind))
			}
		}
	}
	f.Headers = canonicalHeaders(f.Headers, prefix, ms)
}

// canonicalHeaders checks a fault's headers and spells their names as they
// are sent (Retry-After), so that GET /__admin/faults shows what goes out.
func canonicalHeaders(in map[string]string, prefix string, ms *modelState) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		value := in[name]
		canonical := http.CanonicalHeaderKey(name)
		_, twice := out[canonical]
		switch {
		case !validHeaderName(name) || strings.ContainsFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			ms.add(prefix+"Headers", fmt.Sprintf("The header %q is not a valid header name and value.", name))
		case twice:
			ms.add(prefix+"Headers", fmt.Sprintf("The header %s is given twice.", canonical))
		}
		out[canonical] = value
	}
	return out
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') &&
			!strings.ContainsRune("!#$%&'*+-.^_`|~", c)
	})
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
		return nil, badRequest("At most %d faults may exist at once; %d exist and this adds %d.", maxFaults, live, len(parsed))
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

// takeFault returns the first fault that fires for r, or the zero fault (ID 0).
func (s *Server) takeFault(x *exchange, r *http.Request) fault {
	if x.observer || !isAPIPath(r.URL.Path) {
		return fault{}
	}
	// A body over the limit is the handler's 413 (at once, for a client
	// that waits for 100 Continue), whatever a fault would make of it.
	var body []byte
	if r.ContentLength <= s.cfg.MaxBody && x.ns.faults.needsBody(r) {
		body = readAhead(x, r, s.cfg.MaxBody)
	}
	f := x.ns.faults.take(r, body)
	x.faultID = f.ID
	return f
}

// applyFault delays and answers r as fault f says; it reports whether the
// request was answered (false for a delay only: the real answer follows).
// An After fault's real answer has been served already (ServeHTTP).
func (s *Server) applyFault(x *exchange, r *http.Request, f fault) bool {
	if f.DelayMs > 0 || f.Kind == kindHang {
		readAhead(x, r, s.cfg.MaxBody)
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
			s.writeError(x, &apiError{Status: http.StatusServiceUnavailable, Message: "The server is shutting down."})
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
		s.writeError(x, &apiError{Status: f.Status, Message: fmt.Sprintf(
			"Injected fault %d: %s %s answers %d (see /__admin/faults).", f.ID, r.Method, r.URL.Path, f.Status)})
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
