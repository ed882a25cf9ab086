package resourcedir

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The snapshot format as 3738481 (before seed Ids were derived from the
// seed's content) wrote it: version 4, its header with the Count fields of
// versions 2 and 3, and the thirteen string fields of its model. Its
// server gave every seed resource without an Id a random one at each boot.

type oldSnapshotHeader struct {
	Written    time.Time
	Fields     []string
	Bases      []int
	Namespaces []oldSnapshotNamespace
	Count      int
}

type oldSnapshotNamespace struct {
	Name          string
	Base          int
	Replaced, Own int
	Count         int
}

var oldSnapshotFields = []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status",
	"ExternalID", "Phone", "Mobile", "Fax", "Email", "AddressComment"}

// oldRecord is r as 3738481 recorded it, by oldSnapshotFields.
func oldRecord(t *testing.T, r *resource, pos int32) snapshotRecord {
	t.Helper()
	rec := snapshotRecord{Pos: pos, Address: r.address}
	for i, name := range oldSnapshotFields {
		f, ok := lookupField(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		rec.Values = append(rec.Values, r.vals[f])
		if r.null[f] {
			rec.Nulls = append(rec.Nulls, uint8(i))
		}
	}
	for _, ty := range r.types {
		rec.Types = append(rec.Types, uint8(ty))
	}
	return rec
}

// oldSpace is a namespace of an old file: the base it is on (1-based, 0
// none), its changed seed resources and its own.
type oldSpace struct {
	name     string
	base     int
	replaced []replacedResource
	own      []*resource
}

// writeOldSnapshot writes bases and spaces as 3738481 did, one chunk a section.
func writeOldSnapshot(t *testing.T, path string, bases [][]*resource, spaces []oldSpace) {
	t.Helper()
	header := oldSnapshotHeader{Written: time.Now().UTC(), Fields: oldSnapshotFields}
	values := []any{&header}
	section := func(rs []*resource, pos func(i int) int32) {
		if len(rs) == 0 {
			return
		}
		chunk := snapshotRecords{}
		for i, r := range rs {
			chunk.Records = append(chunk.Records, oldRecord(t, r, pos(i)))
		}
		values = append(values, &chunk)
	}
	for _, b := range bases {
		header.Bases = append(header.Bases, len(b))
		section(b, func(int) int32 { return 0 })
	}
	for _, sp := range spaces {
		header.Namespaces = append(header.Namespaces, oldSnapshotNamespace{Name: sp.name, Base: sp.base,
			Replaced: len(sp.replaced), Own: len(sp.own), Count: len(sp.own)})
		rs := make([]*resource, len(sp.replaced))
		for i, rr := range sp.replaced {
			rs[i] = rr.res
		}
		section(rs, func(i int) int32 { return sp.replaced[i].pos })
		section(sp.own, func(int) int32 { return 0 })
	}
	if err := os.WriteFile(path, snapFrame(4, snapGob(t, values...)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// oldSeedCopy is the seed as a 3738481 server froze it: the Ids the seed
// gives, and a random one for every other resource.
func oldSeedCopy(t *testing.T, seed string) []*resource {
	t.Helper()
	rs, err := decodeSeed([]byte(seed))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*resource, len(rs))
	for i, r := range rs {
		c := *r
		if c.isNull(fieldID) || c.id() == "" {
			c.set(fieldID, uuid.NewString(), true)
		}
		out[i] = &c
	}
	return out
}

// edited is r with its Company changed, as a PUT left it.
func edited(r *resource, company string) *resource {
	c := *r
	c.set(fieldCompany, company, true)
	return &c
}

// companyIDs maps each Company a namespace lists to its Id.
func companyIDs(t *testing.T, h http.Handler, prefix string) map[string]string {
	t.Helper()
	rec := serve(h, http.MethodGet, prefix+"/api/v2/resource?requestParams.pageSize=100", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("list %s: %d %s", prefix, rec.Code, rec.Body)
	}
	var list struct {
		ResourceList []struct{ Id, Company string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("list %s: %v", prefix, err)
	}
	ids := map[string]string{}
	for _, r := range list.ResourceList {
		if _, twice := ids[r.Company]; twice {
			t.Errorf("%s lists %s twice", prefix, r.Company)
		}
		ids[r.Company] = r.Id
	}
	return ids
}

// TestSnapshotFromOlderBuildOneSeedID: a snapshot 3738481 wrote, whose
// seed resources have the random Ids that build gave them, loads with the
// same seed given at boot as one seed: every namespace, restored, new or
// reset, shows the snapshot's Ids, the seed is held once, and the log says
// so once, naming the file.
func TestSnapshotFromOlderBuildOneSeedID(t *testing.T) {
	t.Parallel()
	const given = "00000000-0000-4000-8000-00000000a002"
	seed := `[{"Company": "Upgrade Alpha"}, {"Id": "` + given + `", "Company": "Upgrade Beta"}, {"Company": "Upgrade Gamma", "Email": "g@example.org"}]`
	old := oldSeedCopy(t, seed)
	// An older boot of the same build froze the seed again, with other Ids:
	// the namespace made then is on that copy.
	older := oldSeedCopy(t, seed)
	own := func(company string) *resource {
		r := &resource{}
		for f := range numStringFields {
			r.null[f] = true
		}
		r.set(fieldID, uuid.NewString(), true)
		r.set(fieldCompany, company, true)
		r.set(fieldStatus, statusActive, true)
		return r
	}
	path := filepath.Join(t.TempDir(), "old.gob")
	writeOldSnapshot(t, path, [][]*resource{old, older}, []oldSpace{
		{name: "default", base: 1, replaced: []replacedResource{{0, edited(old[0], "Upgrade Alpha edited")}}, own: []*resource{own("Default own")}},
		{name: "before-restart", base: 2, replaced: []replacedResource{{2, edited(older[2], "Upgrade Gamma edited")}}},
		{name: "team", base: 1, own: []*resource{own("Team own")}},
	})

	logs := &syncBuffer{}
	cfg := DefaultConfig()
	cfg.Seed, cfg.Snapshot = seed, path
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check := func(srv *Server, when string) {
		t.Helper()
		want := map[string]string{"Upgrade Alpha": old[0].id(), "Upgrade Beta": given, "Upgrade Gamma": old[2].id()}
		for _, prefix := range []string{"", "/ns/team", "/ns/before-restart", "/ns/new-" + strings.ReplaceAll(when, " ", "-")} {
			ids := companyIDs(t, srv, prefix)
			for company, id := range want {
				got, ok := ids[company]
				if !ok {
					got, ok = ids[company+" edited"]
				}
				if !ok || got != id {
					t.Errorf("%s: namespace %q shows %s as %q, want %s", when, prefix, company, got, id)
				}
			}
		}
		// A seed Id a client stored before the upgrade is the resource's in a new namespace too.
		put := "/ns/put-" + strings.ReplaceAll(when, " ", "-") + "/api/v2/resource/" + old[2].id()
		if rec := serveBody(srv, http.MethodPut, put, `{"Id": "`+old[2].id()+`", "DisplayName": "G", "FirstName": null, "Surname": null, "Company": "Upgrade Gamma",
			"Position": null, "Phone": null, "Mobile": null, "Fax": null, "Email": "g@example.org", "AddressComment": null, "ExternalID": null,
			"Status": "Active", "Types": null}`); rec.Code != http.StatusOK {
			t.Errorf("%s: PUT %s: %d %s", when, put, rec.Code, rec.Body)
		}
		// The restored changes are there, under the Ids a client stored.
		for prefix, body := range map[string]string{"": "Upgrade Alpha edited", "/ns/before-restart": "Upgrade Gamma edited"} {
			if ids := companyIDs(t, srv, prefix); ids[body] == "" {
				t.Errorf("%s: namespace %q lost %s", when, prefix, body)
			}
		}
		if rec := serveBody(srv, http.MethodPost, "/ns/team/__admin/reset", ""); rec.Code != http.StatusOK {
			t.Fatalf("reset: %d %s", rec.Code, rec.Body)
		}
		if ids := companyIDs(t, srv, "/ns/team"); ids["Upgrade Alpha"] != old[0].id() || ids["Upgrade Gamma"] != old[2].id() {
			t.Errorf("%s: team after a reset shows %v, want the snapshot's seed Ids", when, ids)
		}
		var seedList struct{ Data []struct{ Id string } }
		json.Unmarshal(serve(srv, http.MethodGet, "/__admin/seed", nil).Body.Bytes(), &seedList) //nolint:errcheck // checked below
		if len(seedList.Data) != 3 || seedList.Data[0].Id != old[0].id() || seedList.Data[2].Id != old[2].id() {
			t.Errorf("%s: GET /__admin/seed shows %+v, want the snapshot's Ids", when, seedList.Data)
		}
		// The same seed put at run time is the one held, with its Ids.
		var putSeed struct{ Ids []string }
		rec := serveBody(srv, http.MethodPut, "/__admin/seed", seed)
		if err := json.Unmarshal(rec.Body.Bytes(), &putSeed); rec.Code != http.StatusOK || err != nil {
			t.Fatalf("%s: PUT /__admin/seed: %d %s", when, rec.Code, rec.Body)
		}
		if want := []string{old[0].id(), given, old[2].id()}; !slices.Equal(putSeed.Ids, want) {
			t.Errorf("%s: PUT /__admin/seed of the same seed gives the Ids %v, want the snapshot's %v", when, putSeed.Ids, want)
		}
		// One copy of the seed: every namespace is on the current one.
		current := srv.currentSeed()
		for b, names := range srv.pinnedSeeds() {
			if b != current {
				t.Errorf("%s: namespaces %v are on a second copy of the seed", when, names)
			}
		}
		frozenSeedsMu.Lock()
		for _, b := range frozenSeeds {
			for _, e := range b.rows {
				if e.res.vals[fieldCompany] == "Upgrade Gamma" && e.res.id() != old[2].id() {
					t.Errorf("%s: the process still holds a copy of the seed with the Id %s", when, e.res.id())
				}
			}
		}
		frozenSeedsMu.Unlock()
	}
	check(srv, "first boot")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	says := func(boot int) {
		t.Helper()
		var lines []string
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, "older resourcedir") {
				lines = append(lines, line)
			}
		}
		if len(lines) != boot || !strings.Contains(lines[boot-1], "path="+path) || !strings.Contains(lines[boot-1], "before-restart") {
			t.Errorf("after boot %d, the lines on the seed's Ids are %q; want one a boot naming %s and the namespace moved", boot, lines, path)
		}
	}
	says(1)

	// The file is now this build's; the next boot sees the same Ids.
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	check(again, "second boot")
	if n := strings.Count(logs.String(), "older resourcedir"); n != 2 {
		t.Errorf("%d lines on the seed's Ids after two boots, want 2: %s", n, logs)
	}
}

// TestSnapshotAfterUpgradeBeforeTheFix: a file the build before this fix
// wrote after loading an old one holds the seed twice, the restored
// namespaces on the old Ids and the new ones on the derived Ids. The next
// boot makes them one: the default namespace's Ids win, and the log names
// the namespaces moved.
func TestSnapshotAfterUpgradeBeforeTheFix(t *testing.T) {
	t.Parallel()
	seed := `[{"Company": "Twice Alpha"}, {"Company": "Twice Beta", "Phone": "+1 555"}]`
	rs, err := decodeSeed([]byte(seed))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := newBase(rs)
	if err != nil {
		t.Fatal(err)
	}
	derived := &snapshotBase{Resources: []*resource{fresh.rows[0].res, fresh.rows[1].res}}
	old := &snapshotBase{Resources: oldSeedCopy(t, seed)}
	for _, tc := range []struct {
		name         string
		defaultOn    *snapshotBase
		want, movedB string
	}{
		{"the default namespace restored", old, old.Resources[1].id(), "fresh"},
		{"the default namespace reset since", derived, fresh.rows[1].res.id(), "restored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spaces := []snapshotSpace{
				{Name: "default", Base: tc.defaultOn},
				{Name: "fresh", Base: derived, Replaced: []replacedResource{{1, edited(derived.Resources[1], "Twice Beta edited")}}},
				{Name: "restored", Base: old, Replaced: []replacedResource{{1, edited(old.Resources[1], "Twice Beta edited")}}},
			}
			var buf bytes.Buffer
			if err := encodeSnapshot(&buf, spaces, derived); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "twice.gob")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			logs := &syncBuffer{}
			cfg := DefaultConfig()
			cfg.Seed, cfg.Snapshot = seed, path
			cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
			srv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			for _, prefix := range []string{"", "/ns/fresh", "/ns/restored", "/ns/new"} {
				ids := companyIDs(t, srv, prefix)
				got := ids["Twice Beta"] + ids["Twice Beta edited"]
				if got != tc.want {
					t.Errorf("namespace %q shows Twice Beta as %s, want %s", prefix, got, tc.want)
				}
			}
			if n := len(srv.pinnedSeeds()); n != 1 {
				t.Errorf("%d copies of the seed pinned, want 1", n)
			}
			var line string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "older resourcedir") {
					line += l
				}
			}
			if strings.Count(line, "\n") != 1 || !strings.Contains(line, "path="+path) || !strings.Contains(line, "moved="+tc.movedB+"\n") {
				t.Errorf("the log on the seed's Ids: %q; want one line naming %s and moved=%s", line, path, tc.movedB)
			}
		})
	}
}

// TestSnapshotSeedIDsThatCollide: a copy of the seed whose old Id is one
// the seed gives another resource is refused, naming the file, and the
// file is left as it was.
func TestSnapshotSeedIDsThatCollide(t *testing.T) {
	t.Parallel()
	const given = "00000000-0000-4000-8000-00000000c001"
	seed := `[{"Company": "Clash Alpha"}, {"Id": "` + given + `", "Company": "Clash Beta"}]`
	old := oldSeedCopy(t, seed)
	old[0].set(fieldID, given, true)
	path := filepath.Join(t.TempDir(), "clash.gob")
	writeOldSnapshot(t, path, [][]*resource{old}, []oldSpace{{name: "default", base: 1}})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Seed, cfg.Snapshot = seed, path
	srv, err := New(cfg)
	if err == nil {
		srv.Close()
	}
	snapCheckRefusal(t, err, path, given)
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("the refused file was changed")
	}
}
