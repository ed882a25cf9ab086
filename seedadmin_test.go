package resourcedir

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestPutSeed(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil).checkingEvery()
	e.expect(http.StatusCreated, http.MethodPost, "/ns/before/api/v2/resource", `{"Company": "Before"}`)
	e.expect(http.StatusOK, http.MethodGet, "/__admin/seed", "")
	if r := e.do(http.MethodGet, "/__admin/seed", ""); string(r.Body) != `{"Data":[],"Total":0}` {
		t.Errorf("no seed yet: %s", r.Body)
	}
	const body = `[{"Company": "Seed One"}, {"Id": "00000000-0000-4000-8000-000000000002", "FirstName": "Ada", "Surname": "Seed"}]`
	var put struct {
		Total int
		Ids   []string
	}
	e.expect(http.StatusOK, http.MethodPut, "/__admin/seed", body).decode(t, &put)
	if put.Total != 2 || len(put.Ids) != 2 || put.Ids[1] != "00000000-0000-4000-8000-000000000002" || !guidV4.MatchString(put.Ids[0]) {
		t.Fatalf("PUT /__admin/seed: %+v", put)
	}
	// The same content gives the same Ids, and is held once.
	var again struct{ Ids []string }
	e.expect(http.StatusOK, http.MethodPut, "/__admin/seed", body).decode(t, &again)
	if !slices.Equal(again.Ids, put.Ids) {
		t.Errorf("the same seed again: Ids %v, want %v", again.Ids, put.Ids)
	}
	want := fmt.Sprintf(`{"Data":[{"Id":%q,"DisplayName":"Seed One","FirstName":null,"Surname":null,"Company":"Seed One","Position":null,"Status":"Active","StatusId":1,`+
		`"ContractorOrganization":null,"Types":[],"ExternalID":null,"Phone":null,"Mobile":null,"Fax":null,"Email":null,"AddressComment":null,"Address":null},`+
		`{"Id":"00000000-0000-4000-8000-000000000002","DisplayName":"Ada Seed","FirstName":"Ada","Surname":"Seed","Company":null,"Position":null,"Status":"Active","StatusId":1,`+
		`"ContractorOrganization":null,"Types":[],"ExternalID":null,"Phone":null,"Mobile":null,"Fax":null,"Email":null,"AddressComment":null,"Address":null}],"Total":2}`, put.Ids[0])
	if r := e.do(http.MethodGet, "/__admin/seed", ""); r.Status != 200 || string(r.Body) != want {
		t.Errorf("GET /__admin/seed: %d %s\nwant %s", r.Status, r.Body, want)
	}

	// Namespaces that exist keep what they have; new ones start from the seed.
	for _, tt := range []struct {
		ns   string
		want int
	}{{"", 0}, {"before", 1}, {"after", 2}} {
		c := e
		if tt.ns != "" {
			c = e.in(tt.ns)
		}
		if n := c.health(); n != tt.want {
			t.Errorf("%q holds %d, want %d", tt.ns, n, tt.want)
		}
	}
	// A reset goes to the current seed.
	e.expect(http.StatusOK, http.MethodPost, "/ns/before/__admin/reset", "")
	e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	var all struct{ Data []struct{ Id string } }
	e.expect(http.StatusOK, http.MethodGet, "/ns/before/__admin/resources", "").decode(t, &all)
	if len(all.Data) != 2 || all.Data[0].Id != put.Ids[0] || e.health() != 2 {
		t.Errorf("after a reset: %+v and %d in default, want the seed's 2", all, e.health())
	}

	// Server-wide only, and strict.
	for _, tt := range []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{http.MethodPut, "/ns/before/__admin/seed", body, 404, `{"Message":"No resource matches the path /ns/before/__admin/seed."}`},
		{http.MethodGet, "/ns/before/__admin/seed", "", 404, `{"Message":"No resource matches the path /ns/before/__admin/seed."}`},
		{http.MethodDelete, "/__admin/seed", "", 405, `{"Message":"The method DELETE is not allowed on /__admin/seed; allowed: GET, HEAD, PUT."}`},
		{http.MethodGet, "/__admin/seed?all=1", "", 400, `{"Message":"The query string is invalid.","ModelState":{"all":["Unknown parameter \"all\"; GET /__admin/seed takes none."]}}`},
		{http.MethodPut, "/__admin/seed", `[{"Company": "A", "Compnay": "B"}]`, 400, ""},
		{http.MethodPut, "/__admin/seed", `[{"Id": "00000000-0000-4000-8000-000000000009", "Company": "A"}, {"Id": "00000000-0000-4000-8000-000000000009", "Company": "B"}]`, 400,
			`{"Message":"The seed is invalid; nothing was seeded.","ModelState":{"[1].Id":["Id 00000000-0000-4000-8000-000000000009 is also given to item 0."]}}`},
	} {
		r := e.do(tt.method, tt.path, tt.body)
		if r.Status != tt.status || (tt.answer != "" && string(r.Body) != tt.answer) {
			t.Errorf("%s %s: %d %s, want %d %s", tt.method, tt.path, r.Status, r.Body, tt.status, tt.answer)
		}
	}
	if r := e.do(http.MethodGet, "/__admin/seed", ""); string(r.Body) != want {
		t.Errorf("a refused PUT changed the seed: %s", r.Body)
	}
	if _, ok := e.srv.spaces.byName["before"]; !ok {
		t.Error("the namespace went")
	}
}

func TestPutSeedHoldsAtMostEight(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	seed := func(i int) string { return fmt.Sprintf(`[{"Company": "Seed %d"}]`, i) }
	for i := 1; i <= maxHeldSeeds; i++ {
		e.expect(http.StatusOK, http.MethodPut, "/__admin/seed", seed(i))
		e.in(fmt.Sprintf("pin%d", i)).health() // a health probe creates nothing
		e.expect(http.StatusCreated, http.MethodPost, fmt.Sprintf("/ns/pin%d/api/v2/resource", i), `{"Company": "Own"}`)
		e.expect(http.StatusCreated, http.MethodPost, fmt.Sprintf("/ns/pin%dbis/api/v2/resource", i), `{"Company": "Own"}`)
	}
	// A seed held already is no new one.
	e.expect(http.StatusOK, http.MethodPut, "/__admin/seed", seed(3))
	r := e.expect(http.StatusConflict, http.MethodPut, "/__admin/seed", seed(9))
	if want := `{"Message":"8 distinct seeds are held already (the most at once); the oldest is pinned by the namespaces pin1, pin1bis: ` +
		`reset or remove them (POST /ns/{name}/__admin/reset, DELETE /__admin/namespaces/{name}), then put the seed again."}`; string(r.Body) != want {
		t.Errorf("the ninth seed: %s\nwant %s", r.Body, want)
	}
	// Let the oldest go: one reset, one removal.
	e.expect(http.StatusOK, http.MethodPost, "/ns/pin1/__admin/reset", "")
	e.expect(http.StatusOK, http.MethodDelete, "/__admin/namespaces/pin1bis", "")
	e.expect(http.StatusOK, http.MethodPut, "/__admin/seed", seed(9))
	if n := len(e.srv.pinnedSeeds()); n > maxHeldSeeds {
		t.Errorf("%d seeds pinned", n)
	}
	if n := e.in("pin2").health(); n != 2 {
		t.Errorf("pin2 holds %d, want its seed's 1 and its own 1", n)
	}
}

// TestPutSeedSnapshot: the snapshot holds the current seed, also when no
// namespace is on it, and a -seed given at boot wins over it.
func TestPutSeedSnapshot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "seed.gob")
	cfg := DefaultConfig()
	cfg.Snapshot = path
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rec := serveBody(srv, http.MethodPut, "/__admin/seed", `[{"Company": "First"}]`); rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	serveBody(srv, http.MethodPost, "/ns/old/api/v2/resource", `{"Company": "Own"}`)
	if rec := serveBody(srv, http.MethodPut, "/__admin/seed", `[{"Company": "Second"}, {"Company": "Third"}]`); rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	before := serve(srv, http.MethodGet, "/__admin/seed", nil).Body.String()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := serve(again, http.MethodGet, "/__admin/seed", nil).Body.String(); got != before {
		t.Errorf("the current seed after a restart: %s, want %s", got, before)
	}
	for ns, want := range map[string]int{"old": 2, "fresh": 2} {
		var h struct{ Resources int }
		json.Unmarshal(serve(again, http.MethodGet, "/ns/"+ns+"/__admin/health", nil).Body.Bytes(), &h) //nolint:errcheck // checked below
		if h.Resources != want {
			t.Errorf("namespace %s after a restart: %d resources, want %d", ns, h.Resources, want)
		}
	}
	serveBody(again, http.MethodPost, "/ns/old/__admin/reset", "")
	var list struct{ Data []struct{ Company string } }
	json.Unmarshal(serve(again, http.MethodGet, "/ns/old/__admin/resources", nil).Body.Bytes(), &list) //nolint:errcheck // checked below
	if len(list.Data) != 2 || list.Data[0].Company != "Second" {
		t.Errorf("old after a reset: %+v, want the current seed", list.Data)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}

	// A seed given at boot becomes the current one; namespaces keep theirs.
	cfg.Seed = `[{"Company": "Booted"}]`
	booted, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer booted.Close()
	if got := serve(booted, http.MethodGet, "/__admin/seed", nil).Body.String(); !bytes.Contains([]byte(got), []byte(`"Company":"Booted"`)) {
		t.Errorf("with a seed at boot: %s", got)
	}
}

// TestSnapshotVersion4StillLoads: a file of the previous format reads, with
// no current seed.
func TestSnapshotVersion4StillLoads(t *testing.T) {
	t.Parallel()
	rs := snapRealistic(3)
	var buf bytes.Buffer
	b := &snapshotBase{Resources: rs}
	if err := encodeSnapshot(&buf, []snapshotSpace{{Name: "default", Base: b}}, b); err != nil {
		t.Fatal(err)
	}
	v5 := buf.Bytes()
	spaces, current, err := decodeSnapshot(bytes.NewReader(v5), int64(len(v5)))
	if err != nil || len(spaces) != 1 || current != spaces[0].Base {
		t.Fatalf("version 5: %v %+v %p", err, spaces, current)
	}
	body := slices.Clone(v5[:len(v5)-4])
	binary.BigEndian.PutUint32(body[len(snapshotMagic):], 4)
	v4 := binary.BigEndian.AppendUint32(body, crc32.Checksum(body, crcTable))
	spaces, current, err = decodeSnapshot(bytes.NewReader(v4), int64(len(v4)))
	if err != nil || len(spaces) != 1 || len(spaces[0].Base.Resources) != 3 || current != nil {
		t.Fatalf("version 4: %v %+v %v", err, spaces, current)
	}
}

// TestPutSeedWhileNamespacesAreMade: the seed's lock and the namespaces'
// are taken in one order (a PUT takes the seed's, then the namespaces').
func TestPutSeedWhileNamespacesAreMade(t *testing.T) {
	t.Parallel()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			if rec := serveBody(srv, http.MethodPut, "/__admin/seed", fmt.Sprintf(`[{"Company": "S%d"}]`, i%3)); rec.Code != 200 {
				t.Errorf("PUT %d: %d %s", i, rec.Code, rec.Body)
			}
		}
	}()
	for i := range 200 {
		if rec := serve(srv, http.MethodGet, fmt.Sprintf("/ns/n%d/api/v2/resource", i), nil); rec.Code != 200 {
			t.Fatalf("namespace %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	<-done
	if n := len(srv.pinnedSeeds()); n > maxHeldSeeds {
		t.Errorf("%d seeds pinned", n)
	}
}

// TestTransientNamespaceSeedRace: a read that creates nothing (the
// console's, of a namespace that does not exist) reads the current seed
// while PUT /__admin/seed replaces it; under -race this was a data race
// (the read took no lock).
func TestTransientNamespaceSeedRace(t *testing.T) {
	t.Parallel()
	srv := newServer(DefaultConfig(), newStore(nil), nil)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 50 {
			req := httptest.NewRequest(http.MethodPut, "/__admin/seed", strings.NewReader(fmt.Sprintf(`[{"Company": "Seed %d"}]`, i%4)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Errorf("PUT /__admin/seed: %d %s", rec.Code, rec.Body)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 50 {
			req := httptest.NewRequest(http.MethodGet, "/ns/nowhere/__admin/resources", nil)
			req.Header.Set(consoleHeader, "1")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Errorf("a console read of a namespace that does not exist: %d %s", rec.Code, rec.Body)
			}
		}
	}()
	wg.Wait()
	if srv.lookupNamespace("nowhere") != nil {
		t.Error("a console read created the namespace")
	}
}
