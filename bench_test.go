package resourcedir

// Named after no source file: the benchmarks of the store and of HTTP.

// The performance suite of the directory: the store at 10k, 100k and 1M
// resources, HTTP end to end over loopback against a bare net/http baseline,
// heap per resource, and seeding 1M resources over HTTP.
//
// Nothing here asserts a figure: the machine is shared and noisy. Each
// benchmark reports what the targets are stated in (ns/op, req/s,
// ns/resource, heap-bytes/resource, s/seed), and BenchmarkStore and
// BenchmarkHTTP log the ratios the targets are stated in when the
// benchmarks both sides of a ratio ran.
//
// The directories are built lazily, once per size, by the first
// sub-benchmark that needs them: a -bench or -skip pattern that leaves out
// the 1M sub-benchmarks never builds 1M resources, e.g.
//
//	go test -run '^$' -bench . -skip '/1M' .
//	go test -run '^$' -bench 'Store/(10k|100k)/' .
//	go test -run '^$' -bench '^BenchmarkHTTP$' .

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// Directories, built once per size and shared.

type benchSize struct {
	name string
	n    int
}

var benchSizes = []benchSize{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}

// growable returns a store with the directory's resources that creates may
// add to, so that the shared store keeps its size.
func (d *benchDir) growable() *store {
	d.createOnce.Do(func() {
		rows, _ := d.store.all()
		d.createStore = benchCopy(rows)
	})
	return d.createStore
}

func benchParse(b *testing.B, filter string) filterNode {
	n, err := parseFilter(filter, dialectKendo)
	if err != nil {
		b.Fatalf("parseFilter(%q): %v", filter, err)
	}
	return n
}

// benchResults keeps the last ns/op of named benchmarks, for the ratios
// logged at the end of BenchmarkStore and BenchmarkHTTP.
var benchResults sync.Map // string -> float64

func benchRecord(b *testing.B, key string) {
	if b.N > 0 {
		benchResults.Store(key, float64(b.Elapsed().Nanoseconds())/float64(b.N))
	}
}

func benchResult(key string) (float64, bool) {
	v, ok := benchResults.Load(key)
	if !ok {
		return 0, false
	}
	return v.(float64), true
}

// benchLogRatio prints num/den when both ran in this run of b, with the
// target it is held to. It prints to stdout because a parent benchmark's
// log is shown only with -v; the line does not parse as a benchmark result
// or a benchstat configuration line.
func benchLogRatio(b *testing.B, what, num, den, target string) {
	n, ok1 := benchResult(num)
	d, ok2 := benchResult(den)
	if ok1 && ok2 && d > 0 {
		fmt.Printf("# ratio  %-40s %6.2f  (%s)\n", what, n/d, target)
	}
}

// ---------------------------------------------------------------------------
// Store level.

// BenchmarkStore measures the store alone at each size: writes, eq lookups
// on each indexed field, scans, paging and sorting.
func BenchmarkStore(b *testing.B) {
	type op struct {
		name string
		run  func(b *testing.B, d *benchDir)
	}
	eq := func(f field, unique bool) op {
		return op{"eq-" + f.String(), func(b *testing.B, d *benchDir) {
			v, _ := d.target.value(f)
			want := -1
			if unique {
				want = 1
			}
			benchList(b, d, listQuery{Filter: benchParse(b, f.String()+"~eq~"+benchQuote(v)), Page: 1, PageSize: benchPageSize}, want)
		}}
	}
	ops := []op{
		{"create", benchStoreCreate},
		{"update", func(b *testing.B, d *benchDir) { benchStoreUpdate(b, d, false) }},
		{"update-status", func(b *testing.B, d *benchDir) { benchStoreUpdate(b, d, true) }},
		eq(fieldDisplayName, false),
		eq(fieldFirstName, false),
		eq(fieldSurname, false),
		eq(fieldCompany, false),
		eq(fieldExternalID, true),
		eq(fieldEmail, true),
		eq(fieldStatus, false),
		eq(fieldID, true),
		{"and-eq-contains", func(b *testing.B, d *benchDir) {
			// Company eq (about n/1000 candidates) and a contains on them.
			company, _ := d.target.value(fieldCompany)
			first, _ := d.target.value(fieldDisplayName)
			part := string([]rune(first)[:3])
			benchList(b, d, listQuery{
				Filter: benchParse(b, "Company~eq~"+benchQuote(company)+"~and~DisplayName~contains~"+benchQuote(part)),
				Page:   1, PageSize: benchPageSize,
			}, -1)
		}},
		{"contains-all", func(b *testing.B, d *benchDir) {
			// Every resource is scanned; about 3% match.
			benchList(b, d, listQuery{Filter: benchParse(b, "DisplayName~contains~'ann'"), Page: 1, PageSize: benchPageSize}, -1)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d.n), "ns/resource")
		}},
		{"page-last", func(b *testing.B, d *benchDir) {
			// Page 39,999 of 25 at 1M: the second last.
			benchList(b, d, listQuery{Page: d.n/benchPageSize - 1, PageSize: benchPageSize}, d.n)
		}},
		{"page-1", func(b *testing.B, d *benchDir) {
			benchList(b, d, listQuery{Page: 1, PageSize: benchPageSize}, d.n)
		}},
		{"sort-DisplayName", func(b *testing.B, d *benchDir) {
			benchList(b, d, listQuery{Sorts: []sortKey{{Field: fieldDisplayName}}, Page: 1, PageSize: benchPageSize}, d.n)
		}},
	}
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			for _, o := range ops {
				b.Run(o.name, func(b *testing.B) {
					d := benchDirectory(b, size.n)
					b.ReportAllocs()
					b.ResetTimer()
					o.run(b, d)
					benchRecord(b, "Store/"+size.name+"/"+o.name)
				})
			}
		})
	}
	for _, f := range []string{"DisplayName", "FirstName", "Surname", "Company", "ExternalID", "Email", "Status", "Id"} {
		benchLogRatio(b, "eq-"+f+" 1M / 10k", "Store/1M/eq-"+f, "Store/10k/eq-"+f, "target ≤ 2")
	}
	for _, size := range benchSizes {
		benchLogRatio(b, "page-last / page-1 at "+size.name, "Store/"+size.name+"/page-last", "Store/"+size.name+"/page-1", "target ≤ 2")
	}
}

// benchList runs q b.N times and reports the number of matches; want ≥ 0
// checks it.
func benchList(b *testing.B, d *benchDir, q listQuery, want int) {
	b.StopTimer()
	total, page := d.store.list(q)
	if want >= 0 && total != want {
		b.Fatalf("%d matches, want %d", total, want)
	}
	if total > 0 && len(page) == 0 {
		b.Fatalf("%d matches but an empty page", total)
	}
	b.StartTimer()
	for range b.N {
		d.store.list(q)
	}
	b.ReportMetric(float64(total), "matches")
}

// benchStoreCreate creates resources (built beforehand) in a store of the
// directory's size, which grows by b.N.
func benchStoreCreate(b *testing.B, d *benchDir) {
	b.StopTimer()
	s := d.growable()
	templates := benchResources(d.n, d.n+1024)
	b.StartTimer()
	for i := range b.N {
		r := *templates[i%len(templates)]
		if _, err := s.create(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStoreUpdate replaces resources spread over the directory. Even
// iterations change Phone and Surname (so DisplayName, and two indexes), or
// Status with status; odd ones put the original back, so the directory is
// unchanged afterwards.
func benchStoreUpdate(b *testing.B, d *benchDir, status bool) {
	b.StopTimer()
	rows, _ := d.store.all()
	const pool = 1024
	orig := make([]*resource, pool)
	changed := make([]*resource, pool)
	for k := range pool {
		slot := (k*7919 + 13) % d.n
		if rows[slot] == d.target {
			slot = (slot + 1) % d.n
		}
		o := rows[slot]
		c := *o
		if status {
			if o.str(fieldStatus) == statusActive {
				c.set(fieldStatus, statusInactive, true)
			} else {
				c.set(fieldStatus, statusActive, true)
			}
		} else {
			c.set(fieldPhone, fmt.Sprintf("+44 20 8%03d %04d", k%1000, k), true)
			sur := benchSurnames[k%len(benchSurnames)]
			c.set(fieldSurname, sur, true)
			first, _ := c.value(fieldFirstName)
			company, _ := c.value(fieldCompany)
			c.set(fieldDisplayName, joinNonEmpty(strings.TrimSpace(first), sur, strings.TrimSpace(company)), true)
		}
		orig[k], changed[k] = o, &c
	}
	b.StartTimer()
	for i := range b.N {
		r := changed[(i/2)%pool]
		if i%2 == 1 {
			r = orig[(i/2)%pool]
		}
		if _, ok := d.store.update(r); !ok {
			b.Fatal("update: unknown id")
		}
	}
	b.StopTimer()
	if b.N%2 == 1 {
		d.store.update(orig[(b.N/2)%pool])
	}
}

// ---------------------------------------------------------------------------
// HTTP end to end over loopback.

// benchHTTPSize is the size of the directory behind the HTTP benchmarks.
const benchHTTPSize = 100_000

// benchServe serves h on a loopback port until the benchmark ends.
func benchServe(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// benchClient keeps connections alive for every parallel client.
func benchClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// benchDiscard sends one request and discards the response.
func benchDiscard(c *http.Client, method, url string, body []byte) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// benchBare answers every request with body, as writeBody would, after
// reading the request body: the cost of net/http alone.
func benchBare(body []byte) http.Handler {
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // as a handler reading a body
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Length", length)
		w.WriteHeader(http.StatusOK)
		w.Write(body) //nolint:errcheck // the client has gone
	})
}

// benchRequest is one request of a parallel benchmark.
type benchRequest struct {
	method, url string
	body        []byte
}

// benchParallel sends the requests round robin from parallel clients and
// reports req/s.
func benchParallel(b *testing.B, c *http.Client, reqs []benchRequest) {
	var next atomic.Uint64
	var failed atomic.Bool
	b.ReportAllocs()
	b.SetParallelism(2) // 2 × GOMAXPROCS clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		k := int(next.Add(7919))
		for pb.Next() {
			k++
			r := reqs[k%len(reqs)]
			status, err := benchDiscard(c, r.method, r.url, r.body)
			if (err != nil || status != http.StatusOK) && !failed.Swap(true) {
				b.Errorf("%s %s: status %d, error %v", r.method, r.url, status, err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// benchHTTPState is what BenchmarkHTTP's sub-benchmarks share.
type benchHTTPState struct {
	parent  *testing.B // servers and the client live as long as it
	once    sync.Once
	store   *store
	client  *http.Client
	servers map[int]string // journal size to base URL

	lists, creates, updates []benchRequest // paths, bodies; URLs filled per server
	listBody, createBody    []byte         // a real response of each, for the bare handler
	createReq               []byte
}

// BenchmarkHTTP measures list, create and update end to end over loopback
// TCP with keep-alive, beside a bare net/http handler writing a response of
// the same size, run at the same moment on the same machine. The servers
// run with DefaultConfig, journal on. The bare and API sub-benchmarks share
// a client with 2×GOMAXPROCS parallel keep-alive connections.
func BenchmarkHTTP(b *testing.B) {
	st := &benchHTTPState{parent: b, servers: map[int]string{}}
	setup := func(b *testing.B) *benchHTTPState {
		st.once.Do(func() {
			d := benchDirectory(b, benchHTTPSize)
			rows, _ := d.store.all()
			st.store = benchCopy(rows)
			st.client = benchClient(st.parent)
			for k := range 1024 {
				r := rows[(k*7919+101)%len(rows)]
				email, _ := r.value(fieldEmail)
				q := url.Values{}
				q.Set(paramFilters, "Email~eq~"+benchQuote(email))
				q.Set(paramPage, "1")
				q.Set(paramPageSize, strconv.Itoa(benchPageSize))
				st.lists = append(st.lists, benchRequest{method: http.MethodGet, url: "/api/v2/resource?" + q.Encode()})
				st.creates = append(st.creates, benchRequest{method: http.MethodPost, url: "/api/v2/resource", body: benchJSON(10_000_000 + k)})
				r = rows[(k*104729+7)%len(rows)]
				st.updates = append(st.updates, benchRequest{method: http.MethodPut, url: "/api/v2/resource/" + r.id(),
					body: benchPutBody(r, fmt.Sprintf("+44 20 8%03d %04d", k%1000, k))})
			}
			// Real responses, for the bare handlers' sizes.
			base := st.server(b, DefaultConfig().JournalSize)
			var status int
			var err error
			status, st.listBody, err = doJSON(st.client, http.MethodGet, base+st.lists[0].url, nil)
			if err != nil || status != http.StatusOK || !bytes.Contains(st.listBody, []byte(`"TotalResults":1,`)) {
				b.Fatalf("list: %d %v %s", status, err, st.listBody)
			}
			st.createReq = st.creates[0].body
			status, st.createBody, err = doJSON(st.client, http.MethodPost, base+"/api/v2/resource", st.createReq)
			if err != nil || status != http.StatusOK {
				b.Fatalf("create: %d %v %s", status, err, st.createBody)
			}
			b.Logf("list response %d bytes, create request %d bytes, response %d bytes; directory of %d resources",
				len(st.listBody), len(st.createReq), len(st.createBody), benchHTTPSize)
		})
		return st
	}
	withBase := func(base string, reqs []benchRequest) []benchRequest {
		out := slices.Clone(reqs)
		for i := range out {
			out[i].url = base + out[i].url
		}
		return out
	}
	api := func(name string, journal int, reqs func(*benchHTTPState) []benchRequest) {
		b.Run(name, func(b *testing.B) {
			st := setup(b)
			benchParallel(b, st.client, withBase(st.server(b, journal), reqs(st)))
			benchRecord(b, "HTTP/"+name)
		})
	}
	bare := func(name string, method string, reqBody func(*benchHTTPState) []byte, respBody func(*benchHTTPState) []byte) {
		b.Run(name, func(b *testing.B) {
			st := setup(b)
			base := benchServe(b, benchBare(respBody(st)))
			benchParallel(b, st.client, []benchRequest{{method: method, url: base + "/api/v2/resource", body: reqBody(st)}})
			benchRecord(b, "HTTP/"+name)
		})
	}
	// The journal is on, as DefaultConfig has it. JournalSize 0 made no
	// difference beyond noise (3 allocs, ~300 B per request), so there is
	// no variant without it; api(name, 0, reqs) adds one.
	on := DefaultConfig().JournalSize
	lists := func(st *benchHTTPState) []benchRequest { return st.lists }
	creates := func(st *benchHTTPState) []benchRequest { return st.creates }
	updates := func(st *benchHTTPState) []benchRequest { return st.updates }

	bare("bare-list-size", http.MethodGet, func(*benchHTTPState) []byte { return nil }, func(st *benchHTTPState) []byte { return st.listBody })
	api("list-eq", on, lists)
	bare("bare-create-size", http.MethodPost, func(st *benchHTTPState) []byte { return st.createReq }, func(st *benchHTTPState) []byte { return st.createBody })
	api("create", on, creates)
	api("update", on, updates)

	// ns/op ratios are the inverse of the req/s ratios the targets name.
	benchLogRatio(b, "list-eq req/s / bare-list-size req/s", "HTTP/bare-list-size", "HTTP/list-eq", "target ≥ 0.7")
	benchLogRatio(b, "create req/s / bare-create-size req/s", "HTTP/bare-create-size", "HTTP/create", "target ≥ 0.5")
	benchLogRatio(b, "update req/s / bare-create-size req/s", "HTTP/bare-create-size", "HTTP/update", "no target")
}

// server returns the base URL of a server over the shared store with the
// given journal size, starting it on first use.
func (st *benchHTTPState) server(b *testing.B, journal int) string {
	if base, ok := st.servers[journal]; ok {
		return base
	}
	cfg := DefaultConfig()
	cfg.JournalSize = journal
	base := benchServe(st.parent, newServer(cfg, st.store, nil))
	st.servers[journal] = base
	return base
}

// benchPutBody is a full-replacement update of r with a new Phone.
func benchPutBody(r *resource, phone string) []byte {
	b := []byte{'{'}
	for i, p := range editableProps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p.String())
		b = append(b, ':')
		switch {
		case p == propTypes:
			b = append(b, '[')
			for k, t := range r.types {
				if k > 0 {
					b = append(b, ',')
				}
				b = fmt.Appendf(b, `{"Id":%d,"Type":"%s"}`, t, t)
			}
			b = append(b, ']')
		case field(p) == fieldPhone:
			b = appendJSONString(b, phone)
		case r.isNull(field(p)):
			b = append(b, "null"...)
		default:
			b = appendJSONString(b, r.str(field(p)))
		}
	}
	return append(b, '}')
}

// ---------------------------------------------------------------------------
// Memory and seeding.

// BenchmarkHeapPerResource builds a fresh store of n resources, as seeding
// does, and reports the live heap it holds per resource, indexes included.
func BenchmarkHeapPerResource(b *testing.B) {
	for _, size := range benchSizes[1:] {
		b.Run(size.name, func(b *testing.B) {
			b.ReportAllocs()
			var perResource float64
			for range b.N {
				runtime.GC()
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				s := benchNewStore()
				benchFill(s, size.n)
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&after)
				if s.count() != size.n {
					b.Fatalf("%d resources, want %d", s.count(), size.n)
				}
				runtime.KeepAlive(s)
				perResource = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(size.n)
			}
			b.ReportMetric(perResource, "heap-bytes/resource")
		})
	}
}

// BenchmarkSeedHTTP seeds n resources into an empty server through POST
// /__admin/resources in batches of 10,000 over loopback, one batch after
// the other, and reports the seconds the whole seeding takes.
func BenchmarkSeedHTTP(b *testing.B) {
	const batch = 10_000
	for _, size := range benchSizes[1:] {
		b.Run(size.name, func(b *testing.B) {
			bodies := benchSeedBodies(size.n, batch)
			store := benchNewStore()
			base := benchServe(b, newServer(DefaultConfig(), store, nil))
			client := benchClient(b)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				store.resetTo(store.seed)
				runtime.GC()
				b.StartTimer()
				for _, body := range bodies {
					status, err := benchDiscard(client, http.MethodPost, base+"/__admin/resources", body)
					if err != nil || status != http.StatusOK {
						b.Fatalf("seed: status %d, error %v", status, err)
					}
				}
			}
			b.StopTimer()
			if store.count() != size.n {
				b.Fatalf("%d resources after seeding, want %d", store.count(), size.n)
			}
			secs := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(secs, "s/seed")
			b.ReportMetric(float64(size.n)/secs, "resources/s")
		})
	}
}

// ---------------------------------------------------------------------------

// TestBenchGenerator checks, quickly, that the generator gives what the
// benchmarks claim: valid create bodies, deterministic, unique Email and
// ExternalID, about 90% Active, 0–2 types, ~1000 companies.
func TestBenchGenerator(t *testing.T) {
	const n = 5000
	rs := benchResources(0, n)
	again := benchResources(n/2, n/2+10)
	emails, externals, companies := map[string]bool{}, map[string]bool{}, map[string]bool{}
	active := 0
	for i, r := range rs {
		if i >= n/2 && i < n/2+10 && !bytes.Equal(appendResource(nil, r, true), appendResource(nil, again[i-n/2], true)) {
			t.Fatalf("resource %d differs between runs", i)
		}
		email, ok := r.value(fieldEmail)
		if !ok || emails[email] {
			t.Fatalf("resource %d: Email %q missing or repeated", i, email)
		}
		emails[email] = true
		ext, ok := r.value(fieldExternalID)
		if !ok || externals[ext] {
			t.Fatalf("resource %d: ExternalID %q missing or repeated", i, ext)
		}
		externals[ext] = true
		company, _ := r.value(fieldCompany)
		companies[company] = true
		if r.str(fieldStatus) == statusActive {
			active++
		}
		if r.isNull(fieldDisplayName) || r.str(fieldDisplayName) == "" {
			t.Fatalf("resource %d has no DisplayName", i)
		}
		if len(r.types) > 2 {
			t.Fatalf("resource %d has %d types", i, len(r.types))
		}
	}
	if frac := float64(active) / n; frac < 0.87 || frac > 0.93 {
		t.Errorf("%.1f%% Active, want about 90%%", 100*frac)
	}
	if len(companies) < 900 {
		t.Errorf("%d distinct companies in %d resources, want most of %d", len(companies), n, benchNumCompanies)
	}
	all := map[string]bool{}
	for k := range benchNumCompanies {
		all[benchCompany(k)] = true
	}
	if len(all) != 1000 {
		t.Errorf("%d distinct company names, want 1000", len(all))
	}

	// Stored through the API shape: an eq on a unique field finds one.
	s := benchNewStore()
	if err := s.insert(rs); err != nil {
		t.Fatal(err)
	}
	email, _ := rs[1234].value(fieldEmail)
	n2, err := parseFilter("Email~eq~"+benchQuote(email), dialectKendo)
	if err != nil {
		t.Fatal(err)
	}
	if total, _ := s.list(listQuery{Filter: n2, Page: 1, PageSize: 25}); total != 1 {
		t.Errorf("eq on Email %q: %d matches, want 1", email, total)
	}
	// The PUT body benchmarks send is a valid full update.
	if _, err := buildBody(benchPutBody(rs[7], "+44 1"), modeUpdate, rs[7].id()); err != nil {
		t.Errorf("PUT body: %v", err)
	}
}

// benchFill inserts resources 0..n-1 into s in batches, as seeding does.
func benchFill(s *store, n int) {
	const batch = 10_000
	for from := 0; from < n; from += batch {
		if err := s.insert(benchResources(from, min(from+batch, n))); err != nil {
			panic(err)
		}
	}
}

func benchNewStore() *store {
	seed := benchSeed
	return newStore(&seed)
}
