package resourcedir

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// nsList is GET /__admin/namespaces.
type nsList struct {
	Namespaces []nsEntry
	Total      int
}

func (e *testClient) namespaces() []nsEntry {
	e.t.Helper()
	var out nsList
	if e.getJSON("/__admin/namespaces", &out); out.Total != len(out.Namespaces) {
		e.t.Fatalf("Total %d for %d namespaces", out.Total, len(out.Namespaces))
	}
	return out.Namespaces
}

// TestNamespacesIsolated: 32 clients, each on a namespace of its own, at
// once: each sees only its own resources, requests and faults, and the
// totals add up.
func TestNamespacesIsolated(t *testing.T) {
	t.Parallel()
	e := startServer(t, nsConfig(t), nil)
	const clients, creates = 32, 5
	var wg sync.WaitGroup
	errs := make(chan string, clients*8)
	for c := range clients {
		wg.Go(func() {
			name := fmt.Sprintf("client-%02d", c)
			ns := e.in(name)
			fail := func(format string, args ...any) { errs <- name + ": " + fmt.Sprintf(format, args...) }
			// Faults of one namespace fire only there.
			if r := ns.do(http.MethodPost, "/__admin/faults", `{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Times": 1}`); r.Status != 200 {
				fail("add fault: %d %s", r.Status, r.Body)
				return
			}
			if r := ns.do(http.MethodPost, "/api/v2/resource", `{"Company": "faulted"}`, "Content-Type", "application/json"); r.Status != 503 {
				fail("first create: %d, want the fault's 503", r.Status)
			}
			var ids []string
			for k := range creates {
				r := ns.do(http.MethodPost, "/api/v2/resource", fmt.Sprintf(`{"Company": %q}`, fmt.Sprintf("%s co %d", name, k)), "Content-Type", "application/json")
				var out struct{ Data []seededResource }
				if r.Status != 201 || jsonInto(r.Body, &out) != nil {
					fail("create %d: %d %s", k, r.Status, r.Body)
					return
				}
				ids = append(ids, out.Data[0].Id)
			}
			if r := ns.do(http.MethodPut, "/api/v2/resource/"+ids[0], putBody(ids[0], "DisplayName", name+" renamed"), "Content-Type", "application/json"); r.Status != 200 {
				fail("update: %d %s", r.Status, r.Body)
			}
			var list struct {
				TotalResults int
				ResourceList []seededResource
			}
			r := ns.do(http.MethodGet, "/api/v2/resource?requestParams.pageSize=100", "")
			if r.Status != 200 || jsonInto(r.Body, &list) != nil {
				fail("list: %d", r.Status)
				return
			}
			if list.TotalResults != 2+creates {
				fail("list: %d resources, want %d (seed + own creates)", list.TotalResults, 2+creates)
			}
			for _, res := range list.ResourceList[2:] {
				if !strings.HasPrefix(res.DisplayName, name) {
					fail("sees %q, not its own", res.DisplayName)
				}
			}
			var j struct {
				Requests []wireEntry
				Count    int
			}
			r = ns.do(http.MethodGet, "/__admin/requests", "")
			if r.Status != 200 || jsonInto(r.Body, &j) != nil {
				fail("journal: %d", r.Status)
				return
			}
			// 1 faulted create, 5 creates, 1 update, 1 list.
			if j.Count != 8 || len(j.Requests) != 8 {
				fail("journal holds %d requests, want its own 8", j.Count)
			}
			for _, entry := range j.Requests {
				// Paths as the client's base URL sees them: without /ns/{name}.
				if !strings.HasPrefix(entry.Path, "/api/v2/resource") {
					fail("journal Path %q, want it relative to the namespace", entry.Path)
				}
				if entry.Method == http.MethodPost && entry.Body != nil && !strings.Contains(string(entry.Body), name) && !strings.Contains(string(entry.Body), "faulted") {
					fail("journal shows another client's request %s", entry.Body)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	got := e.namespaces()
	if len(got) != clients+1 {
		t.Fatalf("%d namespaces, want %d", len(got), clients+1)
	}
	total := 0
	for _, ns := range got {
		total += ns.Resources
	}
	if want := 2 + clients*(2+creates); total != want {
		t.Errorf("%d resources over every namespace, want %d", total, want)
	}
	if len(e.journal()) != 0 || len(e.faults()) != 0 {
		t.Errorf("the default namespace saw the others: journal %d, faults %d", len(e.journal()), len(e.faults()))
	}

	// A reset of one namespace leaves the others alone.
	one := e.in("client-00")
	one.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if n := one.health(); n != 2 {
		t.Errorf("client-00 after reset: %d resources, want the seed's 2", n)
	}
	if n := e.in("client-01").health(); n != 2+creates {
		t.Errorf("client-01 after client-00's reset: %d resources, want %d", n, 2+creates)
	}
}

// TestNamespaceLifecycle: created on first use from the seed, listed,
// deleted, limited, and named plainly.
func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	cfg := nsConfig(t)
	cfg.MaxNamespaces = 3
	e := startServer(t, cfg, nil)
	if got := e.namespaces(); !slices.Equal(got, []nsEntry{{"default", 2}}) {
		t.Fatalf("at start: %+v", got)
	}
	a := e.in("a")
	a.createPerson("Only-in-a")
	e.in("b.2_x-Y").touch()
	if got := e.namespaces(); !slices.Equal(got, []nsEntry{{"a", 3}, {"b.2_x-Y", 2}, {"default", 2}}) {
		t.Fatalf("after first use: %+v", got)
	}

	r := e.in("c").expect(http.StatusTooManyRequests, http.MethodGet, "/api/v2/resource", "")
	if !strings.Contains(string(r.Body), "limit of 3 namespaces (-max-namespaces)") {
		t.Errorf("429 does not name the limit: %s", r.Body)
	}
	e.in("a").expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "") // existing ones still serve

	r = e.expect(http.StatusOK, http.MethodDelete, "/__admin/namespaces/a", "")
	if string(r.Body) != `{"Deleted":"a","Resources":3}` {
		t.Errorf("delete answer %s", r.Body)
	}
	e.expect(http.StatusNotFound, http.MethodDelete, "/__admin/namespaces/a", "")
	e.expect(http.StatusBadRequest, http.MethodDelete, "/__admin/namespaces/default", "")
	e.expect(http.StatusBadRequest, http.MethodDelete, "/__admin/namespaces/bad%20name", "")
	if n := e.in("a").health(); n != 2 {
		t.Errorf("a used again after its deletion: %d resources, want a fresh seed of 2", n)
	}

	for _, path := range []string{"/ns/bad%20name/api/v2/resource", "/ns/" + strings.Repeat("x", 65) + "/api/v2/resource", "/ns/%C3%A9/__admin/health"} {
		e.expect(http.StatusBadRequest, http.MethodGet, path, "")
	}
	e.in(strings.Repeat("x", 64)) // the longest name is fine, but the limit is reached
	for _, path := range []string{"/ns/a/__admin/snapshot", "/ns/a/__admin/namespaces", "/ns/a/nothing"} {
		e.expect(http.StatusNotFound, http.MethodGet, path, "")
	}
}

// TestNamespaceIDSeed: with -id-seed every namespace repeats the same
// GUIDs, so a test sees the same ids whichever namespace it got.
func TestNamespaceIDSeed(t *testing.T) {
	t.Parallel()
	seed := uint64(11)
	e := startServer(t, DefaultConfig(), &seed)
	var ids [][]string
	for _, name := range []string{"one", "two"} {
		ns := e.in(name)
		ids = append(ids, []string{ns.createPerson("A").Id, ns.createPerson("B").Id})
	}
	ids = append(ids, []string{e.createPerson("A").Id, e.createPerson("B").Id})
	if !slices.Equal(ids[0], ids[1]) || !slices.Equal(ids[0], ids[2]) {
		t.Errorf("ids differ between namespaces: %v", ids)
	}
}

// TestNamespacesSurviveRestart: the snapshot holds every namespace.
func TestNamespacesSurviveRestart(t *testing.T) {
	t.Parallel()
	snap := filepath.Join(t.TempDir(), "ns.gob")
	p := serveStart(t, Config{Snapshot: snap, SnapshotInterval: time.Hour})
	e := clientAt(t, p.url)
	want := map[string][]string{}
	for i := range 40 {
		name := fmt.Sprintf("ns-%d", i)
		for k := range i % 4 {
			want[name] = append(want[name], e.in(name).createPerson(fmt.Sprintf("P%d", k)).Id)
		}
		if i%4 == 0 {
			e.in(name).touch() // exists, empty
		}
	}
	want["default"] = []string{e.createPerson("D").Id}
	before := e.namespaces()
	p.stopClean()

	p = serveStart(t, Config{Snapshot: snap})
	e = clientAt(t, p.url)
	if after := e.namespaces(); !slices.Equal(before, after) {
		t.Fatalf("namespaces after restart %+v, want %+v", after, before)
	}
	for name, ids := range want {
		var got []string
		for _, r := range e.in(name).all() {
			got = append(got, r.Id)
		}
		if name == "default" {
			got = nil
			for _, r := range e.all() {
				got = append(got, r.Id)
			}
		}
		if !slices.Equal(got, ids) {
			t.Errorf("%s after restart: %v, want %v", name, got, ids)
		}
	}
}

// TestNamespaceRecreatedSurvivesRestart: a namespace removed and made
// again under its name is a change the snapshot sees, however few writes
// each had (a change mark per store once repeated the removed one's, and
// the shutdown wrote nothing: the restart brought the removed data back).
func TestNamespaceRecreatedSurvivesRestart(t *testing.T) {
	t.Parallel()
	snap := filepath.Join(t.TempDir(), "ns.gob")
	p := serveStart(t, Config{Snapshot: snap, SnapshotInterval: time.Hour})
	e := clientAt(t, p.url)
	e.in("x").createPerson("Old")
	e.expect(http.StatusOK, "POST", "/__admin/snapshot", "")
	e.expect(http.StatusOK, "DELETE", "/__admin/namespaces/x", "")
	want := e.in("x").createPerson("New").Id
	p.stopClean()

	p = serveStart(t, Config{Snapshot: snap, SnapshotInterval: time.Hour})
	e = clientAt(t, p.url)
	var got []string
	for _, r := range e.in("x").all() {
		got = append(got, r.Id)
	}
	if !slices.Equal(got, []string{want}) {
		t.Fatalf("/ns/x after restart holds %q, want only the recreated namespace's %q", got, want)
	}

	// A removal alone is a change too.
	e.in("gone").createPerson("Gone")
	e.expect(http.StatusOK, "POST", "/__admin/snapshot", "")
	e.expect(http.StatusOK, "DELETE", "/__admin/namespaces/gone", "")
	p.stopClean()
	p = serveStart(t, Config{Snapshot: snap})
	e = clientAt(t, p.url)
	if names := e.namespaces(); len(names) != 2 || names[0].Name != "default" || names[1].Name != "x" {
		t.Errorf("namespaces after restart %+v, want default and x", names)
	}
}

// BenchmarkNamespaceHeap reports what an idle namespace costs: 1,000
// empty ones, and 1,000 started from a seed of 100 resources.
func BenchmarkNamespaceHeap(b *testing.B) {
	for _, size := range []int{0, 100} {
		b.Run(fmt.Sprintf("seed%d", size), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxNamespaces = 1001 // the default namespace counts too
			if size > 0 {
				cfg.seedResources = benchResources(0, size)
			}
			for b.Loop() {
				srv := newServer(cfg, newStore(nil), nil)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range 1000 {
					if _, _, err := srv.addNamespace(fmt.Sprintf("ns-%d", i), nil); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1000, "B/namespace")
				runtime.KeepAlive(srv)
			}
		})
	}
}

// TestNamespacesShareTheSeed: every namespace starts from one frozen seed
// and holds only its own changes; what a client sees is what a copy of its
// own would show, and the seed's Ids are the same everywhere and after
// every reset.
func TestNamespacesShareTheSeed(t *testing.T) {
	t.Parallel()
	idSeed := uint64(5)
	e := startServer(t, nsConfig(t), &idSeed)
	seedIDs := func(c *testClient) []string {
		var out []string
		for _, r := range c.all() {
			out = append(out, r.Id)
		}
		return out
	}
	want := seedIDs(e)
	if len(want) != 2 || want[0] != "6f9619ff-8b86-4011-b42d-00c04fc964ff" {
		t.Fatalf("default namespace holds %v, want the seed's two with the given Id first", want)
	}
	a, b := e.in("a"), e.in("b")
	for _, c := range []*testClient{a, b} {
		if got := seedIDs(c); !slices.Equal(got, want) {
			t.Fatalf("a new namespace holds %v, want the seed's %v", got, want)
		}
	}
	// A new namespace is an empty layer on the seed the server froze.
	nsA := e.srv.lookupNamespace("a")
	if nsA.store.base != e.srv.seed || nsA.store.own != nil || nsA.store.replaced != nil {
		t.Fatal("a new namespace is not an empty layer on the shared seed")
	}

	// Writes in a stay in a: an update of a seed resource, a create, a seed.
	a.expect(http.StatusOK, http.MethodPut, "/api/v2/resource/"+want[0], putBody(want[0], "FirstName", "Augusta"))
	created := a.createPerson("Grace").Id
	if slices.Contains(want, created) {
		t.Fatalf("a create in a namespace got the seed's Id %s", created)
	}
	seeded := a.seed(`[{"Company": "Extra"}]`)
	check := func(c *testClient, filter string, wantTotal int) {
		t.Helper()
		var out struct{ TotalResults int }
		c.getJSON("/api/v2/resource?requestParams.filters="+url.QueryEscape(filter), &out)
		if out.TotalResults != wantTotal {
			t.Errorf("%s %s: %d results, want %d", c.base, filter, out.TotalResults, wantTotal)
		}
	}
	check(a, "FirstName~eq~'augusta'", 1)
	check(a, "FirstName~eq~'ada'", 0)
	check(b, "FirstName~eq~'ada'", 1)
	check(b, "FirstName~eq~'augusta'", 0)
	check(e, "FirstName~eq~'grace'", 0)
	if got := seedIDs(a); !slices.Equal(got, append(slices.Clone(want), created, seeded[0].Id)) {
		t.Fatalf("namespace a holds %v: the seed in its order, then its own", got)
	}

	// With -id-seed, b's first create gets the Id a's first create got.
	if got := b.createPerson("Grace").Id; got != created {
		t.Errorf("b's first create got %s, a's got %s: -id-seed must repeat the stream in every namespace", got, created)
	}

	// DELETE empties a's view, seed included; POST adds on top of nothing;
	// a reset brings back the seed with the same Ids.
	a.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	if n := a.health(); n != 0 {
		t.Fatalf("%d resources after DELETE /__admin/resources, want 0", n)
	}
	check(a, "FirstName~eq~'ada'", 0)
	a.seed(`[{"Company": "Alone"}]`)
	if n := a.health(); n != 1 {
		t.Fatalf("%d resources after seeding an emptied namespace, want 1", n)
	}
	a.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if got := seedIDs(a); !slices.Equal(got, want) {
		t.Fatalf("after a reset a holds %v, want the seed's %v", got, want)
	}
	check(a, "FirstName~eq~'ada'", 1)
	if nsA.store.own != nil || nsA.store.replaced != nil {
		t.Fatal("a reset left a layer behind")
	}
	if got := a.createPerson("Grace").Id; got != created {
		t.Errorf("after a reset the first create got %s, want %s as the first time", got, created)
	}
}

// TestNamespacesLayeredConcurrently: writers, readers and resets at once on
// namespaces layered on one seed. Every read sees a whole version of each
// resource (its FirstName and Surname are written together), never one
// older than a write already answered, and a namespace never sees another's.
func TestNamespacesLayeredConcurrently(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 200 {
		items = append(items, fmt.Sprintf(`{"FirstName": "v0", "Surname": "v0", "ExternalID": "x%d"}`, i))
	}
	cfg := DefaultConfig()
	seed, err := decodeSeed([]byte("[" + strings.Join(items, ",") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.seedResources = seed
	e := startServer(t, cfg, nil)
	ids := make([]string, 0, 200)
	for _, r := range e.all() {
		ids = append(ids, r.Id)
	}
	const spaces, rounds = 4, 60
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	fail := func(format string, args ...any) {
		select {
		case errs <- fmt.Sprintf(format, args...):
		default:
		}
	}
	for s := range spaces {
		ns := e.in(fmt.Sprintf("layer-%d", s))
		target := ids[s*7] // each namespace writes its own resource of the seed
		// answered is the last version whose PUT was answered; a reset
		// takes the namespace back to v0, so it is taken under resetMu.
		var answered atomic.Int64
		var resetMu sync.RWMutex
		wg.Go(func() { // the writer
			for v := 1; v <= rounds; v++ {
				resetMu.RLock()
				tag := fmt.Sprintf("v%d", v)
				r := ns.do(http.MethodPut, "/api/v2/resource/"+target, putBody(target, "FirstName", tag, "Surname", tag, "ExternalID", "w"))
				if r.Status != http.StatusOK {
					fail("PUT %s: %d %s", tag, r.Status, r.Body)
				}
				answered.Store(int64(v))
				resetMu.RUnlock()
				if v%20 == 0 {
					resetMu.Lock()
					ns.do(http.MethodPost, "/__admin/reset", "")
					answered.Store(0)
					resetMu.Unlock()
				}
			}
		})
		for range 2 { // readers
			wg.Go(func() {
				for range rounds {
					resetMu.RLock()
					floor := answered.Load()
					var out struct {
						ResourceList []struct{ Id, FirstName, Surname string }
					}
					r := ns.do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("Id~eq~'"+target+"'"), "")
					resetMu.RUnlock()
					if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || len(out.ResourceList) != 1 {
						fail("read: %d %s", r.Status, r.Body)
						return
					}
					got := out.ResourceList[0]
					if got.FirstName != got.Surname {
						fail("a half-applied write: FirstName %s, Surname %s", got.FirstName, got.Surname)
					}
					var v int64
					fmt.Sscanf(got.FirstName, "v%d", &v)
					if v < floor {
						fail("read %s after v%d was answered", got.FirstName, floor)
					}
				}
			})
		}
		wg.Go(func() { // a reader of the resources no one writes
			for range rounds {
				var out struct{ TotalResults int }
				r := ns.do(http.MethodGet, "/api/v2/resource?requestParams.filters="+url.QueryEscape("ExternalID~eq~'w'"), "")
				if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.TotalResults > 1 {
					fail("namespace %d sees %d written resources, want its own one at most: %s", s, out.TotalResults, r.Body)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if n := e.health(); n != 200 {
		t.Errorf("the default namespace holds %d, want the seed's 200 untouched", n)
	}
}

// jsonInto decodes body into v, for goroutines that cannot call t.Fatal.
func jsonInto(body []byte, v any) error { return json.Unmarshal(body, v) }

// createdNamespace is the answer of POST /__admin/namespaces.
type createdNamespace struct{ Name, BaseURL string }

// newNamespace posts body to /__admin/namespaces, requires a 201 with the
// JSON content type and exactly Name and BaseURL, and returns them.
func (e *testClient) newNamespace(body string) createdNamespace {
	e.t.Helper()
	r := e.expect(http.StatusCreated, http.MethodPost, "/__admin/namespaces", body)
	if ct := r.Header.Get("Content-Type"); ct != jsonContentType {
		e.t.Errorf("Content-Type %q, want %q", ct, jsonContentType)
	}
	var out createdNamespace
	r.decode(e.t, &out)
	if want := fmt.Sprintf(`{"Name":%q,"BaseURL":%q}`, out.Name, out.BaseURL); string(r.Body) != want {
		e.t.Errorf("body %s, want exactly Name and BaseURL: %s", r.Body, want)
	}
	if want := e.base + "/ns/" + out.Name; out.BaseURL != want {
		e.t.Errorf("BaseURL %q, want %q", out.BaseURL, want)
	}
	return out
}

func TestNamespaceCreateNames(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	long := strings.Repeat("p", maxNamespacePrefix)
	for _, tt := range []struct{ body, name string }{
		{"", `^ns-[0-9a-f]{16}$`},
		{"  \n", `^ns-[0-9a-f]{16}$`},
		{"{}", `^ns-[0-9a-f]{16}$`},
		{`{"Prefix": null}`, `^ns-[0-9a-f]{16}$`},
		{`{"Prefix": "TestCreate"}`, `^TestCreate-[0-9a-f]{16}$`},
		{`{"prefix": "Test.sub_1-x"}`, `^Test\.sub_1-x-[0-9a-f]{16}$`}, // admin properties match in any case
		{"\uFEFF" + `{"Prefix": "bom"}`, `^bom-[0-9a-f]{16}$`},
		{`{"Prefix": "` + long + `"}`, `^` + long + `-[0-9a-f]{16}$`},
	} {
		got := e.on(t).newNamespace(tt.body)
		if !regexp.MustCompile(tt.name).MatchString(got.Name) || len(got.Name) > maxNamespaceName {
			t.Errorf("body %q: name %q, want one matching %s", tt.body, got.Name, tt.name)
		}
	}
	// Every answer above made a namespace of its own.
	if got := len(e.namespaces()); got != 9 {
		t.Errorf("%d namespaces, want default and the 8 created", got)
	}
}

func TestNamespaceCreateRefused(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	tooLong := strings.Repeat("p", maxNamespacePrefix+1)
	notJSON := "The body is a JSON object such as {\"Prefix\": \"TestCreate\"}, or empty."
	for _, tt := range []struct {
		path, body, msg string
		ms              map[string]string
	}{
		{"/__admin/namespaces", `{"Prefx": "a"}`, "The request is invalid.", map[string]string{"Prefx": `Unknown property "Prefx"; did you mean Prefix? A namespace request has Prefix.`}},
		{"/__admin/namespaces", `{"Prefix": "a", "Seed": 1}`, "The request is invalid.", map[string]string{"Seed": `Unknown property "Seed"`}},
		{"/__admin/namespaces", `{"Prefix": "Test/sub"}`, "The request is invalid.", map[string]string{"Prefix": `The Prefix "Test/sub" is not 1 to 47 characters of A-Z a-z 0-9 . _ - (the name adds a dash and 16 more).`}},
		{"/__admin/namespaces", `{"Prefix": ""}`, "The request is invalid.", map[string]string{"Prefix": `The Prefix "" is not 1 to 47`}},
		{"/__admin/namespaces", `{"Prefix": "` + tooLong + `"}`, "The request is invalid.", map[string]string{"Prefix": "is not 1 to 47"}},
		{"/__admin/namespaces", `{"Prefix": 5}`, "The request is invalid.", map[string]string{"Prefix": "Prefix must be a string."}},
		{"/__admin/namespaces", `["a"]`, notJSON, nil},
		{"/__admin/namespaces", `null`, notJSON, nil},
		{"/__admin/namespaces", `{"Prefix": "a"`, notJSON, nil},
		{"/__admin/namespaces?prefix=a", "", "The query string is invalid.", map[string]string{"prefix": `Unknown parameter "prefix"; POST /__admin/namespaces takes none.`}},
	} {
		e.do(http.MethodPost, tt.path, tt.body).wantError(t, http.StatusBadRequest, tt.msg, tt.ms)
	}
	// Server-wide, like the list: not found under a namespace.
	e.do(http.MethodPost, "/ns/a/__admin/namespaces", "").wantError(t, http.StatusNotFound, "No resource matches the path /ns/a/__admin/namespaces.", nil)
	if got := len(e.namespaces()); got != 1 {
		t.Errorf("%d namespaces after refusals, want default alone", got)
	}
}

// A created namespace is like any new one: the seed, a journal and faults
// of its own; it counts toward -max-namespaces and is removed as any other.
func TestNamespaceCreateLifecycle(t *testing.T) {
	t.Parallel()
	cfg := nsConfig(t)
	cfg.MaxNamespaces = 3
	e := startServer(t, cfg, nil)
	e.addFault(`{"Method": "GET", "Path": "/api/v2/resource", "Status": 503}`)
	a, b := e.newNamespace(`{"Prefix": "T"}`), e.newNamespace(`{"Prefix": "T"}`)
	if a.Name == b.Name {
		t.Fatalf("two creates gave the same name %q", a.Name)
	}
	ns := clientAt(t, a.BaseURL)
	var page struct{ TotalResults int }
	ns.getJSON("/api/v2/resource", &page) // the default namespace's fault is not here
	if page.TotalResults != 2 {
		t.Errorf("%d resources in a new namespace, want the seed's 2", page.TotalResults)
	}
	ns.createPerson("Grace")
	if n := ns.health(); n != 3 {
		t.Errorf("%d resources after a create, want 3", n)
	}
	if got := len(ns.journal()); got != 2 {
		t.Errorf("the new namespace's journal holds %d requests, want its own 2", got)
	}
	if got := len(ns.faults()); got != 0 {
		t.Errorf("the new namespace has %d faults, want none", got)
	}
	if n := clientAt(t, b.BaseURL).health(); n != 2 {
		t.Errorf("the other created namespace holds %d resources, want the seed's 2", n)
	}

	e.do(http.MethodPost, "/__admin/namespaces", "").wantError(t, http.StatusTooManyRequests,
		"would be one more than the limit of 3 namespaces (-max-namespaces)", nil)
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/namespaces/"+a.Name, "")
	c := e.newNamespace("")
	want := []nsEntry{{b.Name, 2}, {"default", 2}, {c.Name, 2}}
	slices.SortFunc(want, func(x, y nsEntry) int { return strings.Compare(x.Name, y.Name) })
	if got := e.namespaces(); !slices.Equal(got, want) {
		t.Errorf("namespaces %v, want %v", got, want)
	}
}

// GET /__admin/namespaces says when each namespace was created and last
// used by a client (the console's own requests aside), so that leaked ones
// stand out on a shared server.
func TestNamespaceListTimes(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	type entry struct {
		Name        string
		Resources   int
		Created     time.Time
		LastRequest *time.Time
	}
	list := func() map[string]entry {
		var out struct{ Namespaces []entry }
		if err := json.Unmarshal(e.expect(http.StatusOK, http.MethodGet, "/__admin/namespaces", "").Body, &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]entry{}
		for _, ns := range out.Namespaces {
			m[ns.Name] = ns
		}
		return m
	}
	before := time.Now()
	e.expect(http.StatusCreated, http.MethodPost, "/__admin/namespaces", `{"Prefix": "idle"}`)
	e.in("used").createPerson("Used")
	e.in("watched").touch()
	all := list()
	var idle entry
	for name, ns := range all {
		if strings.HasPrefix(name, "idle-") {
			idle = ns
		}
	}
	// A console's look creates nothing and touches nothing.
	e.expect(http.StatusOK, http.MethodGet, "/ns/watched/api/v2/resource", "", consoleHeader, "1")
	used, watched := all["used"], list()["watched"]
	switch {
	case idle.Name == "" || idle.LastRequest != nil || idle.Created.Before(before.Add(-time.Second)):
		t.Errorf("a namespace nobody used: %+v", idle)
	case used.LastRequest == nil || used.LastRequest.Before(used.Created) || used.Resources != 1:
		t.Errorf("a used namespace: %+v", used)
	case watched.LastRequest == nil || !watched.LastRequest.Equal(*all["watched"].LastRequest):
		t.Errorf("the console's request moved LastRequest: %+v, was %+v", watched, all["watched"])
	}
}

// -namespace-idle removes the namespaces no client touched since the
// cutoff, never default, and not one in use.
func TestNamespaceIdleRemoved(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	e := startServer(t, cfg, nil)
	e.in("old").touch()
	e.in("fresh").touch()
	e.touch()
	// Every namespace is older than a cutoff just after "fresh" is touched
	// again; only "old" has not been touched since.
	cutoff := time.Now()
	for !time.Now().After(cutoff) {
	}
	e.in("fresh").touch()
	e.srv.removeIdleNamespaces(cutoff.Add(time.Nanosecond))
	var names []string
	for _, ns := range e.namespaces() {
		names = append(names, ns.Name)
	}
	if !slices.Equal(names, []string{"default", "fresh"}) {
		t.Errorf("after removing idle ones: %v, want default and fresh", names)
	}

	// The flag's ticker does it by itself, polled with a deadline.
	cfg.NamespaceIdle = 20 * time.Millisecond
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := clientAt(t, ts.URL)
	c.in("leaked").touch()
	eventually(t, 10*time.Second, "the leaked namespace to go", func() bool {
		return len(c.namespaces()) == 1
	})
	if got := c.namespaces(); got[0].Name != "default" {
		t.Errorf("left: %+v", got)
	}
}

// seedIDsIn returns the Ids of the first n resources e serves: with a
// seed, the seed's.
func seedIDsIn(e *testClient, n int) []string {
	e.t.Helper()
	all := e.all()
	if len(all) < n {
		e.t.Fatalf("%d resources served, want at least the seed's %d", len(all), n)
	}
	ids := make([]string, n)
	for i, r := range all[:n] {
		ids[i] = r.Id
	}
	return ids
}

// TestSeedIDsAcrossRestarts: with a seed file that gives no Ids (what
// generate writes) and no -id-seed, every boot gave the seed new Ids: the
// namespaces the snapshot brought back kept the old ones, new namespaces
// and resets got the new ones, and every boot added a copy of the seed to
// memory and to the file. The seed's Ids are now the same at every boot,
// in every namespace and after every reset, and the file holds it once.
func TestSeedIDsAcrossRestarts(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	dir := t.TempDir()
	seedPath := writeTestFile(t, "seed.json", string(genSeed(t, 1000, 1)))
	snap := filepath.Join(dir, "rd.gob")
	var want, names []string
	var first int64
	for boot := range 6 {
		p := startBinary(t, bin, dir, "-seed", seedPath, "-snapshot", snap)
		e := clientAt(t, p.url)
		names = append(names, e.newNamespace("").Name)
		if boot == 0 {
			want = seedIDsIn(e, 1000)
		}
		for _, name := range append([]string{"default"}, names...) {
			if got := seedIDsIn(e.in(name), 1000); !slices.Equal(got, want) {
				t.Fatalf("boot %d: namespace %s serves the seed with other Ids (first %s, want %s)", boot+1, name, got[0], want[0])
			}
		}
		e.in(names[0]).expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
		if got := seedIDsIn(e.in(names[0]), 1000); !slices.Equal(got, want) {
			t.Fatalf("boot %d: after a reset namespace %s serves the seed with other Ids", boot+1, names[0])
		}
		if code := p.stop(syscall.SIGTERM); code != 0 {
			t.Fatalf("boot %d: exit status %d; stderr %s", boot+1, code, p.stderr.String())
		}
		info, err := os.Stat(snap)
		if err != nil {
			t.Fatal(err)
		}
		if boot == 0 {
			first = info.Size()
		} else if info.Size() > first*12/10 {
			t.Fatalf("boot %d: the snapshot is %d bytes, the first boot's %d: the seed is held more than once", boot+1, info.Size(), first)
		}
	}
	// The Ids come from the seed file, not from the snapshot: a run in
	// memory only, with -id-seed or without, gives the same.
	for _, extra := range [][]string{nil, {"-id-seed", "5"}} {
		p := startBinary(t, bin, dir, append([]string{"-seed", seedPath, "-snapshot", "off"}, extra...)...)
		if got := seedIDsIn(clientAt(t, p.url), 1000); !slices.Equal(got, want) {
			t.Errorf("-snapshot off %q: the seed has other Ids (first %s, want %s)", extra, got[0], want[0])
		}
		p.stop(syscall.SIGTERM)
	}
}

// TestOwnIDsNeverSeedIDs: with -id-seed, creations after DELETE
// /__admin/resources got exactly the seed's Ids, and after a reset a PUT
// to an Id the client had been given overwrote a seed resource. A
// namespace's own Ids are never a seed's, and with -id-seed they are the
// same sequence whether the namespace is new, cleared or reset.
func TestOwnIDsNeverSeedIDs(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	dir := t.TempDir()
	seedPath := writeTestFile(t, "seed.json", string(genSeed(t, 50, 1)))
	for _, idSeed := range []string{"7", ""} {
		t.Run("id-seed="+idSeed, func(t *testing.T) {
			p := startBinary(t, bin, dir, "-seed", seedPath, "-snapshot", "off", "-id-seed", idSeed)
			e := clientAt(t, p.url)
			seedIDs := map[string]bool{}
			for _, id := range seedIDsIn(e, 50) {
				seedIDs[id] = true
			}
			creates := func(ns *testClient) []string {
				var ids []string
				for i := range 5 {
					id := ns.createPerson(fmt.Sprint("P", i)).Id
					if seedIDs[id] {
						t.Errorf("a create got the seed's Id %s", id)
					}
					ids = append(ids, id)
				}
				return ids
			}
			fresh := creates(e.in("fresh"))
			cleared := e.in("cleared")
			cleared.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
			afterClear := creates(cleared)
			cleared.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
			for _, id := range afterClear {
				cleared.expect(http.StatusNotFound, http.MethodPut, "/api/v2/resource/"+id, putBody(id, "FirstName", "Overwritten"))
			}
			if n := len(cleared.all()); n != 50 {
				t.Errorf("%d resources after the reset, want the seed's 50", n)
			}
			afterReset := creates(cleared)
			if idSeed != "" && (!slices.Equal(fresh, afterClear) || !slices.Equal(fresh, afterReset)) {
				t.Errorf("with -id-seed a new, a cleared and a reset namespace create other Ids:\n%v\n%v\n%v", fresh, afterClear, afterReset)
			}
			p.stop(syscall.SIGTERM)
		})
	}
}

// TestRestoreBeyondMaxNamespaces: a snapshot with more namespaces than
// -max-namespaces loaded them all without a word; it keeps them all and
// says so at start, and no new one can be made until some are deleted.
func TestRestoreBeyondMaxNamespaces(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	dir := t.TempDir()
	snap := filepath.Join(dir, "rd.gob")
	p := startBinary(t, bin, dir, "-snapshot", snap)
	e := clientAt(t, p.url)
	for _, name := range []string{"a", "b", "c"} {
		e.in(name).createPerson(name)
	}
	p.stop(syscall.SIGTERM)

	p = startBinary(t, bin, dir, "-snapshot", snap, "-max-namespaces", "2")
	e = clientAt(t, p.url)
	if n := len(e.namespaces()); n != 4 {
		t.Errorf("%d namespaces after the restart, want the snapshot's 4", n)
	}
	for _, name := range []string{"a", "b", "c"} {
		if n := e.in(name).health(); n != 1 {
			t.Errorf("namespace %s holds %d resources after the restart, want 1", name, n)
		}
	}
	e.do(http.MethodPost, "/__admin/namespaces", "").wantError(t, http.StatusTooManyRequests, "limit of 2 namespaces", nil)
	p.stop(syscall.SIGTERM)
	warn := regexp.MustCompile(`level=WARN msg="[^"]*-max-namespaces[^"]*" namespaces=4 max=2`)
	if !warn.MatchString(p.stdout.String()) {
		t.Errorf("no warning at start that the snapshot holds more namespaces than -max-namespaces:\n%s", p.stdout.String())
	}
}

func nsConfig(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	seed, err := decodeSeed([]byte(nsSeed))
	if err != nil {
		t.Fatal(err)
	}
	cfg.seedResources = seed
	return cfg
}

type nsEntry struct {
	Name      string
	Resources int
}

const nsSeed = `[{"Id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "FirstName": "Ada", "Surname": "Lovelace"}, {"Company": "Acme"}]`

// A namespace whose request is still being served (a long poll, a hanging
// fault) is not idle, however long ago that request began.
func TestNamespaceIdleSparesRequestsInFlight(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.in("busy").health()
	polled := make(chan response, 1)
	go func() { polled <- e.in("busy").do(http.MethodGet, "/__admin/requests?count=1&wait=30s", "") }()
	eventually(t, 10*time.Second, "the long poll to be served", func() bool {
		ns := e.srv.lookupNamespace("busy")
		return ns != nil && ns.inFlight.Load() == 1
	})
	e.srv.removeIdleNamespaces(time.Now().Add(time.Hour)) // everything is idle by that cutoff
	if e.srv.lookupNamespace("busy") == nil {
		t.Fatal("the namespace of a request in flight was removed")
	}
	e.in("busy").createPerson("Ends the poll")
	if r := <-polled; r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"Count":1`) {
		t.Errorf("the long poll: %d %s", r.Status, r.Body)
	}
	eventually(t, 10*time.Second, "the poll's end to count", func() bool { return e.srv.lookupNamespace("busy").inFlight.Load() == 0 })
	e.srv.removeIdleNamespaces(time.Now().Add(time.Hour))
	if e.srv.lookupNamespace("busy") != nil {
		t.Error("an idle namespace was kept")
	}
}

// TestChangeMarkWaitsOutsideTheNamespaces: the snapshotter's change mark
// waits for a store held by a long write (a large seed) without holding the
// namespaces' lock, so that meanwhile a namespace can still be added and
// every request still find its own. Holding it stalled every namespace for
// as long as one write ran (found in review).
func TestChangeMarkWaitsOutsideTheNamespaces(t *testing.T) {
	t.Parallel()
	srv := startServer(t, DefaultConfig(), nil).srv
	if _, _, err := srv.addNamespace("other", nil); err != nil {
		t.Fatal(err)
	}
	busy := srv.defaultNS().store
	busy.mu.Lock() // a long write in the default namespace
	marked := make(chan uint64)
	go func() { marked <- srv.changeMark() }()
	// Let the change mark take what it takes: a bounded number of yields,
	// ended early once the namespaces' lock is held across the wait.
	for range 1000 {
		if !srv.spaces.mu.TryLock() {
			break
		}
		srv.spaces.mu.Unlock()
		runtime.Gosched()
	}
	added := make(chan error, 1)
	go func() {
		_, _, err := srv.addNamespace("fresh", nil)
		added <- err
	}()
	var err error
	select {
	case err = <-added:
	case <-time.After(10 * time.Second):
		t.Error("adding a namespace waited for a write in another while the change mark was read")
		busy.mu.Unlock()
		err = <-added
		busy.mu.Lock()
	}
	if err != nil {
		t.Error(err)
	}
	if srv.lookupNamespace("other") == nil {
		t.Error("namespace other is gone")
	}
	busy.mu.Unlock()
	<-marked
}
