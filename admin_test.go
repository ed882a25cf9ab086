package resourcedir

// Tests of admin.go: health, listing and deleting resources, snapshot and
// reset.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAdminHealthCounts(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "")
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on an admin response")
	}
	if string(r.Body) != `{"Status":"ok","Resources":0}` {
		t.Errorf("health body %s", r.Body)
	}
	e.createPerson("Ada")
	e.createPerson("Grace")
	if n := e.health(); n != 2 {
		t.Errorf("health Resources %d after 2 creates, want 2", n)
	}
	e.seed(`[{"Company":"Acme"}]`)
	if n := e.health(); n != 3 {
		t.Errorf("health Resources %d after a seed of 1, want 3", n)
	}
	e.expect(http.StatusOK, http.MethodHead, "/__admin/health", "")
}

func TestAdminDeleteResources(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	r := e.expect(http.StatusOK, http.MethodDelete, "/__admin/resources", "")
	if string(r.Body) != `{"Deleted":2}` {
		t.Errorf("DELETE body %s", r.Body)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after DELETE, want 0", n)
	}
	all := e.all()
	if all == nil || len(all) != 0 {
		t.Errorf("GET /__admin/resources after DELETE: %v, want []", all)
	}
	r = e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	if string(r.Body) != `{"Data":[],"Total":0}` {
		t.Errorf("empty resources body %s, want no Data", r.Body)
	}
}

func TestAdminMethodNotAllowed(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	tests := []struct {
		path, method, allow string
	}{
		{"/__admin/health", http.MethodPost, "GET, HEAD"},
		{"/__admin/resources", http.MethodPut, "DELETE, GET, HEAD, POST"},
		{"/__admin/requests", http.MethodPost, "DELETE, GET, HEAD"},
		{"/__admin/faults", http.MethodPatch, "DELETE, GET, HEAD, POST"},
		{"/__admin/snapshot", http.MethodGet, "POST"},
		{"/__admin/reset", http.MethodGet, "POST"},
		{"/__admin/reset", http.MethodDelete, "POST"},
	}
	for _, tt := range tests {
		r := e.do(tt.method, tt.path, "")
		if r.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d, want 405", tt.method, tt.path, r.Status)
			continue
		}
		if got := r.Header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.allow)
		}
		if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, tt.method) {
			t.Errorf("%s %s: Message %q does not name the method", tt.method, tt.path, ae.Message)
		}
	}
	e.expect(http.StatusNotFound, http.MethodGet, "/__admin/nope", "").wantError(t, 0, "", anyModelState)
}

func TestAdminSnapshot(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	r := e.expect(http.StatusConflict, http.MethodPost, "/__admin/snapshot", "")
	if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "-snapshot") {
		t.Errorf("409 Message %q should say how snapshots are turned on", ae.Message)
	}

	path := filepath.Join(t.TempDir(), "dir.gob")
	e.srv.snap = newSnapshotter(path, e.srv, slog.New(slog.DiscardHandler))
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	var out struct {
		Path       string
		Resources  int
		Bytes      int64
		DurationMs float64
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "").decode(t, &out)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != path || out.Resources != 2 || out.Bytes != info.Size() || out.Bytes == 0 || out.DurationMs < 0 {
		t.Errorf("snapshot answer %+v; file %d bytes", out, info.Size())
	}
	loaded, err := readSnapshotFile(path)
	if err != nil || len(loaded) != 2 {
		t.Errorf("reading the snapshot back: %d resources, %v", len(loaded), err)
	}

	// A snapshot that cannot be written is a 500 that says why.
	e.srv.snap = newSnapshotter(filepath.Join(t.TempDir(), "missing", "dir.gob"), e.srv, slog.New(slog.DiscardHandler))
	r = e.expect(http.StatusInternalServerError, http.MethodPost, "/__admin/snapshot", "")
	if ae := r.wantError(t, 0, "", anyModelState); !strings.Contains(ae.Message, "snapshot") {
		t.Errorf("500 Message %q", ae.Message)
	}
}

func TestAdminReset(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil)
	e.seed(`[{"Company": "A"}, {"Company": "B"}]`)
	e.createPerson("Ada")
	e.addFault(`{"Path": "/api/v2/resource", "Status": 503}`)
	e.expect(http.StatusServiceUnavailable, http.MethodGet, "/api/v2/resource", "")
	if len(e.journal()) == 0 || len(e.faults()) == 0 {
		t.Fatal("nothing to reset")
	}
	r := e.expect(http.StatusOK, http.MethodPost, "/__admin/reset", "")
	if string(r.Body) != `{"Status":"reset","Resources":0}` {
		t.Errorf("reset body %s", r.Body)
	}
	if n := e.health(); n != 0 {
		t.Errorf("%d resources after reset", n)
	}
	if j := e.journal(); len(j) != 0 {
		t.Errorf("journal after reset: %+v", j)
	}
	if f := e.faults(); len(f) != 0 {
		t.Errorf("faults after reset: %+v", f)
	}
	e.expect(http.StatusOK, http.MethodGet, "/api/v2/resource", "")
}

func TestAdminIDSeedRestartsAfterReset(t *testing.T) {
	t.Parallel()
	seed := uint64(42)
	ids := func(e *testClient) []string {
		var out []string
		for _, r := range e.seed(`[{"Company": "A"}, {"Id": "0b5c1c7e-3d7f-4d5e-9d55-6e2f0f0a1b2c", "Company": "B"}, {"Company": "C"}]`) {
			out = append(out, r.Id)
		}
		out = append(out, e.createPerson("D").Id, e.createPerson("E").Id)
		return out
	}
	a := startServer(t, DefaultConfig(), &seed)
	first := ids(a)
	for _, id := range first {
		if !guidV4.MatchString(id) {
			t.Errorf("Id %q is not a lower-case v4 GUID", id)
		}
	}
	b := startServer(t, DefaultConfig(), &seed)
	if second := ids(b); !slices.Equal(first, second) {
		t.Errorf("same seed, different ids:\n%v\n%v", first, second)
	}
	for _, restart := range []string{"/__admin/reset", "/__admin/resources"} {
		method := http.MethodPost
		if restart == "/__admin/resources" {
			method = http.MethodDelete
		}
		a.expect(http.StatusOK, method, restart, "")
		if again := ids(a); !slices.Equal(first, again) {
			t.Errorf("after %s %s the ids do not restart:\n%v\n%v", method, restart, first, again)
		}
	}
	other := uint64(43)
	if third := ids(startServer(t, DefaultConfig(), &other)); slices.Equal(first, third) {
		t.Errorf("seeds 42 and 43 gave the same ids %v", third)
	}
	if random := ids(startServer(t, DefaultConfig(), nil)); slices.Equal(first, random) {
		t.Errorf("no seed gave the seeded ids %v", random)
	}
}

// TestAdminSeedStrict: a seed item's property that is not a resource's is
// refused with the item, the property and the closest name; what GET
// /__admin/resources writes besides the properties is accepted, in any case.
// The API's create stays lenient.
func TestAdminSeedStrict(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil).checkingEvery()
	const seedInvalid = "The seed is invalid; nothing was seeded."
	const typeRequired = "Type is required; it must be one of Team, Customer, Contractor, Employee, Company."
	tests := []struct {
		name, seed string
		ms         map[string]string // nil: seeded
	}{
		{"a misspelt property", `[{"Company":"A"},{"Company":"B","Frstname":"Ada"}]`,
			map[string]string{"[1].Frstname": "Frstname is not a resource property; did you mean FirstName?"}},
		{"a misspelt property in any case", `[{"Company":"A","SURNMAE":"x"}]`,
			map[string]string{"[0].SURNMAE": "SURNMAE is not a resource property; did you mean Surname?"}},
		{"a property like none", `[{"Company":"A","Colour":"red"}]`,
			map[string]string{"[0].Colour": "Colour is not a resource property; they are Id, DisplayName, FirstName, Surname, Company, Position, Status, ExternalID, Phone, Mobile, Fax, Email, AddressComment, ContractorOrganization, Types, Address, StatusId, _links, _embedded."}},
		{"several, in several items", `[{"Company":"A","Emial":"a@x","Fone":"1"},{"Company":"B"},{"Company":"C","Adress":{}}]`,
			map[string]string{
				"[0].Emial":  "Emial is not a resource property; did you mean Email?",
				"[0].Fone":   "Fone is not a resource property; did you mean Phone?",
				"[2].Adress": "Adress is not a resource property; did you mean Address?",
			}},
		{"beside a fault of the rules", `[{"Frstname":"Ada"}]`,
			map[string]string{
				"[0].Frstname": "Frstname is not a resource property; did you mean FirstName?",
				"[0].Company":  "Company is required when FirstName and Surname are both empty.",
			}},
		{"in a Types entry", `[{"Company":"A","Types":[{"Type":"Team"},{"Tpye":"Team"}]}]`,
			map[string]string{
				"[0].Types[1].Tpye": "Tpye is not a property of a Types entry; did you mean Type?",
				"[0].Types[1].Type": typeRequired,
			}},
		{"in a Types entry beside its Type", `[{"Company":"A"},{"Company":"B","Types":[{"Type":"Team","Name":"x"}]}]`,
			map[string]string{"[1].Types[0].Name": "Name is not a property of a Types entry; they are Id, Type, _links, _embedded."}},
		{"what GET /__admin/resources writes, in any case",
			`[{"company":"A","STATUSID":3,"_Links":[],"_EMBEDDED":null,"Types":[{"id":2,"TYPE":"Team","_links":[{"rel":"self"}],"_embedded":{}}]}]`, nil},
		{"an escaped name of a property", `[{"Comp\u0061ny":"A"}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.on(t).do(http.MethodPost, "/__admin/resources", tt.seed)
			if tt.ms == nil {
				if r.Status != http.StatusOK {
					t.Errorf("status %d, want 200: %s", r.Status, r.Body)
				}
				return
			}
			r.wantError(t, http.StatusBadRequest, seedInvalid, tt.ms)
		})
	}
	if n := e.health(); n != 2 {
		t.Errorf("%d resources, want the 2 of the valid seeds", n)
	}
	// The API reads what it knows and ignores the rest, as the real service does.
	e.expect(http.StatusCreated, http.MethodPost, "/api/v2/resource", `{"Company":"B","Frstname":"Ada","Types":[{"Type":"Team","Name":"x"}]}`)
}

// TestAdminSeedRoundTrip: what GET /__admin/resources answers, its Data
// sent back to POST /__admin/resources of an empty namespace, comes back
// from there byte for byte.
func TestAdminSeedRoundTrip(t *testing.T) {
	t.Parallel()
	e := startServer(t, DefaultConfig(), nil).checkingEvery()
	e.seed(`[
		{"Id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","FirstName":"Ada","Surname":"Lovelace","Status":"inactive",
		 "Types":[{"Type":"employee"},{"Type":"Team"}],"ExternalID":"EXT-1",
		 "Address":{"Street":"12 St James's Sq","n":1.50,"big":12345678901234567890,"z":[true,null,{"b":1,"a":2}]}},
		{"Company":"Analytical Engines","Phone":"","Fax":null,"Email":"a\u00e9\ud83d\ude00@x.example","AddressComment":"<&>\n\t\"q\""},
		{"DisplayName":"  ","FirstName":"Grace","Position":"Rear Admiral","Types":[{"Type":"Customer"},{"Type":"Contractor"},{"Type":"Company"}]}
	]`)
	created, _ := e.create(`{"Company":"Created","Mobile":"+44 7700 900000","Address":{"k":"\ud800"}}`)
	if created == "" {
		t.Fatal("create failed")
	}
	first := e.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	var out struct{ Data json.RawMessage }
	first.decode(t, &out)
	copied := e.in("copy")
	if n := copied.health(); n != 0 {
		t.Fatalf("the namespace starts with %d resources", n)
	}
	copied.expect(http.StatusOK, http.MethodPost, "/__admin/resources", string(out.Data))
	again := copied.expect(http.StatusOK, http.MethodGet, "/__admin/resources", "")
	if !bytes.Equal(first.Body, again.Body) {
		t.Errorf("round trip differs:\n got %s\nwant %s", again.Body, first.Body)
	}
	if !bytes.Contains(first.Body, []byte(`"Address":{"Street":"12 St James's Sq","n":1.50,"big":12345678901234567890,"z":[true,null,{"b":1,"a":2}]}`)) {
		t.Errorf("Address not kept as given: %s", first.Body)
	}
}

// A failed POST /__admin/snapshot keeps the error shape (the contract):
// a 500 whose Message gives the request id and a reason, while the path
// and the operating system's words go to the log only.
func TestSnapshotFailureAnswer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "private-folder")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := serveStart(t, Config{Snapshot: filepath.Join(dir, "directory.gob")})
	accCreate(t, p.url)
	// The folder becomes a file: no snapshot can be written into it,
	// whoever runs the test (root ignores permissions).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}

	status, h, body := accSend(t, p.url, http.MethodPost, "/__admin/snapshot", "", "", "", "")
	if status != http.StatusInternalServerError {
		t.Fatalf("POST /__admin/snapshot into a file: %d %s, want 500", status, body)
	}
	e := checkErrorShape(t, "failed snapshot", h, body)
	id := h.Get("X-Request-Id")
	if !strings.Contains(e.Message, "request id "+id) {
		t.Errorf("Message %q does not give the request id %s", e.Message, id)
	}
	if !strings.Contains(e.Message, "snapshot could not be written") {
		t.Errorf("Message %q does not say what failed", e.Message)
	}
	for _, secret := range []string{dir, "private-folder", "directory.gob", "not a directory", "no such file", "/tmp", "open ", "rename "} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the answer names %q: %s", secret, body)
		}
	}
	// The log has what the answer leaves out, under the same request id.
	// The log writer writes a moment after the answer: poll.
	eventually(t, 10*time.Second, "a log line giving request id "+id+" with the path", func() bool {
		for line := range strings.SplitSeq(p.log.String(), "\n") {
			if strings.Contains(line, id) && strings.Contains(line, "private-folder") {
				return true
			}
		}
		return false
	})
	// The server goes on serving; its final snapshot fails too, and says so.
	if n := accResources(t, p.url); n != 1 {
		t.Errorf("after the failed snapshot the store holds %d resources, want 1", n)
	}
	if err := p.stop(); err == nil || !strings.Contains(err.Error(), "private-folder") {
		t.Errorf("run returned %v, want the failed final snapshot naming its path", err)
	}
}

// A failed POST /__admin/snapshot answered the internal path and the OS's
// error text; the reason says what happened, and the log has the rest.
func TestSnapshotWriteFailureReason(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "write", Path: "/srv/x", Err: syscall.ENOSPC}, "the disk is full"},
		{&os.PathError{Op: "open", Path: "/srv/x", Err: syscall.EDQUOT}, "the disk quota is used up"},
		{&os.PathError{Op: "open", Path: "/srv/x", Err: syscall.EROFS}, "the file system is read-only"},
		{&os.PathError{Op: "open", Path: "/srv/x", Err: syscall.EACCES}, "permission denied"},
		{&os.PathError{Op: "open", Path: "/srv/x", Err: syscall.ENOENT}, "the snapshot's folder no longer exists"},
		{&os.PathError{Op: "write", Path: "/srv/x", Err: syscall.EIO}, "an input/output error"},
		{errSnapInjected, "an input/output error"},
	} {
		if got := writeFailureReason(fmt.Errorf("write /srv/x: %w", tt.err)); got != tt.want {
			t.Errorf("writeFailureReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
