package resourcedir

import (
	"bytes"
	"container/heap"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The journal: every /api/v2 request, newest last, for a test to check what
// its client sent (the README's "The journal").

// maxJournalBody is how much of each request body the journal keeps.
const maxJournalBody = 64 << 10

// maxJournalResponse is how much of each answer's body the journal keeps:
// enough to debug with, small enough that capturing it costs the answer
// little.
const maxJournalResponse = 16 << 10

// maxJournalHeaders is how much of each request's headers (names and
// values) the journal keeps, and of each answer's: a client may send 64 KiB
// of them, which no test needs to read back whole.
const maxJournalHeaders = 8 << 10

// journalEntryOverhead is what an entry costs beyond its strings and
// bodies, for the budget: the struct, its maps and slices.
const journalEntryOverhead = 512

// maxJournalWait bounds GET /__admin/requests?wait=.
const maxJournalWait = 60 * time.Second

// journalEntry is one /api/v2 request as the client sent it. An entry is
// never changed once added (but for its place in the budget's list, which
// readers do not read), so that readers take the ring's pointers under the
// lock and read the entries outside it. header is the request's own map,
// not a copy, unless it was cut: nothing writes to it once the request is
// answered, and net/http reads every request into a new map.
type journalEntry struct {
	seq        uint64
	time       time.Time
	requestID  string
	method     string
	path       string // as sent, masked (maskPath)
	route      string // path as the routes spell it, for the path filter
	rawQuery   string
	header     http.Header
	headersCut bool // header holds part of what was sent (maxJournalHeaders)
	// refused: the request was refused for its credentials (401), and
	// only its request line and status are kept.
	refused    bool
	host       string
	body       []byte
	truncated  bool
	status     int
	delivered  int // the status of the answer the client received; 0 for none
	durationMs float64
	faultID    int
	// The answer: respHeader is nil when there was none. With answerMade,
	// its body is made from answer when read, and respBody is empty.
	respHeader    http.Header
	respBody      []byte
	respTruncated bool
	answer        madeAnswer
	answerMade    bool

	// size is what the entry holds, for the budget; owner is its journal,
	// and older and newer its neighbours in the budget's list.
	size         int64
	owner        *journal
	older, newer *journalEntry
}

// journalBudget bounds what the journals of every namespace hold together:
// each namespace's ring bounds its count, and the budget their bytes, the
// oldest entries going first whichever namespace holds them. Its lock
// guards every journal's ring: an entry that leaves one (the ring turns, a
// clear, the budget) leaves the list at once, so that the bytes counted are
// the bytes held.
type journalBudget struct {
	mu         sync.Mutex
	limit      int64
	used       int64
	head, tail *journalEntry // every journal's entries, oldest first
}

func (b *journalBudget) link(e *journalEntry) {
	e.older, e.newer = b.tail, nil
	if b.tail != nil {
		b.tail.newer = e
	} else {
		b.head = e
	}
	b.tail = e
	b.used += e.size
}

func (b *journalBudget) unlink(e *journalEntry) {
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		b.head = e.newer
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		b.tail = e.older
	}
	e.older, e.newer = nil, nil
	b.used -= e.size
}

// journal is a ring of the last size entries, within the budget it shares
// with every namespace's journal.
type journal struct {
	budget *journalBudget
	size   int
	// The ring, guarded by budget.mu: count entries from
	// (next-count) mod size, oldest first; the other slots are nil.
	ring    []*journalEntry // grows to size, so that an idle namespace costs little
	next    int             // where the next entry goes
	count   int
	lastSeq uint64 // never reset, so Seq is never reused

	// mu guards waits. It is taken before budget.mu, never after.
	mu sync.Mutex
	// waits are the long polls by the route their filter names exactly (""
	// for a pattern or none), then by filter: an entry is checked against
	// the filters of its own route and of "", once each however many wait
	// on it, and wakes only the waiters it brings to their count.
	waits map[string]map[journalFilter]*waiters
	// examined counts the entries checked against a filter: a test reads
	// it to see what long polls cost the requests recorded meanwhile.
	examined atomic.Uint64
}

// waiters are the long polls that share a filter. matched counts the
// entries the filter matched since the first of them began; each waits for
// it to reach its target.
type waiters struct {
	matched uint64
	queue   []*waiter // a heap, the nearest target first
}

type waiter struct {
	filter journalFilter
	target uint64
	index  int           // in its queue; -1 once out of it
	ready  chan struct{} // closed when matched reaches target
}

func (ws *waiters) Len() int           { return len(ws.queue) }
func (ws *waiters) Less(a, b int) bool { return ws.queue[a].target < ws.queue[b].target }
func (ws *waiters) Swap(a, b int) {
	ws.queue[a], ws.queue[b] = ws.queue[b], ws.queue[a]
	ws.queue[a].index, ws.queue[b].index = a, b
}
func (ws *waiters) Push(x any) {
	w := x.(*waiter)
	w.index = len(ws.queue)
	ws.queue = append(ws.queue, w)
}
func (ws *waiters) Pop() any {
	w := ws.queue[len(ws.queue)-1]
	ws.queue[len(ws.queue)-1] = nil
	ws.queue = ws.queue[:len(ws.queue)-1]
	w.index = -1
	return w
}

// newJournal returns nil when size is 0: the journal is off.
func newJournal(size int, budget *journalBudget) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{size: size, budget: budget}
}

// startJournal begins recording an /api/v2 request: its body is captured as
// the handler reads it. The entry is added when the answer is done.
func (s *Server) startJournal(x *exchange, r *http.Request) {
	if x.ns.journal == nil || x.observer || !isAPIPath(r.URL.Path) {
		return
	}
	x.journaled = true
	x.capture = capturedBody{ReadCloser: r.Body, declared: r.ContentLength,
		waitsContinue: strings.EqualFold(r.Header.Get("Expect"), "100-continue")}
	if r.Body != http.NoBody { // nothing to capture, and r may be net/http's own (routedRequest)
		r.Body = &x.capture
	}
}

func (j *journal) add(x *exchange, r *http.Request, now time.Time) {
	e := &journalEntry{
		time: x.start.UTC(), requestID: x.requestID, method: r.Method, path: x.apiPath, route: x.route,
		rawQuery: r.URL.RawQuery, host: r.Host, status: x.recordedStatus(), delivered: x.deliveredStatus(), faultID: x.faultID,
		durationMs: float64(now.Sub(x.start).Microseconds()) / 1000, owner: j,
	}
	if x.refused {
		// A stranger may send as many of these as it likes: only what
		// says what was refused is kept, and the entry says what was cut.
		e.refused, e.headersCut, e.respTruncated = true, len(r.Header) > 0, x.respHeader != nil
		e.truncated = r.ContentLength != 0
	} else {
		x.capture.drain()
		e.header, e.headersCut = capHeaders(r.Header)
		e.body, e.truncated = x.capture.buf, x.capture.truncated
		if x.respHeader != nil {
			var cut bool
			e.respHeader, cut = capHeaders(x.respHeader)
			e.respBody, e.respTruncated = x.respBody, x.respTruncated || cut
			if x.answerMade {
				e.answer, e.answerMade = x.answer, true
			}
		}
	}
	// A made answer is counted as the copy it replaces.
	answerBytes := 0
	if e.answerMade {
		answerBytes = min(x.answerLen, maxJournalResponse)
	}
	e.size = journalEntryOverhead + int64(len(e.requestID)+len(e.path)+len(e.route)+len(e.rawQuery)+len(e.host)+
		len(e.body)+len(e.respBody)+answerBytes+headerBytes(e.header)+headerBytes(e.respHeader))
	j.insert(e)
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.waits) == 0 {
		return
	}
	for _, route := range [...]string{e.route, ""} {
		filters := j.waits[route]
		j.examined.Add(uint64(len(filters)))
		for f, ws := range filters {
			if !f.matches(e) {
				continue
			}
			ws.matched++
			for ws.Len() > 0 && ws.queue[0].target <= ws.matched {
				close(heap.Pop(ws).(*waiter).ready)
			}
			j.forget(f, ws)
		}
	}
}

// insert puts e in the ring and the budget, and drops the oldest entries,
// of any journal, while the budget is exceeded; e itself stays, so that a
// journal always shows its last request.
func (j *journal) insert(e *journalEntry) {
	b := j.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	j.lastSeq++
	e.seq = j.lastSeq
	if len(j.ring) < j.size {
		j.ring = append(j.ring, e)
	} else {
		if old := j.ring[j.next]; old != nil { // the oldest: the ring is full
			b.unlink(old)
			j.count--
		}
		j.ring[j.next] = e
	}
	j.next = (j.next + 1) % j.size
	j.count++
	b.link(e)
	for b.used > b.limit && b.head != e {
		oldest := b.head
		o := oldest.owner
		// The list's oldest entry of a journal is that ring's oldest.
		o.ring[(o.next-o.count+o.size)%o.size] = nil
		o.count--
		b.unlink(oldest)
	}
}

// headerBytes is what a header map holds, roughly: its names and values
// and a string header each.
func headerBytes(h http.Header) int {
	n := 0
	for name, values := range h {
		n += len(name) + 16
		for _, v := range values {
			n += len(v) + 16
		}
	}
	return n
}

// capHeaders returns h when it is within maxJournalHeaders, else a copy
// of the names (in order) that fit, each with all its values, and true.
func capHeaders(h http.Header) (http.Header, bool) {
	if headerBytes(h) <= maxJournalHeaders {
		return h, false
	}
	out := http.Header{}
	room := maxJournalHeaders
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if n := headerBytes(http.Header{name: h[name]}); n <= room {
			out[name], room = h[name], room-n
		}
	}
	return out, true
}

// route is the route f names exactly; "" when it names a pattern or none.
func (f journalFilter) route() string {
	if strings.Contains(f.path, "{") {
		return ""
	}
	return f.path
}

// forget drops f's waiters once none is left.
func (j *journal) forget(f journalFilter, ws *waiters) {
	if ws.Len() > 0 {
		return
	}
	delete(j.waits[f.route()], f)
	if len(j.waits[f.route()]) == 0 {
		delete(j.waits, f.route())
	}
}

// kept returns the entries the ring holds, oldest first: pointers, copied
// under the lock so that the entries are read outside it.
func (j *journal) kept() []*journalEntry {
	j.budget.mu.Lock()
	defer j.budget.mu.Unlock()
	return j.keptLocked()
}

// keptLocked is kept with budget.mu held.
func (j *journal) keptLocked() []*journalEntry {
	out := make([]*journalEntry, j.count)
	start := (j.next - j.count + j.size) % j.size
	for i := range out {
		out[i] = j.ring[(start+i)%j.size]
	}
	return out
}

// selected keeps, in place, the entries f matches.
func (j *journal) selected(entries []*journalEntry, f journalFilter) []*journalEntry {
	j.examined.Add(uint64(len(entries)))
	out := entries[:0]
	for _, e := range entries {
		if f.matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// matching returns the kept entries that q selects, oldest first.
func (j *journal) matching(q journalQuery) []*journalEntry {
	return j.selected(j.kept(), q.journalFilter)
}

// watch returns the kept entries and a waiter for q.count more entries that
// q matches, begun at the same moment: entries added after those returned
// count towards its target, which found lowers by those that matched. A
// count over the journal's size can never be met: that waiter is never
// ready, and is not registered.
func (j *journal) watch(q journalQuery) ([]*journalEntry, *waiter) {
	j.mu.Lock()
	defer j.mu.Unlock()
	w := &waiter{filter: q.journalFilter, index: -1}
	// The entries, under budget.mu; an entry added meanwhile is in them or
	// counted for the waiter (add inserts before it counts, and counts
	// under mu), or both, which wakes the waiter to look again.
	j.budget.mu.Lock()
	kept, lastSeq := j.keptLocked(), j.lastSeq
	j.budget.mu.Unlock()
	if q.count > j.size {
		return kept, w
	}
	// Every entry to come has a larger Seq than since: waiters that differ
	// only there share a filter.
	if w.filter.since <= lastSeq {
		w.filter.since = 0
	}
	filters := j.waits[w.filter.route()]
	if filters == nil {
		if j.waits == nil {
			j.waits = map[string]map[journalFilter]*waiters{}
		}
		filters = map[journalFilter]*waiters{}
		j.waits[w.filter.route()] = filters
	}
	ws := filters[w.filter]
	if ws == nil {
		ws = &waiters{}
		filters[w.filter] = ws
	}
	w.target, w.ready = ws.matched+uint64(q.count), make(chan struct{})
	heap.Push(ws, w)
	return kept, w
}

// found lowers w's target by the n entries that matched when it began.
func (j *journal) found(w *waiter, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if w.index < 0 {
		return
	}
	ws := j.waits[w.filter.route()][w.filter]
	w.target -= uint64(n)
	if w.target > ws.matched {
		heap.Fix(ws, w.index)
		return
	}
	heap.Remove(ws, w.index)
	close(w.ready)
	j.forget(w.filter, ws)
}

// unwatch forgets a waiter that stops waiting before it is ready.
func (j *journal) unwatch(w *waiter) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if w.index < 0 {
		return
	}
	ws := j.waits[w.filter.route()][w.filter]
	heap.Remove(ws, w.index)
	j.forget(w.filter, ws)
}

// await returns what q selects as soon as q.count entries match, or what
// matches when q.wait passes, the request ends (gone) or the server stops.
// A waiter is woken only by the entry that brings it to its count, and
// then looks again: a clear, or the ring's turning, may have taken some of
// those it counted.
func (j *journal) await(q journalQuery, gone, stopping <-chan struct{}) []*journalEntry {
	if q.wait == 0 {
		return j.matching(q)
	}
	timer := time.NewTimer(q.wait)
	defer timer.Stop()
	for {
		entries, w := j.watch(q)
		entries = j.selected(entries, q.journalFilter)
		if len(entries) >= q.count {
			j.unwatch(w)
			return entries
		}
		j.found(w, len(entries))
		select {
		case <-w.ready:
			continue
		case <-timer.C:
		case <-gone:
		case <-stopping:
		}
		j.unwatch(w)
		return j.matching(q)
	}
}

func (j *journal) clear() int {
	if j == nil {
		return 0
	}
	j.budget.mu.Lock()
	defer j.budget.mu.Unlock()
	n := j.count
	for _, e := range j.ring {
		if e != nil {
			j.budget.unlink(e)
		}
	}
	j.ring = nil
	j.next, j.count = 0, 0
	return n
}

// journalQuery is what GET /__admin/requests asks for; zero values select
// everything.
type journalQuery struct {
	journalFilter
	limit int
	count int
	wait  time.Duration
}

// journalFilter selects entries; comparable, so that waiters share it.
type journalFilter struct {
	method    string
	path      string // a route pattern, {name} segments allowed
	status    int
	hasStatus bool // status 0 is what a request closed without an answer shows
	since     uint64
}

func (f journalFilter) matches(e *journalEntry) bool {
	return e.seq > f.since &&
		(f.method == "" || f.method == e.method) &&
		(!f.hasStatus || f.status == e.status) &&
		(f.path == "" || pathMatches(f.path, e.route))
}

// parseJournalQuery reads the filters; the admin API is strict, so an
// unknown parameter or a bad value is a 400 that names it.
func parseJournalQuery(raw string) (journalQuery, error) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return journalQuery{}, badRequest("The query string is malformed: %v.", err)
	}
	var q journalQuery
	ms := modelState{}
	number := func(name string, min int64) int64 {
		n, err := strconv.ParseInt(values.Get(name), 10, 64)
		if err != nil || n < min {
			ms.add(name, fmt.Sprintf("%s must be an integer of at least %d, not %q.", name, min, values.Get(name)))
		}
		return n
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if len(values[name]) > 1 {
			ms.add(name, fmt.Sprintf("%s is given %d times; give it once.", name, len(values[name])))
			continue
		}
		switch name {
		case "method":
			q.method = strings.ToUpper(values.Get(name))
		case "path":
			q.path = canonicalAPIPath(values.Get(name))
			if !strings.HasPrefix(q.path, "/") {
				ms.add(name, "path must start with /, e.g. /api/v2/resource/{id}.")
			}
		case "status":
			q.status, q.hasStatus = int(number(name, 0)), true
		case "since":
			q.since = uint64(number(name, 0))
		case "limit":
			q.limit = int(number(name, 1))
		case "count":
			q.count = int(number(name, 1))
		case "wait":
			d, err := time.ParseDuration(values.Get(name))
			if err != nil || d < 0 || d > maxJournalWait {
				ms.add(name, fmt.Sprintf("wait must be a duration such as 5s, at most %s, not %q.", maxJournalWait, values.Get(name)))
			}
			q.wait = d
		default:
			ms.add(name, fmt.Sprintf("Unknown parameter %q; the journal takes method, path, status, since, limit, count and wait.", name))
		}
	}
	if !ms.empty() {
		return journalQuery{}, invalidAs("The journal query is invalid.", ms)
	}
	if q.wait > 0 && q.count == 0 {
		q.count = 1
	}
	return q, nil
}

// readJournal answers GET /__admin/requests, waiting when asked until
// enough entries match. The answer is streamed entry by entry, so that
// reading a journal of large bodies does not build it whole.
func (s *Server) readJournal(x *exchange, r *http.Request) (any, error) {
	q, err := parseJournalQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	var entries []*journalEntry
	if j := x.ns.journal; j != nil {
		entries = j.await(q, r.Context().Done(), s.closing)
	}
	if q.limit > 0 && len(entries) > q.limit {
		entries = entries[len(entries)-q.limit:]
	}
	state := "on"
	if x.ns.journal == nil {
		state = "off"
	}
	return jsonStream(func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"Requests":[`); err != nil {
			return err
		}
		var b []byte
		for i, e := range entries {
			b = b[:0]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJournalEntry(b, e)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, `],"Count":%d,"Journal":%q}`, len(entries), state)
		return err
	}), nil
}

// appendJournalEntry writes one entry as the journal shows it.
func appendJournalEntry(b []byte, e *journalEntry) []byte {
	b = append(b, `{"Seq":`...)
	b = strconv.AppendUint(b, e.seq, 10)
	b = append(b, `,"Time":"`...)
	b = e.time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","RequestId":`...)
	b = appendJSONString(b, e.requestID)
	b = append(b, `,"Method":`...)
	b = appendJSONString(b, e.method)
	b = append(b, `,"Path":`...)
	b = appendJSONString(b, e.path) // masked by the pipeline
	b = append(b, `,"Query":`...)
	query := maskQuery(e.rawQuery)
	b = appendJSONString(b, query)
	b = append(b, `,"Params":`...)
	params, _ := url.ParseQuery(query)
	b = appendMultiMap(b, params)
	b = append(b, `,"Headers":`...)
	headers := maskHeaders(e.header)
	if !e.refused {
		headers["Host"] = []string{e.host}
	}
	b = appendMultiMap(b, headers)
	b = append(b, `,"HeadersTruncated":`...)
	b = strconv.AppendBool(b, e.headersCut)
	b = append(b, `,"Body":`...)
	b = appendJournalBody(b, e.body, e.truncated)
	b = append(b, `,"BodyTruncated":`...)
	b = strconv.AppendBool(b, e.truncated)
	b = append(b, `,"Status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, `,"DurationMs":`...)
	b = strconv.AppendFloat(b, e.durationMs, 'f', -1, 64)
	b = append(b, `,"Fault":`...)
	if e.faultID == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(e.faultID), 10)
	}
	b = append(b, `,"Delivered":`...)
	b = strconv.AppendInt(b, int64(e.delivered), 10)
	b = append(b, `,"Response":`...)
	respTruncated := e.respTruncated
	if e.respHeader == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"Headers":`...)
		b = appendMultiMap(b, maskHeaders(e.respHeader))
		b = append(b, `,"Body":`...)
		if e.answerMade {
			b, respTruncated = appendMadeAnswer(b, &e.answer, respTruncated)
		} else {
			b = appendJournalBody(b, e.respBody, respTruncated)
		}
		b = append(b, '}')
	}
	b = append(b, `,"ResponseTruncated":`...)
	b = strconv.AppendBool(b, respTruncated)
	return append(b, '}')
}

// appendMadeAnswer writes a made answer as appendJournalBody writes the
// copy it replaces: the answer itself, which is compact JSON in UTF-8
// already, or its first maxJournalResponse bytes as a string.
func appendMadeAnswer(b []byte, a *madeAnswer, truncated bool) ([]byte, bool) {
	start := len(b)
	b = a.appendTo(b)
	if len(b)-start <= maxJournalResponse {
		return b, truncated
	}
	cut := string(b[start : start+maxJournalResponse])
	return appendJSONString(b[:start], cut), true
}

// appendMultiMap writes names in order, each to its value, or to a list of
// them when repeated.
func appendMultiMap(b []byte, m map[string][]string) []byte {
	b = append(b, '{')
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		vals := m[name]
		if len(vals) == 1 {
			b = appendJSONString(b, vals[0])
			continue
		}
		b = append(b, '[')
		for k, v := range vals {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// The journal is read by tests, consoles and whoever they show it to, so
// it shows no secret: the values of the headers and query parameters that
// secretName picks are masked (the README's journal section lists them).
// An empty value stays empty: it is no secret, and may be the bug.
var (
	// secretWords are names, or words of a name between '-', that carry a
	// credential: X-Auth, X-Auth-Key, X-Functions-Key, Authentication.
	secretWords = []string{"auth", "authentication", "key", "sig", "pwd"}
	// secretNameParts carry one wherever they are in a name: Cookie2,
	// X-Auth-Token, jsessionid, client_secret.
	secretNameParts = []string{"authoriz", "token", "secret", "password", "passwd", "apikey", "signature", "session",
		"cookie", "credential"}
	// notSecretNames are word-shaped like a credential but are none, and a
	// test checks what its client sent in them.
	notSecretNames = []string{"idempotency-key", "x-idempotency-key"}
)

// secretName reports whether a header or parameter name is credential-
// shaped: in lower case with '_' read as '-', one of its words is in
// secretWords, or it holds one of secretNameParts.
func secretName(name string) bool {
	name = strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if slices.ContainsFunc(secretNameParts, func(part string) bool { return strings.Contains(name, part) }) {
		return true
	}
	if slices.Contains(notSecretNames, name) {
		return false
	}
	for word := range strings.SplitSeq(name, "-") {
		if slices.Contains(secretWords, word) {
			return true
		}
	}
	return false
}

// maskHeaders returns h with secret values masked: credentials keep their
// scheme (maskCredential), the others are "***". The values that stay are
// h's own slices, which the caller must not change.
func maskHeaders(h http.Header) http.Header {
	out := make(http.Header, len(h)+1) // and Host
	for name, values := range h {
		if !secretName(name) {
			out[name] = values
			continue
		}
		credential := strings.Contains(strings.ToLower(name), "authorization")
		masked := make([]string, len(values))
		for i, v := range values {
			switch {
			case v == "":
			case credential:
				masked[i] = maskCredential(v)
			default:
				masked[i] = "***"
			}
		}
		out[name] = masked
	}
	return out
}

// maskCredential keeps an Authorization value's scheme, and of Basic the
// user name when a password follows it: a token sent as the user name
// (curl -u $TOKEN:) is the secret itself.
func maskCredential(v string) string {
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		return "***"
	}
	if strings.EqualFold(scheme, "Basic") {
		if plain, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
			if user, password, ok := strings.Cut(string(plain), ":"); ok && password != "" {
				return scheme + " " + user + ":***"
			}
		}
	}
	return scheme + " ***"
}

// maskPath masks a path's secrets by maskQuery's rule: what follows a '?'
// (the path is decoded, so a client that escaped its '?' as %3F sent its
// query in it), and the ;name=value parameters of a segment (a servlet's
// ;jsessionid=). The pipeline masks the path once, before anything
// repeats it (begin, routedRequest), so that the answers, the journal and
// the log show the same text.
func maskPath(p string) string {
	if !strings.ContainsAny(p, "?;") {
		return p
	}
	path, query, hasQuery := strings.Cut(p, "?")
	if strings.Contains(path, ";") {
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if head, params, ok := strings.Cut(seg, ";"); ok {
				segs[i] = head + ";" + maskQuery(params)
			}
		}
		path = strings.Join(segs, "/")
	}
	if hasQuery {
		return path + "?" + maskQuery(query)
	}
	return path
}

// maskQuery returns a raw query with the values of secret parameters
// masked and the rest as sent. ';' separates as '&' does: url.ParseQuery
// drops a pair holding one, but Query would show it.
func maskQuery(raw string) string {
	var out []byte // nil until a value is masked
	done := 0      // raw[:done] is in out
	for start := 0; start < len(raw); {
		end := strings.IndexAny(raw[start:], "&;")
		if end < 0 {
			end = len(raw)
		} else {
			end += start
		}
		name, value, ok := strings.Cut(raw[start:end], "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if ok && value != "" && secretName(name) {
			out = append(out, raw[done:end-len(value)]...)
			out = append(out, "***"...)
			done = end
		}
		start = end + 1
	}
	if out == nil {
		return raw
	}
	return string(append(out, raw[done:]...))
}

// appendJournalBody writes a captured body: the body itself (compacted) when
// it is JSON, read as the API reads it (past a byte-order mark), else a JSON
// string; null when empty. Either way invalid UTF-8 and lone surrogate
// escapes are written as U+FFFD, so that a strict JSON reader can read the
// journal whatever a client sent.
func appendJournalBody(b, body []byte, truncated bool) []byte {
	if len(body) == 0 {
		return append(b, "null"...)
	}
	// compactJSON, not json.Compact: a lone surrogate escape or invalid
	// UTF-8 in the body would make the answer one a strict reader refuses.
	if !truncated {
		if c := compactJSON(bytes.TrimPrefix(body, utf8BOM)); c != nil {
			return append(b, c...)
		}
	}
	return appendJSONString(b, string(body))
}

func (s *Server) clearJournal(x *exchange, r *http.Request) (any, error) {
	if err := noQuery(r); err != nil {
		return nil, err
	}
	return struct{ Cleared int }{x.ns.journal.clear()}, nil
}

// capturedBody keeps the first maxJournalBody bytes that the handler reads.
type capturedBody struct {
	io.ReadCloser
	buf       []byte
	read      int64 // bytes read so far
	ended     bool  // a read returned an error: EOF, or one that recurs
	truncated bool
	declared  int64 // Content-Length; -1 when unknown (chunked)
	// waitsContinue: the client sends the body only after a 100 Continue,
	// which the server sends on the first read, and not once it has answered.
	waitsContinue bool
	started       bool
	shared        []byte // the handler's buffer, which buf is the start of
}

// share makes c keep buf, which the handler reads the whole body into from
// its start and never changes, rather than a copy of what it reads: the
// journal's Body is the body's own bytes. buf must fit maxJournalBody.
func (c *capturedBody) share(buf []byte) { c.shared = buf }

func (c *capturedBody) Read(p []byte) (int, error) {
	c.started = true
	n, err := c.ReadCloser.Read(p)
	c.read += int64(n)
	c.ended = err != nil || c.read == c.declared
	if c.shared != nil {
		c.buf = c.shared[:c.read]
		return n, err
	}
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
	case c.ended || c.ReadCloser == http.NoBody || c.truncated:
	case c.declared > maxJournalBody:
		c.truncated = true
	case c.waitsContinue && !c.started:
	default:
		io.Copy(io.Discard, io.LimitReader(c, maxJournalBody+1-int64(len(c.buf)))) //nolint:errcheck // best effort
	}
}

// noQuery refuses parameters on a control that takes none: the admin API
// is strict, so a typo does not pass silently.
func noQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	values, _ := url.ParseQuery(r.URL.RawQuery)
	ms := modelState{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		ms.add(name, fmt.Sprintf("Unknown parameter %q; %s %s takes none.", name, r.Method, r.URL.Path))
	}
	return invalidAs("The query string is invalid.", ms)
}
