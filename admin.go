package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The test-double controls live under adminPrefix, apart from the emulated
// API, which must only do what the real service does.
const adminPrefix = "/__admin/"

// maxFaultDelay bounds an injected delay: long enough for any client
// timeout worth testing, short enough that a forgotten fault does not hold
// connections for ever.
const maxFaultDelay = 2 * time.Minute

// maxJournalBody is how much of each request body the journal keeps.
const maxJournalBody = 64 << 10

func (s *Server) registerAdmin() {
	s.route("/__admin/health", map[string]http.HandlerFunc{http.MethodGet: s.handleHealth})
	s.route("/__admin/resources", map[string]http.HandlerFunc{
		http.MethodGet:    s.handleAdminResources,
		http.MethodPost:   s.handleSeed,
		http.MethodDelete: s.handleDeleteResources,
	})
	s.route("/__admin/requests", map[string]http.HandlerFunc{
		http.MethodGet:    s.handleJournal,
		http.MethodDelete: s.handleClearJournal,
	})
	s.route("/__admin/faults", map[string]http.HandlerFunc{
		http.MethodGet:    s.handleFaults,
		http.MethodPost:   s.handleAddFaults,
		http.MethodDelete: s.handleClearFaults,
	})
	s.route("/__admin/snapshot", map[string]http.HandlerFunc{http.MethodPost: s.handleSnapshot})
	s.route("/__admin/reset", map[string]http.HandlerFunc{http.MethodPost: s.handleReset})
}

// serveControlled applies, in order, CORS, authentication, the journal and
// injected faults, then routes the request.
func (s *Server) serveControlled(w *statusRecorder, r *http.Request, requestID string) {
	if s.cfg.CORSOrigin != "" && s.cors(w, r) {
		return
	}
	if s.cfg.Auth != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="resourcedir"`)
		writeError(w, &apiError{Status: http.StatusUnauthorized, Message: "Authentication is required: send HTTP Basic credentials (user name and API token)."})
		return
	}
	if strings.HasPrefix(r.URL.Path, adminPrefix) {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The journal and faults wrap the body of a shallow copy: after the
	// handler, the server inspects the original's Body to decide whether to
	// discard the unread rest, which would wait for a body held back for a
	// 100 Continue.
	r = r.WithContext(r.Context())
	served := false // still false in the deferred func when the handler panicked
	if s.journal != nil && strings.HasPrefix(r.URL.Path, "/api/v2/") {
		body := &capturedBody{ReadCloser: r.Body, declared: r.ContentLength,
			waitsContinue: strings.EqualFold(r.Header.Get("Expect"), "100-continue")}
		r.Body = body
		start := time.Now()
		defer func() {
			status := w.status()
			if !served && !w.wroteHeader {
				status = http.StatusInternalServerError // what ServeHTTP's recovery answers
			}
			body.drain()
			s.journal.add(journalEntry{
				Time: start.UTC(), RequestID: requestID, Method: r.Method, Path: r.URL.Path,
				Query: r.URL.RawQuery, body: body.buf, BodyTruncated: body.truncated,
				Status: status, DurationMs: float64(time.Since(start).Microseconds()) / 1000,
			})
		}()
	}
	if !s.faults.apply(w, r, s.cfg.MaxBody, s.closing) {
		s.mux.ServeHTTP(w, r)
	}
	served = true
}

// cors adds the CORS headers and answers preflights, which carry no
// credentials and so come before authentication. It reports whether the
// request was answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	if s.cfg.CORSOrigin != "*" && origin != s.cfg.CORSOrigin {
		return false
	}
	h.Set("Access-Control-Allow-Origin", s.cfg.CORSOrigin)
	h.Set("Access-Control-Expose-Headers", "X-Request-Id")
	if s.cfg.CORSOrigin != "*" {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
	allowHeaders := r.Header.Get("Access-Control-Request-Headers")
	if allowHeaders == "" {
		allowHeaders = "Authorization, Content-Type, X-Request-Id"
	}
	h.Set("Access-Control-Allow-Headers", allowHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// authorized checks HTTP Basic credentials in constant time, so that the
// time taken does not tell how much of a guess was right.
func (s *Server) authorized(r *http.Request) bool {
	user, token, ok := r.BasicAuth()
	wantUser, wantToken, _ := strings.Cut(s.cfg.Auth, ":")
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(wantUser))
	tokenOK := subtle.ConstantTimeCompare([]byte(token), []byte(wantToken))
	return ok && userOK&tokenOK == 1
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Status    string
		Resources int
	}{"ok", s.store.Len()})
}

func (s *Server) handleAdminResources(w http.ResponseWriter, r *http.Request) {
	all, _ := s.store.All()
	writeEncoded(w, func(b []byte) []byte { return appendResourceArray(b, all) })
}

func appendResourceArray(b []byte, resources []*Resource) []byte {
	b = append(b, '[')
	for i, res := range resources {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendResource(b, res, false)
	}
	return append(b, ']')
}

func (s *Server) handleSeed(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, s.cfg.MaxSeedBody)
	if err != nil {
		writeError(w, err)
		return
	}
	resources, err := decodeSeed(body)
	if err == nil {
		err = s.store.Insert(resources)
	}
	if dup := (*errDuplicateID)(nil); errors.As(err, &dup) {
		err = invalid(modelState{fmt.Sprintf("[%d].Id", dup.Index): {fmt.Sprintf("The Id %s is already in use; nothing was seeded.", dup.ID)}})
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeEncoded(w, func(b []byte) []byte {
		b = append(b, `{"Data":`...)
		b = appendResourceArrayOnCPUs(b, resources, len(body))
		b = append(b, `,"Total":`...)
		b = strconv.AppendInt(b, int64(len(resources)), 10)
		return append(b, '}')
	})
}

// appendResourceArrayOnCPUs is appendResourceArray for a seed's many
// resources: parts of the array are written on every CPU, then joined in
// order. seedSize, the size of the seed they came from, sizes the buffers,
// which would otherwise grow (and be copied) many times.
func appendResourceArrayOnCPUs(b []byte, resources []*Resource, seedSize int) []byte {
	perItem := seedSize/max(len(resources), 1) + 128 // the response adds Id, StatusId, nulls
	b = slices.Grow(b, len(resources)*perItem+64)
	parts := make([][]byte, runtime.GOMAXPROCS(0))
	n := inParts(len(resources), func(w, from, to int) {
		if w == 0 {
			b = appendResourceArray(b, resources[from:to])
			return
		}
		parts[w] = appendResourceArray(make([]byte, 0, (to-from)*perItem), resources[from:to])
	})
	for _, part := range parts[1:n] {
		b[len(b)-1] = ',' // for the closing bracket
		b = append(b, part[1:]...)
	}
	return b
}

// inParts cuts [0, n) into one part per CPU (fewer when n is small) and
// runs part on each, the first on the calling goroutine; it returns how
// many parts there were.
func inParts(n int, part func(w, from, to int)) int {
	workers := max(1, min(runtime.GOMAXPROCS(0), n/minSeedItemsPerWorker))
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { part(w, w*n/workers, (w+1)*n/workers) })
	}
	part(0, 0, n/workers)
	wg.Wait()
	return workers
}

// decodeSeed reads a JSON array of resources in the create format, where an
// Id may be given. Every fault of every item is reported, keyed "[i].Field".
func decodeSeed(body []byte) ([]*Resource, error) {
	items, ok := splitSeed(body)
	var results []seedItem
	if ok {
		results, ok = decodeSeedFast(items)
	}
	if !ok {
		// Not an array of plain objects: item by item, decodeResource's
		// slow path says what is wrong.
		var raws []json.RawMessage
		if err := json.Unmarshal(body, &raws); err != nil || raws == nil { // null is no array
			var se *json.SyntaxError
			if errors.As(err, &se) || len(bytes.TrimSpace(body)) == 0 {
				return nil, syntaxError(err, 0)
			}
			return nil, &apiError{Status: http.StatusBadRequest, Message: "The seed must be a JSON array of resources."}
		}
		results = make([]seedItem, len(raws))
		for i, raw := range raws {
			ms := modelState{}
			in, err := decodeResource(raw, ms)
			if err != nil {
				var ae *apiError
				errors.As(err, &ae)
				results[i].fault = ae.Message
				continue
			}
			results[i] = buildSeedItem(in, ms)
		}
	}
	return checkSeed(results)
}

// seedItem is one decoded seed item.
type seedItem struct {
	res   *Resource
	id    string     // the canonical GUID the item gives, if any
	ms    modelState // its faults, nil when none
	fault string     // why the item could not be read at all
}

// buildSeedItem applies the create rules to a decoded item and reads the Id
// it gives, if any.
func buildSeedItem(in *resourceInput, ms modelState) seedItem {
	item := seedItem{res: in.build(modeSeed, ms)}
	item.res.nulls |= 1 << fieldID
	if id, given := in.res.value(fieldID); given {
		if canonical, ok := parseGUID(id); ok {
			item.id = canonical
		} else {
			ms.add("Id", fmt.Sprintf("Id %q is not a GUID.", id))
		}
	}
	if len(ms) > 0 {
		item.ms = maps.Clone(ms)
	}
	return item
}

// checkSeed gathers the faults of the items and checks that no two give
// the same Id, in item order; it returns the resources when all is well.
func checkSeed(results []seedItem) ([]*Resource, error) {
	all := modelState{}
	resources := make([]*Resource, 0, len(results))
	var seen map[string]int // canonical Id -> the item that gives it first
	for i, item := range results {
		if item.fault != "" {
			all.add(fmt.Sprintf("[%d]", i), item.fault)
			continue
		}
		if item.id != "" {
			if first, taken := seen[item.id]; taken {
				if item.ms == nil {
					item.ms = modelState{}
				}
				item.ms.add("Id", fmt.Sprintf("Id %s is also given to item %d.", item.id, first))
			} else {
				if seen == nil {
					seen = map[string]int{}
				}
				seen[item.id] = i
				item.res.set(fieldID, item.id, true)
			}
		}
		for prop, msgs := range item.ms {
			all[fmt.Sprintf("[%d].%s", i, prop)] = msgs
		}
		resources = append(resources, item.res)
	}
	if len(all) > 0 {
		return nil, &apiError{Status: http.StatusBadRequest, Message: "The seed is invalid; nothing was seeded.", ModelState: all}
	}
	return resources, nil
}

// splitSeed cuts a seed, a JSON array of objects, into its items. It checks
// the array's punctuation only, and decodeFast checks each item; ok is false
// for anything else (not an array, an item that is not an object).
func splitSeed(body []byte) (items [][]byte, ok bool) {
	i := skipJSONSpace(body, 0)
	if i == len(body) || body[i] != '[' {
		return nil, false
	}
	items = make([][]byte, 0, len(body)/256+1)
	if i = skipJSONSpace(body, i+1); i < len(body) && body[i] == ']' {
		i++
	} else {
		for {
			if i == len(body) || body[i] != '{' {
				return nil, false
			}
			end := scanNested(body, i, maxFastDepth)
			if end < 0 {
				return nil, false
			}
			items = append(items, body[i:end])
			var more bool
			if i, more = nextMember(body, end, ']'); more {
				continue
			}
			if i < 0 {
				return nil, false
			}
			break
		}
	}
	return items, skipJSONSpace(body, i) == len(body)
}

// minSeedItemsPerWorker keeps small seeds on the calling goroutine.
const minSeedItemsPerWorker = 256

// decodeSeedFast decodes and builds the items on every CPU with decodeFast;
// ok is false when it declines one, and then the seed must take the slow
// path as a whole, which reports syntax errors where they are in the body.
func decodeSeedFast(items [][]byte) (results []seedItem, ok bool) {
	results = make([]seedItem, len(items))
	var declined atomic.Bool
	inParts(len(items), func(_, from, to int) {
		var in resourceInput
		ms := modelState{}
		for k := from; k < to && !declined.Load(); k++ {
			in = resourceInput{}
			if !in.decodeFast(items[k], ms) {
				declined.Store(true)
				return
			}
			results[k] = buildSeedItem(&in, ms)
			clear(ms)
		}
	})
	return results, !declined.Load()
}

func (s *Server) handleDeleteResources(w http.ResponseWriter, r *http.Request) {
	n := s.store.Len()
	s.store.Reset()
	writeJSON(w, http.StatusOK, struct{ Deleted int }{n})
}

func (s *Server) handleJournal(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct{ Requests []journalEntry }{s.journal.entries()})
}

func (s *Server) handleClearJournal(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct{ Cleared int }{s.journal.clear()})
}

func (s *Server) handleFaults(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct{ Faults []fault }{s.faults.list()})
}

func (s *Server) handleAddFaults(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		writeError(w, err)
		return
	}
	added, err := s.faults.add(body)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{ Faults []fault }{added})
}

func (s *Server) handleClearFaults(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct{ Cleared int }{s.faults.clear()})
}

func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	if s.snap == nil {
		writeError(w, &apiError{Status: http.StatusConflict, Message: "Snapshots are off (started with -snapshot \"\"), so there is nothing to write."})
		return
	}
	res, err := s.snap.write()
	if err != nil {
		s.log.Error("snapshot on request failed", "error", err)
		writeError(w, &apiError{Status: http.StatusInternalServerError, Message: "The snapshot could not be written (" +
			writeFailureReason(err) + "); the previous snapshot is kept, and the server log says more."})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Path       string
		Resources  int
		Bytes      int64
		DurationMs float64
	}{res.Path, res.Resources, res.Bytes, float64(res.Duration.Microseconds()) / 1000})
}

func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	s.store.Reset()
	s.journal.clear()
	s.faults.clear()
	writeJSON(w, http.StatusOK, struct{ Status string }{"reset"})
}

// journalEntry is one /api/v2 request as the client sent it.
type journalEntry struct {
	Time          time.Time
	RequestID     string `json:"RequestId"`
	Method        string
	Path          string
	Query         string
	Body          json.RawMessage // the body as JSON when it is JSON, else a JSON string; null when empty
	BodyTruncated bool
	Status        int
	DurationMs    float64

	body []byte // as captured; Body is made from it when the journal is read, not on every request
}

// journal is a ring of the last size entries: its memory is bounded by
// size × (maxJournalBody + a little) whatever the load.
type journal struct {
	mu    sync.Mutex
	ring  []journalEntry
	next  int // where the next entry goes
	count int
}

// newJournal returns nil when size is 0: the journal is off.
func newJournal(size int) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{ring: make([]journalEntry, size)}
}

func (j *journal) add(e journalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ring[j.next] = e
	j.next = (j.next + 1) % len(j.ring)
	j.count = min(j.count+1, len(j.ring))
}

// entries returns the kept entries, oldest first.
func (j *journal) entries() []journalEntry {
	out := []journalEntry{}
	if j == nil {
		return out
	}
	j.mu.Lock()
	start := (j.next - j.count + len(j.ring)) % len(j.ring)
	for i := range j.count {
		out = append(out, j.ring[(start+i)%len(j.ring)])
	}
	j.mu.Unlock()
	for i := range out {
		out[i].Body = journalBody(out[i].body, out[i].BodyTruncated)
	}
	return out
}

func (j *journal) clear() int {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.count
	clear(j.ring)
	j.next, j.count = 0, 0
	return n
}

// capturedBody keeps the first maxJournalBody bytes that the handler reads.
type capturedBody struct {
	io.ReadCloser
	buf       []byte
	truncated bool
	declared  int64 // Content-Length; -1 when unknown (chunked)
	// waitsContinue: the client sends the body only after a 100 Continue,
	// which the server sends on the first read, and not once it has answered.
	waitsContinue bool
	started       bool
}

func (c *capturedBody) Read(p []byte) (int, error) {
	c.started = true
	n, err := c.ReadCloser.Read(p)
	keep := min(n, maxJournalBody-len(c.buf))
	c.buf = append(c.buf, p[:keep]...)
	if keep < n {
		c.truncated = true
	}
	return n, err
}

// drain reads what the handler left unread (a faulted request, a 404), so
// that the journal shows what the client sent, up to the journal's cap. It
// does not wait for a body that the client holds back: one that waits for a
// 100 Continue never sent, or one declared over the cap (a 413 answered from
// Content-Length), which a client may send only after the verdict.
func (c *capturedBody) drain() {
	switch {
	case c.truncated, c.waitsContinue && !c.started:
	case c.declared > maxJournalBody:
		c.truncated = true
	default:
		io.Copy(io.Discard, io.LimitReader(c, maxJournalBody+1-int64(len(c.buf)))) //nolint:errcheck // best effort
	}
}

// journalBody is a captured body as the journal shows it: the body itself
// (compacted) when it is JSON, else a JSON string; nil when empty.
func journalBody(buf []byte, truncated bool) json.RawMessage {
	switch {
	case len(buf) == 0:
		return nil
	case !truncated && json.Valid(buf):
		var compact bytes.Buffer
		if json.Compact(&compact, buf) == nil {
			return compact.Bytes()
		}
	}
	text, _ := json.Marshal(string(buf))
	return text
}

// fault makes matching requests fail or wait, to test a client's retries.
type fault struct {
	ID      int    `json:"Id"`
	Method  string // "" matches every method
	Path    string // exact, or with {name} segments that match any one segment
	Status  int    // 0: after the delay, serve the request normally
	DelayMs int
	Times   int // 0: until cleared
	Fired   int
}

type faultList struct {
	mu     sync.Mutex
	faults []*fault
	lastID int
}

// add reads one fault object or an array of them.
func (l *faultList) add(body []byte) ([]fault, error) {
	trimmed := bytes.TrimSpace(body)
	isArray := len(trimmed) > 0 && trimmed[0] == '['
	var specs []map[string]json.RawMessage
	var err error
	if isArray {
		err = json.Unmarshal(trimmed, &specs)
	} else {
		var spec map[string]json.RawMessage
		err = json.Unmarshal(trimmed, &spec)
		specs = append(specs, spec)
	}
	if err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Message: "A fault is a JSON object (or an array of them) such as " +
			`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}.`}
	}
	ms := modelState{}
	parsed := make([]*fault, 0, len(specs))
	for i, spec := range specs {
		f := &fault{}
		prefix := ""
		if isArray {
			prefix = fmt.Sprintf("[%d].", i)
		}
		for key, raw := range spec {
			var err error
			switch strings.ToLower(key) {
			case "method":
				err = json.Unmarshal(raw, &f.Method)
				f.Method = strings.ToUpper(f.Method)
				if f.Method == "*" {
					f.Method = ""
				}
			case "path":
				err = json.Unmarshal(raw, &f.Path)
			case "status":
				err = json.Unmarshal(raw, &f.Status)
			case "delayms":
				err = json.Unmarshal(raw, &f.DelayMs)
			case "times":
				err = json.Unmarshal(raw, &f.Times)
			default:
				continue
			}
			if err != nil {
				ms.add(prefix+canonicalFaultKey(key), "Wrong JSON type.")
			}
		}
		switch {
		case !strings.HasPrefix(f.Path, "/"):
			ms.add(prefix+"Path", "Path is required and starts with /, e.g. /api/v2/resource/{id}.")
		case strings.HasPrefix(f.Path, adminPrefix):
			ms.add(prefix+"Path", "Faults cannot target /__admin/, or they could not be cleared.")
		}
		if f.Status != 0 && (f.Status < 200 || f.Status > 599) { // a 1xx is no final answer
			ms.add(prefix+"Status", "Status must be an HTTP status code from 200 to 599, or 0 for a delay only.")
		}
		if f.DelayMs < 0 || int64(f.DelayMs) > maxFaultDelay.Milliseconds() {
			ms.add(prefix+"DelayMs", fmt.Sprintf("DelayMs must be from 0 to %d.", maxFaultDelay.Milliseconds()))
		}
		if f.Status == 0 && f.DelayMs == 0 {
			ms.add(prefix+"Status", "A fault needs a Status, a DelayMs, or both.")
		}
		if f.Times < 0 {
			ms.add(prefix+"Times", "Times must be 0 (until cleared) or more.")
		}
		parsed = append(parsed, f)
	}
	if len(ms) > 0 {
		return nil, invalid(ms)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	added := make([]fault, len(parsed))
	for i, f := range parsed {
		l.lastID++
		f.ID = l.lastID
		l.faults = append(l.faults, f)
		added[i] = *f
	}
	return added, nil
}

func canonicalFaultKey(key string) string {
	for _, k := range []string{"Method", "Path", "Status", "DelayMs", "Times"} {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return key
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

// take finds the first fault, in the order they were added, that matches r
// and still has firings left, and counts the firing.
func (l *faultList) take(r *http.Request) (fault, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.faults {
		if (f.Times == 0 || f.Fired < f.Times) && (f.Method == "" || f.Method == r.Method) && pathMatches(f.Path, r.URL.Path) {
			f.Fired++
			return *f, true
		}
	}
	return fault{}, false
}

// statusClientClosed is what the journal and the log show for a request
// whose client hung up during an injected delay (nginx's convention).
const statusClientClosed = 499

// apply delays and/or fails r when a fault matches; it reports whether it
// answered the request. maxBody bounds what a delay reads ahead.
func (l *faultList) apply(w *statusRecorder, r *http.Request, maxBody int64, closing <-chan struct{}) bool {
	f, ok := l.take(r)
	if !ok {
		return false
	}
	if f.DelayMs > 0 {
		readAhead(r, maxBody)
		t := time.NewTimer(time.Duration(f.DelayMs) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			w.code = statusClientClosed // nobody is left to answer
			return true
		case <-closing:
			// Shutdown waits for in-flight requests; a delay must not hold it.
			writeError(w, &apiError{Status: http.StatusServiceUnavailable, Message: "The server is shutting down."})
			return true
		}
	}
	if f.Status == 0 {
		return false
	}
	writeError(w, &apiError{Status: f.Status, Message: fmt.Sprintf(
		"Injected fault %d: %s %s answers %d (see /__admin/faults).", f.ID, r.Method, r.URL.Path, f.Status)})
	return true
}

// readAhead reads r's body, up to limit bytes, into memory and puts it back
// in front of what remains: the server notices a client that hangs up only
// once the body has been read to its end, and a delay must end when the
// client gives up.
func readAhead(r *http.Request, limit int64) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > limit {
		return
	}
	head, _ := io.ReadAll(io.LimitReader(r.Body, limit+1)) // an error recurs when the handler reads
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
}

// pathMatches compares a fault's path pattern with a request path, segment
// by segment; a {name} segment matches any one non-empty segment.
func pathMatches(pattern, path string) bool {
	ps, qs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(qs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") && qs[i] != "" {
			continue
		}
		if p != qs[i] {
			return false
		}
	}
	return true
}
