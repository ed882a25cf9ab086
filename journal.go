package resourcedir

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The journal: every /api/v2 request, for a test to check what its client sent.

// The journal's bounds.
const (
	// maxJournalBody is how much of each request body the journal keeps.
	maxJournalBody = 64 << 10
	// maxJournalResponse is how much of each answer's body it keeps: enough
	// to debug with, little enough that capturing it costs the answer little.
	maxJournalResponse = 16 << 10
	// maxJournalHeaders is how much of the headers of each request, and of
	// each answer, it keeps: a client may send 64 KiB, which no test reads.
	maxJournalHeaders = 8 << 10
	// journalEntryOverhead is what an entry costs the budget beyond its
	// strings and bodies: the struct, its maps and slices.
	journalEntryOverhead = 512
	// maxJournalWait bounds GET /__admin/requests?wait=.
	maxJournalWait = 60 * time.Second
)

// journalEntry is one /api/v2 request as the client sent it. It is never
// changed once added (but for its links in the budget's list), so readers
// take the ring's pointers under the lock and read the entries outside it.
// header is the request's own map unless it was cut: nothing writes to it
// once the request is answered.
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
	refused    bool // a 401 for its credentials: only its request line and status are kept
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

	// For the budget: what the entry holds, its journal, its neighbours.
	size         int64
	owner        *journal
	older, newer *journalEntry
}

// journalBudget bounds the bytes that the journals of every namespace hold
// together (each ring bounds its count), the oldest entries going first
// whichever namespace holds them. Its lock guards every journal's ring: an
// entry that leaves one leaves the list at once, so the bytes counted are
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

// journal is a ring of the last size entries, within the budget all journals share.
type journal struct {
	budget *journalBudget
	size   int
	// The ring, guarded by budget.mu: count entries from
	// (next-count) mod size, oldest first; the other slots are nil.
	ring    []*journalEntry // grows to size, so that an idle namespace costs little
	next    int             // where the next entry goes
	count   int
	lastSeq uint64 // never reset, so Seq is never reused

	mu sync.Mutex // guards waits; taken before budget.mu, never after
	// waits are the long polls by the route their filter names exactly (""
	// for a pattern or none), then by filter: an entry is checked against
	// the filters of its own route and of "", once each however many wait
	// on it, and wakes only the waiters it brings to their count.
	waits map[string]map[journalFilter]*waiters
	// examined counts the entries checked against a filter, for a test of
	// what long polls cost.
	examined atomic.Uint64
}

// waiters are the long polls that share a filter. matched counts the
// entries the filter matched since the first of them began; each waits for
// it to reach its target.
type waiters struct {
	matched uint64
	queue   []*waiter // in no order: the polls of one filter are few
}

// waiter is one long poll.
type waiter struct {
	filter journalFilter
	target uint64
	queued bool          // in its waiters' queue
	ready  chan struct{} // closed when matched reaches target
}

// Len is how many wait.
func (ws *waiters) Len() int { return len(ws.queue) }

// wake lets go, and drops, the waiters whose target matched reaches: only
// those, so that an entry does not wake the others to look again.
func (ws *waiters) wake() {
	ws.queue = slices.DeleteFunc(ws.queue, func(w *waiter) bool {
		if w.target > ws.matched {
			return false
		}
		w.queued = false
		close(w.ready)
		return true
	})
}

// newJournal returns nil when size is 0: the journal is off.
func newJournal(size int, budget *journalBudget) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{size: size, budget: budget, waits: map[string]map[journalFilter]*waiters{}}
}

// startJournal begins recording an /api/v2 request: its body is captured as
// the handler reads it, and the entry added when the answer is done.
func (s *Server) startJournal(x *exchange, r *http.Request) {
	if x.ns.journal == nil || x.observer || !isAPIPath(r.URL.Path) {
		return
	}
	x.journaled = true
	x.capture = capturedBody{ReadCloser: r.Body, declared: r.ContentLength,
		waitsContinue: waitsContinue(r)}
	if r.Body != http.NoBody { // nothing to capture, and r may be net/http's own (routedRequest)
		r.Body = &x.capture
	}
}

// add records the request r that x answered.
func (j *journal) add(x *exchange, r *http.Request, now time.Time) {
	e := &journalEntry{
		time: x.start.UTC(), requestID: x.requestID, method: r.Method, path: x.apiPath, route: x.route,
		rawQuery: r.URL.RawQuery, host: r.Host, status: x.did, delivered: x.got, faultID: x.faultID,
		durationMs: float64(now.Sub(x.start).Microseconds()) / 1000, owner: j,
	}
	answerBytes := 0
	if x.refused {
		// A stranger may send as many of these as it likes: only what
		// says what was refused is kept, and the entry says what was cut.
		e.refused, e.headersCut, e.respTruncated = true, len(r.Header) > 0, x.kept.header != nil
		e.truncated = r.ContentLength != 0
	} else {
		x.capture.drain()
		e.header, e.headersCut = capHeaders(r.Header)
		e.body, e.truncated = x.capture.buf, x.capture.truncated
		if x.kept.header != nil {
			var cut bool
			// A copy: the answer's map holds values that are arrays in the
			// exchange (X-Request-Id, Content-Length), and through them the
			// exchange, the request and every header it sent stayed alive
			// with the entry (60 KiB of headers counted as 8).
			e.respHeader, cut = capHeaders(x.kept.header.Clone())
			e.respBody, e.respTruncated = x.kept.body, x.kept.truncated || cut
			if x.kept.made {
				// A made answer is counted whole, not as the 16 KiB copy it
				// replaces: its resources stay alive through the entry once the
				// store has let them go (cleared, updated, reset), so the
				// budget must see them.
				e.answer, e.answerMade, answerBytes = x.answer, true, x.kept.madeLen
			}
		}
	}
	// What the entry holds: its slices' capacities, not their lengths.
	e.size = journalEntryOverhead + int64(len(e.requestID)+len(e.path)+len(e.route)+len(e.rawQuery)+len(e.host)+
		cap(e.body)+cap(e.respBody)+answerBytes+headerBytes(e.header)+headerBytes(e.respHeader))
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
			if f.matches(e) {
				ws.matched++
				ws.wake()
				j.forget(f, ws)
			}
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

// headerBytes is roughly what a header map holds: names, values, a string header each.
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
// The values are copied into slices of their own: net/http reads every
// value of a request into one array of strings, and a name's slice of it
// kept that whole array, and so every value the budget cut, alive (60 KiB
// of headers per entry counted as 8).
func capHeaders(h http.Header) (http.Header, bool) {
	if headerBytes(h) <= maxJournalHeaders {
		return h, false
	}
	out := http.Header{}
	room := maxJournalHeaders
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if n := headerBytes(http.Header{name: h[name]}); n <= room {
			out[name], room = slices.Clone(h[name]), room-n
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
	if route := f.route(); ws.Len() == 0 {
		delete(j.waits[route], f)
		if len(j.waits[route]) == 0 {
			delete(j.waits, route)
		}
	}
}

// keptLocked returns the ring's entries, oldest first, to read outside budget.mu.
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
	return slices.DeleteFunc(entries, func(e *journalEntry) bool { return !f.matches(e) })
}

// matching returns the kept entries that q selects, oldest first.
func (j *journal) matching(q journalQuery) []*journalEntry {
	j.budget.mu.Lock()
	kept := j.keptLocked()
	j.budget.mu.Unlock()
	return j.selected(kept, q.journalFilter)
}

// watch returns the kept entries and, begun at the same moment, a waiter
// for q.count entries that q matches among those added after them (found
// lowers the target by those that matched). A count over the journal's size
// can never be met: that waiter is never ready, and is not registered.
func (j *journal) watch(q journalQuery) ([]*journalEntry, *waiter) {
	j.mu.Lock()
	defer j.mu.Unlock()
	w := &waiter{filter: q.journalFilter}
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
	route := w.filter.route()
	if j.waits[route] == nil {
		j.waits[route] = map[journalFilter]*waiters{}
	}
	ws := j.waits[route][w.filter]
	if ws == nil {
		ws = &waiters{}
		j.waits[route][w.filter] = ws
	}
	w.target, w.ready, w.queued = ws.matched+uint64(q.count), make(chan struct{}), true
	ws.queue = append(ws.queue, w)
	return kept, w
}

// found lowers w's target by the n entries that matched when it began.
func (j *journal) found(w *waiter, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !w.queued {
		return
	}
	ws := j.waits[w.filter.route()][w.filter]
	w.target -= uint64(n)
	ws.wake()
	j.forget(w.filter, ws)
}

// unwatch forgets a waiter that stops waiting before it is ready.
func (j *journal) unwatch(w *waiter) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !w.queued {
		return
	}
	ws := j.waits[w.filter.route()][w.filter]
	ws.queue = slices.DeleteFunc(ws.queue, func(o *waiter) bool { return o == w })
	w.queued = false
	j.forget(w.filter, ws)
}

// await returns what q selects as soon as q.count entries match, or what
// matches when q.wait passes, the request ends (gone) or the server stops.
// A waiter woken by the entry that brings it to its count looks again: a
// clear, or the ring's turning, may have taken some of those it counted.
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

// clear drops every entry and says how many there were; nil is a journal off.
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

// isAPIPath reports whether p is on the emulated API, which the journal
// records and faults may target.
func isAPIPath(p string) bool { return strings.HasPrefix(p, "/api/v2/") || p == "/api/v2" }
