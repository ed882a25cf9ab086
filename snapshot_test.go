package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// snapRealisticCache keeps the resources of the last size generated, so that
// a benchmark's runs do not generate them again.
var snapRealisticCache struct {
	sync.Mutex
	n  int
	rs []*Resource
}

func snapRealisticCached(n int) []*Resource {
	snapRealisticCache.Lock()
	defer snapRealisticCache.Unlock()
	if snapRealisticCache.n != n {
		snapRealisticCache.n, snapRealisticCache.rs = 0, nil
		runtime.GC()
		snapRealisticCache.n, snapRealisticCache.rs = n, snapRealistic(n)
	}
	return snapRealisticCache.rs
}

func snapDropRealisticCache() {
	snapRealisticCache.Lock()
	defer snapRealisticCache.Unlock()
	snapRealisticCache.n, snapRealisticCache.rs = 0, nil
	runtime.GC()
}

var snapBenchSizes = []struct {
	name string
	n    int
}{{"100k", 100_000}, {"1M", 1_000_000}}

func BenchmarkSnapshotWrite(b *testing.B) {
	for _, size := range snapBenchSizes {
		b.Run(size.name, func(b *testing.B) {
			rs := snapRealisticCached(size.n)
			path := filepath.Join(b.TempDir(), "bench.gob")
			var bytes int64
			b.ResetTimer()
			for range b.N {
				n, err := writeSnapshotFile(path, rs)
				if err != nil {
					b.Fatal(err)
				}
				bytes = n
			}
			b.StopTimer()
			b.ReportMetric(float64(bytes), "file-bytes")
			b.ReportMetric(float64(size.n)*float64(b.N)/b.Elapsed().Seconds(), "resources/s")
		})
	}
}

func BenchmarkSnapshotLoad(b *testing.B) {
	for _, size := range snapBenchSizes {
		b.Run(size.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.gob")
			bytes, err := writeSnapshotFile(path, snapRealisticCached(size.n))
			if err != nil {
				b.Fatal(err)
			}
			// A server loads at boot with nothing else on its heap.
			snapDropRealisticCache()
			logger := slog.New(slog.DiscardHandler)
			b.ResetTimer()
			for range b.N {
				store := NewStore(nil)
				if err := newSnapshotter(path, storeDir{store}, logger).load(); err != nil {
					b.Fatal(err)
				}
				if store.Len() != size.n {
					b.Fatalf("loaded %d resources, want %d", store.Len(), size.n)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(bytes), "file-bytes")
			b.ReportMetric(float64(size.n)*float64(b.N)/b.Elapsed().Seconds(), "resources/s")
		})
	}
}

// ---- helpers ----

func snapLogger(w io.Writer) *slog.Logger {
	if w == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// snapServe sends one request to h in process.
func snapServe(t testing.TB, h http.Handler, method, target, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// snapCreate creates a resource through the API and returns its Id.
func snapCreate(t *testing.T, h http.Handler, body string) string {
	t.Helper()
	code, resp := snapServe(t, h, http.MethodPost, "/api/v2/resource", body)
	if code != http.StatusOK {
		t.Fatalf("create %s: %d %s", body, code, resp)
	}
	var out struct{ Data []struct{ Id string } }
	if err := json.Unmarshal(resp, &out); err != nil || len(out.Data) != 1 {
		t.Fatalf("create %s: %v in %s", body, err, resp)
	}
	return out.Data[0].Id
}

// snapFrame wraps payload in the file format: magic, version, payload,
// CRC-32C of all that.
func snapFrame(version uint32, payload []byte) []byte {
	b := []byte(snapshotMagic)
	b = binary.BigEndian.AppendUint32(b, version)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// snapGob encodes values as one gob stream.
func snapGob(t *testing.T, values ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func snapEncode(t *testing.T, rs []*Resource) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeSnapshot(&buf, defaultSpace(rs)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snapWire is how the list serves r.
func snapWire(r *Resource) string { return string(appendResource(nil, r, true)) }

// ---- round trip ----

// snapRoundTripStore fills a store through the API with every shape a
// resource can take, updates some, and adds enough to span several chunks.
func snapRoundTripStore(t *testing.T) (*Store, *Server) {
	t.Helper()
	store := NewStore(nil)
	srv := NewServer(kendoConfig(), store, nil)
	full := snapCreate(t, srv, `{"DisplayName":"Ada L.","FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines",
		"Position":"Programmer","Status":"Inactive","ExternalID":"EXT-1","Phone":"+44 1","Mobile":"+44 7","Fax":"+44 2",
		"Email":"Ada@Example.ORG","AddressComment":"Ring twice",
		"Types":[{"Type":"Employee"},{"Type":"customer"},{"Type":"Team"}],
		"Address":{"Street":"12 St James's Square","Lines":["a", "b", null, 1.50, true],"Nested":{"Ünïcode":"✓","Empty":{}}}}`)
	empties := snapCreate(t, srv, `{"DisplayName":"","FirstName":"","Surname":"","Company":"Acme","Position":"",
		"ExternalID":"","Phone":"","Mobile":"","Fax":"","Email":"","AddressComment":"","Types":[],"Address":{}}`)
	snapCreate(t, srv, `{"DisplayName":null,"FirstName":null,"Surname":null,"Company":"Nulls Inc","Position":null,
		"Status":null,"ExternalID":null,"Phone":null,"Mobile":null,"Fax":null,"Email":null,"AddressComment":null,
		"Types":null,"Address":null}`)
	snapCreate(t, srv, `{"Company":"Omitted Ltd","Status":"inactive"}`)
	snapCreate(t, srv, `{"FirstName":"Émile","Surname":"Zola","Email":"ÉMILE@EXAMPLE.FR","Company":"ÇA VA",
		"Position":"Line\u2028sep \"quoted\" \\ back\tTab \u0000 nul <&>","Phone":"   ","Types":[{"Type":"Contractor"}]}`)
	snapCreate(t, srv, `{"FirstName":"GRACE","Surname":"HOPPER","ExternalID":"ABC-DEF","Email":"GRACE@NAVY.MIL","Types":[{"Type":"Company"},{"Type":"Employee"}]}`)
	long := strings.Repeat("Ж", 100)
	snapCreate(t, srv, `{"DisplayName":"`+long+`","Company":"`+long+`","Position":"`+strings.Repeat("x", 5000)+`"}`)

	// Updates: a value becomes null, another "", the Address is kept.
	code, resp := snapServe(t, srv, http.MethodPut, "/api/v2/resource/"+strings.ToUpper(full), `{"Id":"`+full+`",
		"DisplayName":"Ada","FirstName":"Ada","Surname":null,"Company":"","Position":null,"Phone":"","Mobile":null,
		"Fax":null,"Email":"ada@example.org","AddressComment":"","ExternalID":"EXT-1b","Status":"Active",
		"Types":[{"Type":"Company"}],"Address":null}`)
	if code != http.StatusOK {
		t.Fatalf("update: %d %s", code, resp)
	}
	code, resp = snapServe(t, srv, http.MethodPut, "/api/v2/resource/"+empties, `{"Id":"`+empties+`",
		"DisplayName":"","FirstName":"","Surname":"","Company":"Acme","Position":"","Phone":"","Mobile":"",
		"Fax":"","Email":"","AddressComment":"","ExternalID":"","Status":"inactive","Types":null}`)
	if code != http.StatusOK {
		t.Fatalf("update: %d %s", code, resp)
	}
	// Enough resources for several chunks, inserted with their own Ids.
	if err := store.Insert(snapRealistic(2*snapshotChunkSize + 17)); err != nil {
		t.Fatal(err)
	}
	return store, srv
}

func TestSnapshotRoundTrip(t *testing.T) {
	store, srv := snapRoundTripStore(t)
	path := filepath.Join(t.TempDir(), "rd.gob")
	snap := newSnapshotter(path, storeDir{store}, nil)
	snap.log = snapLogger(nil)
	res, err := snap.write()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != path || res.Resources != store.Len() || res.Bytes != info.Size() {
		t.Errorf("write reported %+v; the file is %d bytes and the store holds %d", res, info.Size(), store.Len())
	}

	loaded := NewStore(nil)
	snap2 := newSnapshotter(path, storeDir{loaded}, snapLogger(nil))
	if err := snap2.load(); err != nil {
		t.Fatal(err)
	}
	want, _ := store.All()
	got, _ := loaded.All()
	if len(got) != len(want) {
		t.Fatalf("loaded %d resources, want %d", len(got), len(want))
	}
	for i := range want {
		// Every field, null and "" apart, folds, Types, Address, in creation order.
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("resource %d:\n got %+v\nwant %+v", i, *got[i], *want[i])
		}
		if g, w := snapWire(got[i]), snapWire(want[i]); g != w {
			t.Fatalf("resource %d is served as\n%s\nwant\n%s", i, g, w)
		}
	}
	// The indexes are rebuilt as the original store's.
	gotIDs, gotIndex := loaded.indexContents()
	wantIDs, wantIndex := store.indexContents()
	if !reflect.DeepEqual(gotIDs, wantIDs) {
		t.Error("the Id index differs after a reload")
	}
	for _, f := range indexedFields {
		if !reflect.DeepEqual(gotIndex[f], wantIndex[f]) {
			t.Errorf("the %s index differs after a reload", f)
		}
	}
	// Loading is not a change: nothing to write.
	if wrote, err := snap2.writeIfChanged(); wrote || err != nil {
		t.Errorf("writeIfChanged right after load = %v, %v; want false, nil", wrote, err)
	}

	// Lists and filters answer the same, byte for byte.
	srv2 := NewServer(kendoConfig(), loaded, nil)
	anID := want[len(want)/2].ID()
	queries := []struct {
		query    string
		nonEmpty bool
	}{
		{"", true},
		{"requestParams.page=3&requestParams.pageSize=7", true},
		{"requestParams.pageSize=500&requestParams.page=17", true},
		{"requestParams.filters=Id~eq~'" + strings.ToUpper(anID) + "'", true},
		{"requestParams.filters=DisplayName~eq~'acme'", true},
		{"requestParams.filters=FirstName~eq~'ada'", true},
		{"requestParams.filters=FirstName~eq~'grace'~and~Surname~eq~'Hopper'", true},
		{"requestParams.filters=Email~eq~'émile@example.fr'", true},
		{"requestParams.filters=Email~eq~'ada@example.org'", true},
		{"requestParams.filters=ExternalID~eq~'ext-00000042'", true},
		{"requestParams.filters=ExternalID~eq~'EXT-1'", false},
		{"requestParams.filters=Company~eq~'çA va'", true},
		{"requestParams.filters=Status~eq~'Inactive'&requestParams.pageSize=500", true},
		{"requestParams.filters=StatusId~eq~2", true},
		{"requestParams.filters=Surname~eq~null", true},
		{"requestParams.filters=Surname~isempty", true},
		{"requestParams.filters=Fax~isnullorempty~undefined&requestParams.pageSize=50", true},
		{"requestParams.filters=Position~contains~'quoted'", true},
		{"requestParams.filters=Company~contains~'eng'~or~Email~endswith~'.org'", true},
		{"requestParams.sorts=Surname-desc~FirstName&requestParams.pageSize=100", true},
		{"requestParams.sorts=Email&requestParams.filters=FirstName~eq~'Zoë'", true},
	}
	for _, q := range queries {
		target := "/api/v2/resource?" + strings.ReplaceAll(q.query, " ", "%20")
		c1, b1 := snapServe(t, srv, http.MethodGet, target, "")
		c2, b2 := snapServe(t, srv2, http.MethodGet, target, "")
		if c1 != http.StatusOK {
			t.Errorf("%s: %d %s before the reload", q.query, c1, b1)
			continue
		}
		if c2 != c1 || !bytes.Equal(b1, b2) {
			t.Errorf("%s answers differently after a reload:\n%d %.300s\nwant\n%d %.300s", q.query, c2, b2, c1, b1)
		}
		if q.nonEmpty && bytes.HasPrefix(b1, []byte(`{"TotalResults":0,`)) {
			t.Errorf("%s matches nothing; the comparison proves little", q.query)
		}
	}
}

func TestSnapshotRoundTripEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.gob")
	if _, err := writeSnapshotFile(path, nil); err != nil {
		t.Fatal(err)
	}
	rs, err := readSnapshotFile(path)
	if err != nil || len(rs) != 0 {
		t.Fatalf("readSnapshotFile = %d resources, %v; want 0, nil", len(rs), err)
	}
	store := NewStore(nil)
	store.Insert(snapRealistic(3))
	if err := newSnapshotter(path, storeDir{store}, snapLogger(nil)).load(); err != nil || store.Len() != 0 {
		t.Fatalf("load of an empty snapshot: %d resources, %v", store.Len(), err)
	}
}

// snapEncodeV2 writes format version 2, from before namespaces: a header
// without Namespaces, then the chunks.
func snapEncodeV2(t *testing.T, rs []*Resource) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(struct {
		Count   int
		Written time.Time
	}{len(rs), time.Now()}); err != nil {
		t.Fatal(err)
	}
	var chunk snapshotChunk
	for start := 0; start < len(rs); start += snapshotChunkSize {
		chunk.reset()
		for _, r := range rs[start:min(start+snapshotChunkSize, len(rs))] {
			chunk.append(r)
		}
		if err := enc.Encode(&chunk); err != nil {
			t.Fatal(err)
		}
	}
	return snapFrame(2, buf.Bytes())
}

func TestSnapshotReadsVersion2(t *testing.T) {
	store, _ := snapRoundTripStore(t)
	want, _ := store.All()
	path := filepath.Join(t.TempDir(), "v2.gob")
	if err := os.WriteFile(path, snapEncodeV2(t, want), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshotFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("loaded %d resources, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := snapWire(got[i]), snapWire(want[i]); g != w || got[i].null != want[i].null || got[i].vals != want[i].vals {
			t.Fatalf("resource %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

// ---- corruption ----

func TestSnapshotCorruption(t *testing.T) {
	store, _ := snapRoundTripStore(t)
	rs, _ := store.All()
	rs = rs[:40]
	good := snapEncode(t, rs)
	headerLen := len(snapshotMagic) + 4
	n := len(good)
	flip := func(off int, mask byte) []byte {
		b := slices.Clone(good)
		b[off] ^= mask
		return b
	}
	withVersion := func(v uint32) []byte { return snapFrame(v, good[headerLen:n-4]) }
	header := snapshotHeader{Count: 5, Written: time.Now()}
	var three snapshotChunk
	for _, r := range rs[:3] {
		three.append(r)
	}
	badID := *rs[0]
	badID.set(fieldID, strings.ToUpper(badID.ID()), true)
	var badIDChunk snapshotChunk
	badIDChunk.append(&badID)
	v4Fields := fieldNames[:numStringFields]
	v4Three := snapshotRecords{[]snapshotRecord{recordOf(rs[0], 0), recordOf(rs[1], 0), recordOf(rs[2], 0)}}

	cases := []struct {
		name   string
		data   []byte
		reason string // a regexp the error must match, besides the path
	}{
		{"empty", nil, "empty"},
		{"flipped first magic byte", flip(0, 0xff), "bad magic"},
		{"flipped last magic byte", flip(len(snapshotMagic)-1, 0x01), "bad magic"},
		{"flipped high version byte", flip(len(snapshotMagic), 0x80), fmt.Sprintf("format version %d is newer", snapshotVersion|0x80000000)},
		{"flipped low version byte", flip(headerLen-1, 0x04), fmt.Sprintf("unknown format version %d ", snapshotVersion^0x04)},
		{"flipped first payload byte", flip(headerLen, 0x01), "corrupt or truncated"}, // a record length: checkDeclaredSizes
		{"flipped payload byte 100", flip(headerLen+100, 0x20), "checksum mismatch"},
		{"flipped middle payload byte", flip(n/2, 0x08), "checksum mismatch"},
		{"flipped last payload byte", flip(n-5, 0x40), "checksum mismatch"},
		{"flipped first checksum byte", flip(n-4, 0x01), "checksum mismatch"},
		{"flipped last checksum byte", flip(n-1, 0x80), "checksum mismatch"},
		{"truncated to 1 byte", good[:1], "truncated"},
		{"truncated inside the magic", good[:len(snapshotMagic)/2], "truncated"},
		{"truncated after the magic", good[:len(snapshotMagic)], "truncated"},
		{"truncated inside the version", good[:len(snapshotMagic)+2], "truncated"},
		{"truncated after the version", good[:headerLen], "truncated"},
		{"truncated 4 bytes into the payload", good[:headerLen+4], "truncated"},
		{"truncated 100 bytes into the payload", good[:headerLen+100], "truncated"},
		{"truncated in the middle", good[:n/2], "truncated"},
		{"truncated before the checksum", good[:n-4], "truncated"},
		{"truncated inside the checksum", good[:n-1], "truncated"},
		{"another program's file (PNG)", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 64)...), "not a resourcedir snapshot"},
		{"another program's file (JSON seed)", []byte(`[{"FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines"}]`), "not a resourcedir snapshot"},
		{"another program's file (short text)", []byte("hello\n"), "not a resourcedir snapshot"},
		{"future version", withVersion(snapshotVersion + 1), fmt.Sprintf("format version %d is newer .*upgrade", snapshotVersion+1)},
		{"far future version", withVersion(1 << 20), "format version 1048576 is newer"},
		{"version 0", withVersion(0), "unknown format version 0"},
		{"valid frame, not gob", snapFrame(snapshotVersion, []byte("this is not gob at all")), "the record at byte 25 declares 116 bytes, and 21 remain"},
		{"valid frame, no payload", snapFrame(snapshotVersion, nil), "decode header"},
		{"format 3, fewer resources than the header says", snapFrame(3, snapGob(t, header, &three)), "decode resources after 3 of 5"},
		{"format 3, data after the resources", snapFrame(3, snapGob(t, snapshotHeader{Count: 3}, &three, &three)), "data after the resources"},
		{"format 3, negative count", snapFrame(3, snapGob(t, snapshotHeader{Count: -1})), "bad resource count -1"},
		{"format 3, an upper-case Id", snapFrame(3, snapGob(t, snapshotHeader{Count: 1}, &badIDChunk)), "invalid Id"},
		{"format 3, columns of the wrong length", snapFrame(3, snapGob(t, snapshotHeader{Count: 3}, &snapshotChunk{Count: 3, Text: three.Text, Lens: three.Lens[:20], Nulls: three.Nulls, NTypes: three.NTypes, Types: three.Types, AddressLens: three.AddressLens, Address: three.Address})), "wrong length"},
		{"format 3, an unknown requestor type", snapFrame(3, snapGob(t, snapshotHeader{Count: 3}, &snapshotChunk{Count: 3, Text: three.Text, Lens: three.Lens, Nulls: three.Nulls, NTypes: three.NTypes, Types: append(slices.Clone(three.Types[:len(three.Types)-1]), 3), AddressLens: three.AddressLens, Address: three.Address})), "unknown requestor type id 3"},
		{"format 3, strings where chunks belong", snapFrame(3, snapGob(t, snapshotHeader{Count: 3}, []string{"x"})), "decode resources"},
		{"format 4, negative count", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Bases: []int{-1}})), "bad resource count -1"},
		{"format 4, a count beyond the file", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 1 << 40}}})), "bad resource count 1099511627776"},
		{"format 4, fewer records than the header says", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 5}}}, &v4Three)), "decode resources after 3"},
		{"format 4, more records than the header says", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 2}}}, &v4Three)), "a chunk of 3 resources where 2 remain"},
		{"format 4, data after the resources", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &v4Three, &v4Three)), "data after the resources"},
		{"format 4, values that do not match the fields", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields[:5], Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &v4Three)), "13 values for 5 fields"},
		{"format 4, an upper-case Id", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 1}}}, &snapshotRecords{[]snapshotRecord{recordOf(&badID, 0)}})), "invalid Id"},
		{"format 4, a base that does not exist", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Base: 2}}})), `bad namespace "default"`},
		{"format 4, a bad namespace name", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "a/b"}}})), `bad namespace "a/b"`},
		{"format 4, a replaced resource outside its base", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Bases: []int{1}, Namespaces: []snapshotNamespace{{Name: "default", Base: 1, Replaced: 1}}}, &snapshotRecords{v4Three.Records[:1]}, &snapshotRecords{[]snapshotRecord{recordOf(rs[1], 7)}})), "is not in the seed"},
		{"format 1, which never left development", withVersion(1), "unknown format version 1 "},
	}
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("case%02d.gob", i))
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			_, err := readSnapshotFile(path)
			snapCheckRefusal(t, err, path, c.reason)

			// Through the snapshotter: the store keeps what it had.
			store := NewStore(nil)
			store.Insert(snapRealistic(2))
			err = newSnapshotter(path, storeDir{store}, snapLogger(nil)).load()
			snapCheckRefusal(t, err, path, c.reason)
			if store.Len() != 2 {
				t.Errorf("a refused load left %d resources in the store, want the 2 it had", store.Len())
			}

			got, rerr := os.ReadFile(path)
			info, serr := os.Stat(path)
			if rerr != nil || serr != nil {
				t.Fatal(rerr, serr)
			}
			if !bytes.Equal(got, c.data) || !info.ModTime().Equal(old) {
				t.Errorf("the refused file was modified (%d bytes, mtime %v)", len(got), info.ModTime())
			}
		})
	}

	t.Run("a directory in place of the file", func(t *testing.T) {
		path := filepath.Join(dir, "dir.gob")
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := readSnapshotFile(path)
		snapCheckRefusal(t, err, path, "")
	})
	t.Run("duplicate Ids", func(t *testing.T) {
		path := filepath.Join(dir, "dup.gob")
		data := snapEncode(t, []*Resource{rs[0], rs[1], rs[0]})
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		store := NewStore(nil)
		err := newSnapshotter(path, storeDir{store}, snapLogger(nil)).load()
		snapCheckRefusal(t, err, path, "already in use")
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Error("the refused file was modified")
		}
	})
}

func snapCheckRefusal(t *testing.T, err error, path, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("a bad snapshot was accepted")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("the error does not name the file %s: %v", path, err)
	}
	if reason != "" && !regexp.MustCompile(reason).MatchString(err.Error()) {
		t.Errorf("the error does not say %q: %v", reason, err)
	}
}

// A corrupt snapshot stops the boot, names the file, and is left as it was.
func TestSnapshotCorruptStopsRun(t *testing.T) {
	rs := snapRealistic(10)
	good := snapEncode(t, rs)
	bad := map[string][]byte{
		"flipped":   append(slices.Clone(good[:100]), append([]byte{good[100] ^ 1}, good[101:]...)...),
		"truncated": good[:len(good)/2],
		"empty":     {},
		"future":    snapFrame(snapshotVersion+1, good[len(snapshotMagic)+4:len(good)-4]),
		"foreign":   []byte("#!/bin/sh\necho not a snapshot\n"),
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rd.gob")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stdout, stderr syncBuffer
			err := run(ctx, []string{"-addr", "127.0.0.1:0", "-snapshot", path}, nil, &stdout, &stderr)
			if err == nil {
				t.Fatal("run booted on a bad snapshot")
			}
			if ctx.Err() != nil {
				t.Fatalf("run did not stop the boot but served until the deadline: %v", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("the boot error does not name the file: %v", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
				t.Error("the snapshot was modified")
			}
			if strings.Contains(stdout.String(), "msg=serving") {
				t.Error("the server started listening")
			}
		})
	}
}

// ---- failing writes ----

// snapFailingWriter fails once it has taken limit bytes.
type snapFailingWriter struct {
	w     io.Writer
	limit int
	err   error
}

func (f *snapFailingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

var errSnapInjected = errors.New("injected fault: disk on fire")

func TestSnapshotEncodeWriterFails(t *testing.T) {
	rs := snapRealistic(snapshotChunkSize + 10)
	size := len(snapEncode(t, rs))
	for _, limit := range []int{0, 1, len(snapshotMagic) + 2, 100, 1 << 16, size / 2, size - 4, size - 1} {
		var buf bytes.Buffer
		err := encodeSnapshot(&snapFailingWriter{w: &buf, limit: limit, err: errSnapInjected}, defaultSpace(rs))
		if !errors.Is(err, errSnapInjected) {
			t.Errorf("failing after %d of %d bytes: encodeSnapshot = %v, want the writer's error", limit, size, err)
		}
	}
}

func TestSnapshotWriteFailsMidway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	old := snapRealistic(5)
	if _, err := writeSnapshotFile(path, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	newer := snapRealistic(snapshotChunkSize + 1)
	for _, limit := range []int{0, 1000, 1 << 17} {
		_, err := writeFileAtomic(path, func(w io.Writer) error {
			return encodeSnapshot(&snapFailingWriter{w: w, limit: limit, err: errSnapInjected}, defaultSpace(newer))
		})
		if !errors.Is(err, errSnapInjected) || !strings.Contains(err.Error(), path) {
			t.Errorf("writeFileAtomic = %v; want the injected error, naming %s", err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Fatalf("a failed write after %d bytes changed the old snapshot", limit)
		}
		snapAssertNoTemps(t, dir)
	}
	if rs, err := readSnapshotFile(path); err != nil || len(rs) != len(old) {
		t.Fatalf("the old snapshot no longer loads: %d, %v", len(rs), err)
	}
}

func TestSnapshotWriteFileFaults(t *testing.T) {
	rs := snapRealistic(20)
	t.Run("folder does not exist", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "missing", "rd.gob")
		_, err := writeSnapshotFile(path, rs)
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("writeSnapshotFile = %v; want a not-exist error naming %s", err, path)
		}
		if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the missing folder was created: %v", err)
		}
	})
	t.Run("a directory in place of the file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "rd.gob")
		if err := os.MkdirAll(filepath.Join(path, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := writeSnapshotFile(path, rs)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("writeSnapshotFile over a directory = %v; want an error naming %s", err, path)
		}
		if info, err := os.Stat(filepath.Join(path, "keep")); err != nil || !info.IsDir() {
			t.Errorf("the directory in the way was disturbed: %v", err)
		}
		snapAssertNoTemps(t, dir)
	})
}

// The snapshotter reports a failed write, keeps the store marked as changed,
// and writes at its next attempt once the fault is gone.
func TestSnapshotWriteIfChangedRetries(t *testing.T) {
	dir := t.TempDir()
	store := NewStore(nil)
	store.Insert(snapRealistic(30))

	t.Run("folder missing", func(t *testing.T) {
		path := filepath.Join(dir, "later", "rd.gob")
		snap := newSnapshotter(path, storeDir{store}, snapLogger(nil))
		for range 2 {
			wrote, err := snap.writeIfChanged()
			if wrote || err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("writeIfChanged with no folder = %v, %v; want false and an error naming %s", wrote, err, path)
			}
		}
		if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if wrote, err := snap.writeIfChanged(); !wrote || err != nil {
			t.Fatalf("writeIfChanged once the folder exists = %v, %v; want true, nil", wrote, err)
		}
		if wrote, err := snap.writeIfChanged(); wrote || err != nil {
			t.Fatalf("writeIfChanged with nothing new = %v, %v; want false, nil", wrote, err)
		}
		if rs, err := readSnapshotFile(path); err != nil || len(rs) != 30 {
			t.Fatalf("the retried snapshot: %d resources, %v", len(rs), err)
		}
		snapAssertNoTemps(t, filepath.Dir(path))
	})

	t.Run("directory in the way, with the run loop", func(t *testing.T) {
		path := filepath.Join(dir, "blocked.gob")
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		snap := newSnapshotter(path, storeDir{store}, snapLogger(&logs))
		runLoop := func() (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); snap.run(ctx, 5*time.Millisecond) }()
			return func() { cancel(); <-done }
		}

		stop := runLoop()
		eventually(t, 10*time.Second, "the run loop to report two failed writes", func() bool {
			return strings.Count(logs.String(), "snapshot failed") >= 2
		})
		stop()
		snapAssertNoTemps(t, dir)

		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		stop = runLoop()
		eventually(t, 10*time.Second, "the run loop to write once the fault is gone", func() bool {
			rs, err := readSnapshotFile(path)
			return err == nil && len(rs) == 30
		})
		stop()
		snapAssertNoTemps(t, dir)
	})
}

func TestSnapshotLoadRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	if _, err := writeSnapshotFile(path, snapRealistic(3)); err != nil {
		t.Fatal(err)
	}
	stale := []string{".rd.gob.tmp-123", ".rd.gob.tmp-999999"}
	kept := []string{"rd.gob.tmp-1", ".other.gob.tmp-1", ".rd.gob.tmpx", "notes.txt"}
	for _, name := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("half a snapshot"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := newSnapshotter(path, storeDir{NewStore(nil)}, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the stale temporary file %s is still there (%v)", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	// A refused snapshot leaves the folder as it is.
	os.WriteFile(filepath.Join(dir, stale[0]), nil, 0o600)
	os.WriteFile(path, []byte("garbage"), 0o600)
	if err := newSnapshotter(path, storeDir{NewStore(nil)}, snapLogger(nil)).load(); err == nil {
		t.Fatal("garbage loaded")
	}
	if _, err := os.Stat(filepath.Join(dir, stale[0])); err != nil {
		t.Errorf("a refused load removed files: %v", err)
	}
}

// ---- the built binary: crashes, graceful stop, exit status ----

// snapAck is what a writer knows of one resource: the revisions it sent in
// Position, and the last one that was acknowledged.
type snapAck struct {
	id      string
	sent    []int
	acked   int // index into sent; -1 before the create is acknowledged
	created bool
}

// snapWriters runs n goroutines that create resources and update their
// own over HTTP until ctx is done or the server goes away.
type snapWriters struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	acks   []*snapAck
	ok     atomic.Int64
	failed atomic.Int64
}

func snapStartWriters(ctx context.Context, base string, n int, tag string) *snapWriters {
	w := &snapWriters{}
	for g := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			base := base
			if g%2 == 1 { // half the writers in namespaces of their own, which the snapshot must keep too
				base += fmt.Sprintf("/ns/writer-%d", g)
			}
			var mine []*snapAck
			rng := rand.New(rand.NewPCG(uint64(g), uint64(len(tag))))
			for i := 0; ctx.Err() == nil; i++ {
				if len(mine) == 0 || rng.IntN(3) == 0 {
					a := &snapAck{sent: []int{0}, acked: -1}
					body := fmt.Sprintf(`{"FirstName":"Writer %d","Surname":"%s","ExternalID":"%s-%d-%d","Position":"rev 0","Types":[{"Type":"Employee"}],"Address":{"N":%d}}`, g, tag, tag, g, i, i)
					code, resp, err := doJSON(client, http.MethodPost, base+"/api/v2/resource", []byte(body))
					if err != nil || code != http.StatusOK {
						w.failed.Add(1)
						return
					}
					var out struct{ Data []struct{ Id string } }
					if json.Unmarshal(resp, &out) != nil || len(out.Data) != 1 {
						w.failed.Add(1)
						return
					}
					a.id, a.acked, a.created = out.Data[0].Id, 0, true
					w.ok.Add(1)
					mine = append(mine, a)
					w.mu.Lock()
					w.acks = append(w.acks, a)
					w.mu.Unlock()
					continue
				}
				a := mine[rng.IntN(len(mine))]
				w.mu.Lock()
				rev := a.sent[len(a.sent)-1] + 1
				a.sent = append(a.sent, rev)
				w.mu.Unlock()
				body := fmt.Sprintf(`{"Id":"%s","DisplayName":null,"FirstName":"Writer %d","Surname":"%s","Company":null,"Position":"rev %d","Phone":"%d","Mobile":null,"Fax":"","Email":null,"AddressComment":null,"ExternalID":"%s-%d-u%d","Status":"Active","Types":[{"Type":"Team"}]}`,
					a.id, g, tag, rev, i, tag, g, i)
				code, _, err := doJSON(client, http.MethodPut, base+"/api/v2/resource/"+a.id, []byte(body))
				if err != nil || code != http.StatusOK {
					w.failed.Add(1)
					return
				}
				w.mu.Lock()
				a.acked = len(a.sent) - 1
				w.mu.Unlock()
				w.ok.Add(1)
			}
		}()
	}
	return w
}

var snapLoggedWrite = regexp.MustCompile(`msg="snapshot written".* resources=(\d+)`)

// lastLoggedSnapshot is the resource count of the last snapshot the
// process reported written, -1 if none.
func (p *binaryProc) lastLoggedSnapshot() int {
	m := snapLoggedWrite.FindAllStringSubmatch(p.stdout.String(), -1)
	if len(m) == 0 {
		return -1
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// snapCheckServes checks that p serves exactly the resources of the
// snapshot at path, in order, with identical JSON.
func snapCheckServes(t *testing.T, p *binaryProc, path string) {
	t.Helper()
	spaces, err := readSnapshot(path)
	if err != nil {
		t.Fatalf("the snapshot does not load: %v", err)
	}
	for _, sp := range spaces {
		prefix := ""
		if sp.Name != defaultNamespace {
			prefix = "/ns/" + sp.Name
		}
		served := p.listIn(t, prefix)
		resources := sp.resources()
		if len(served) != len(resources) {
			t.Fatalf("after reboot %d resources are served in namespace %s; the snapshot holds %d", len(served), sp.Name, len(resources))
		}
		for i, r := range resources {
			if w := snapWire(r); string(served[i]) != w {
				t.Fatalf("after reboot resource %d of namespace %s is served as\n%s\nthe snapshot has\n%s", i, sp.Name, served[i], w)
			}
		}
	}
}

// TestSnapshotBinary builds the command once and runs it as a process:
// killed, stopped by signals, and with its snapshot folder removed.
func TestSnapshotBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := builtBinary(t)
	t.Run("CrashSafety", func(t *testing.T) { snapTestCrashSafety(t, bin) })
	t.Run("GracefulStop", func(t *testing.T) { snapTestGracefulStop(t, bin) })
	t.Run("FailedFinalWriteExitStatus", func(t *testing.T) { snapTestFailedFinalWrite(t, bin) })
}

// SIGKILL at varied moments under concurrent writes: the next boot always
// succeeds and serves the last completed snapshot exactly, and the
// snapshot only grows from round to round.
func snapTestCrashSafety(t *testing.T, bin string) {
	start := time.Now()
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	args := []string{"-snapshot", path, "-snapshot-interval", "50ms"}

	// A directory big enough that every write takes a while, so that kills
	// land in the middle of writes too.
	prev := map[string]bool{}
	seed := snapRealistic(5_000)
	if _, err := writeSnapshotFile(path, seed); err != nil {
		t.Fatal(err)
	}
	for _, r := range seed {
		prev[r.ID()] = true
	}
	killDelays := []time.Duration{0, 20 * time.Millisecond, 55 * time.Millisecond, 90 * time.Millisecond,
		130 * time.Millisecond, 210 * time.Millisecond, 333 * time.Millisecond, 500 * time.Millisecond}
	loggedRounds, tempsSeen := 0, 0
	for round, delay := range killDelays {
		p := startBinary(t, bin, dir, args...)
		if len(prev) > 0 {
			snapCheckServes(t, p, path)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := snapStartWriters(ctx, p.url, 4, fmt.Sprintf("r%d", round))
		// Let some writes land (round 0 is killed before the first snapshot
		// is due), then kill at this round's moment.
		if round > 0 {
			eventually(t, 10*time.Second, "writes to succeed", func() bool { return w.ok.Load() >= 20 })
		}
		time.Sleep(delay)
		p.stop(syscall.SIGKILL)
		cancel()
		w.wg.Wait()
		tempsSeen += len(snapTemps(t, dir))

		logged := p.lastLoggedSnapshot()
		rs, err := readSnapshotFile(path)
		if errors.Is(err, os.ErrNotExist) && len(prev) == 0 && logged < 0 {
			t.Logf("round %d: killed after %v before the first snapshot (%d writes acknowledged)", round, delay, w.ok.Load())
			continue
		}
		if err != nil {
			t.Fatalf("round %d: after SIGKILL the snapshot does not load: %v", round, err)
		}
		if logged >= 0 {
			loggedRounds++
		}
		if len(rs) < logged {
			t.Errorf("round %d: the snapshot holds %d resources; the last snapshot reported written held %d", round, len(rs), logged)
		}
		ids := make(map[string]bool, len(rs))
		for _, r := range rs {
			ids[r.ID()] = true
		}
		for id := range prev {
			if !ids[id] {
				t.Fatalf("round %d: resource %s of the previous round's snapshot is gone", round, id)
			}
		}
		t.Logf("round %d: killed after %v; %d writes acknowledged; snapshot holds %d (last logged %d)",
			round, delay, w.ok.Load(), len(rs), logged)
		prev = ids
	}
	if loggedRounds == 0 {
		t.Error("no round saw a snapshot written; the test proved nothing")
	}

	// A last boot, then a clean stop: the snapshot is served, the exit is
	// clean and no temporary file is left behind.
	p := startBinary(t, bin, dir, args...)
	snapCheckServes(t, p, path)
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0; stderr: %s", code, p.stderr.String())
	}
	snapAssertNoTemps(t, dir)
	t.Logf("%d kills left a temporary file (killed mid-write), cleaned at the next boot; %v in all", tempsSeen, time.Since(start))
}

// SIGTERM in the middle of a burst of writes: the process exits 0 and
// every acknowledged write is there after a restart.
func snapTestGracefulStop(t *testing.T, bin string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	// An interval longer than the test: only the final write saves the burst.
	args := []string{"-snapshot", path, "-snapshot-interval", "1h"}
	p := startBinary(t, bin, dir, args...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := snapStartWriters(ctx, p.url, 8, "burst")
	eventually(t, 10*time.Second, "a burst of writes", func() bool { return w.ok.Load() >= 300 })
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d after SIGTERM, want 0; stderr: %s", code, p.stderr.String())
	}
	w.wg.Wait()
	snapAssertNoTemps(t, dir)

	p = startBinary(t, bin, dir, args...)
	served := map[string]string{} // Id -> Position
	var all []json.RawMessage
	for g := range 8 {
		if g%2 == 1 { // the namespaces of the odd writers
			all = append(all, p.listIn(t, fmt.Sprintf("/ns/writer-%d", g))...)
		}
	}
	for _, raw := range append(p.listAll(t), all...) {
		var r struct{ Id, Position string }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		served[r.Id] = r.Position
	}
	checked := 0
	for _, a := range w.acks {
		pos, ok := served[a.id]
		if !ok {
			t.Errorf("resource %s was acknowledged but is gone after the restart", a.id)
			continue
		}
		// The last acknowledged revision, or a later one whose answer was
		// lost to the shutdown.
		var allowed []string
		for _, rev := range a.sent[a.acked:] {
			allowed = append(allowed, fmt.Sprintf("rev %d", rev))
		}
		if !slices.Contains(allowed, pos) {
			t.Errorf("resource %s has Position %q after the restart; want one of %v", a.id, pos, allowed)
		}
		checked++
	}
	t.Logf("%d writes acknowledged (%d resources) before and during SIGTERM, all present after the restart", w.ok.Load(), checked)
	if code := p.stop(syscall.SIGINT); code != 0 {
		t.Errorf("exit status %d after SIGINT, want 0", code)
	}
	snapAssertNoTemps(t, dir)
}

// A final write that fails makes the exit status non-zero and says why.
func snapTestFailedFinalWrite(t *testing.T, bin string) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "rd.gob")
	p := startBinary(t, bin, dir, "-snapshot", path, "-snapshot-interval", "1h")
	code, body, err := doJSON(http.DefaultClient, http.MethodPost, p.url+"/api/v2/resource", []byte(`{"Company":"Doomed Ltd"}`))
	if err != nil || code != http.StatusOK {
		t.Fatalf("create: %d %v %s", code, err, body)
	}
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if code := p.stop(syscall.SIGTERM); code == 0 {
		t.Fatalf("exit status 0 although the final snapshot could not be written; stderr: %s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), path) {
		t.Errorf("stderr does not name the snapshot: %s", p.stderr.String())
	}
}

// ---- latency of requests while a snapshot is written ----

var snapListStores sync.Map // int -> *Store

func snapListStore(n int) *Store {
	if s, ok := snapListStores.Load(n); ok {
		return s.(*Store)
	}
	s := NewStore(nil)
	if err := s.Insert(snapRealisticCached(n)); err != nil {
		panic(err)
	}
	snapListStores.Store(n, s)
	return s
}

// BenchmarkListDuringSnapshot measures list latency with no snapshot under
// way ("idle") and with a snapshotter writing the whole store in a loop
// ("snapshotting"). Each op has one client per CPU send list requests back
// to back (a default page at a random offset, an Id lookup, an ExternalID
// eq, a DisplayName eq) for the same window in both modes: 2.5 times one
// snapshot write, and at least half a second. Reported: latency percentiles and maximum in µs, GC
// cycles in the window, and the snapshots written.
func BenchmarkListDuringSnapshot(b *testing.B) {
	for _, size := range snapBenchSizes {
		// One write, timed, sets the window; it also warms the file.
		store := snapListStore(size.n)
		snap := newSnapshotter(filepath.Join(b.TempDir(), "rd.gob"), storeDir{store}, snapLogger(nil))
		res, err := snap.write()
		if err != nil {
			b.Fatal(err)
		}
		window := max(500*time.Millisecond, res.Duration*5/2)
		for _, mode := range []string{"idle", "snapshotting"} {
			b.Run(size.name+"/"+mode, func(b *testing.B) {
				srv := NewServer(DefaultConfig(), store, nil)
				all, _ := store.All()
				target := func(rng *rand.Rand) string {
					r := all[rng.IntN(len(all))]
					switch rng.IntN(4) {
					case 0:
						return fmt.Sprintf("/api/v2/resource?requestParams.page=%d&requestParams.pageSize=20", 1+rng.IntN(len(all)/20))
					case 1:
						return "/api/v2/resource?requestParams.filters=" + url.QueryEscape("Id~eq~'"+r.ID()+"'")
					case 2:
						return "/api/v2/resource?requestParams.filters=" + url.QueryEscape("ExternalID~eq~'"+r.str(fieldExternalID)+"'")
					default:
						return "/api/v2/resource?requestParams.pageSize=20&requestParams.filters=" + url.QueryEscape("DisplayName~eq~'"+strings.ReplaceAll(r.str(fieldDisplayName), "'", "''")+"'")
					}
				}
				var written, writeTime atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				if mode == "snapshotting" {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							res, err := snap.write()
							if err != nil {
								b.Error(err)
								return
							}
							written.Add(1)
							writeTime.Add(int64(res.Duration))
						}
					}()
				}
				var lat []time.Duration
				runtime.GC()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				b.ResetTimer()
				for range b.N {
					// As many clients as CPUs, so that a request competes with
					// the snapshot for a CPU as it does in a busy server.
					var mu sync.Mutex
					var clients sync.WaitGroup
					end := time.Now().Add(window)
					for c := range runtime.GOMAXPROCS(0) {
						clients.Go(func() {
							rng := rand.New(rand.NewPCG(7, uint64(c)))
							var mine []time.Duration
							for time.Now().Before(end) {
								req := httptest.NewRequest(http.MethodGet, target(rng), nil)
								rec := httptest.NewRecorder()
								t0 := time.Now()
								srv.ServeHTTP(rec, req)
								mine = append(mine, time.Since(t0))
								if rec.Code != http.StatusOK {
									b.Errorf("%s: %d %s", req.URL, rec.Code, rec.Body)
									return
								}
							}
							mu.Lock()
							lat = append(lat, mine...)
							mu.Unlock()
						})
					}
					clients.Wait()
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms1)
				close(stop)
				wg.Wait()
				slices.Sort(lat)
				pct := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e3
				}
				b.ReportMetric(pct(0.50), "p50-µs")
				b.ReportMetric(pct(0.99), "p99-µs")
				b.ReportMetric(pct(0.999), "p99.9-µs")
				b.ReportMetric(float64(lat[len(lat)-1])/1e3, "max-µs")
				b.ReportMetric(float64(len(lat))/float64(b.N), "requests/op")
				b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/op")
				if n := written.Load(); n > 0 {
					b.ReportMetric(float64(n)/float64(b.N), "snapshots/op")
					b.ReportMetric(float64(writeTime.Load())/float64(n)/1e6, "ms/snapshot")
				}
			})
		}
	}
}

// A run that changes nothing must not leave a snapshot behind.
func TestSnapshotIdleRunWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.gob")
	snap := newSnapshotter(path, storeDir{NewStore(nil)}, slog.New(slog.DiscardHandler))
	if err := snap.load(); err != nil {
		t.Fatal(err)
	}
	if wrote, err := snap.writeIfChanged(); wrote || err != nil {
		t.Fatalf("writeIfChanged after an empty boot = %v, %v; want false, nil", wrote, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an idle run created %s (stat: %v)", path, err)
	}
}

// ---- the file: links, what is not a file, sizes that lie ----

// A symbolic link as the snapshot path was replaced by a regular file; the
// file it points to is replaced now, in its own folder, whatever the link
// looks like.
func TestSnapshotWriteThroughSymlink(t *testing.T) {
	rs := snapRealistic(3)
	tests := []struct {
		name string
		// make creates the link(s) in linkDir to a file in dataDir and
		// returns the path to write and the file that must be written.
		make func(t *testing.T, linkDir, dataDir string) (path, target string)
	}{
		{"absolute link to an existing file", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			if _, err := writeSnapshotFile(target, snapRealistic(1)); err != nil {
				t.Fatal(err)
			}
			return snapSymlink(t, target, filepath.Join(linkDir, "rd.gob")), target
		}},
		{"relative link, dangling until written", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			rel, _ := filepath.Rel(linkDir, target)
			return snapSymlink(t, rel, filepath.Join(linkDir, "rd.gob")), target
		}},
		{"a link to a link", func(t *testing.T, linkDir, dataDir string) (string, string) {
			target := filepath.Join(dataDir, "real.gob")
			middle := snapSymlink(t, "real.gob", filepath.Join(dataDir, "middle.gob"))
			return snapSymlink(t, middle, filepath.Join(linkDir, "rd.gob")), target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			linkDir, dataDir := t.TempDir(), t.TempDir()
			path, target := tt.make(t, linkDir, dataDir)
			before := snapLinks(t, linkDir, dataDir)
			if _, err := writeSnapshotFile(path, rs); err != nil {
				t.Fatal(err)
			}
			if after := snapLinks(t, linkDir, dataDir); !maps.Equal(before, after) {
				t.Errorf("links changed: %v, then %v", before, after)
			}
			if info, err := os.Lstat(target); err != nil || !info.Mode().IsRegular() {
				t.Fatalf("target %s: %v %v", target, info, err)
			}
			for _, p := range []string{path, target} {
				if got, err := readSnapshotFile(p); err != nil || len(got) != len(rs) {
					t.Errorf("read %s: %d resources, %v", p, len(got), err)
				}
			}
			snapAssertNoTemps(t, linkDir)
			snapAssertNoTemps(t, dataDir)

			// The temporary files of an interrupted write are beside the
			// target, and found there through the link.
			stale := filepath.Join(filepath.Dir(target), tempPrefix(target)+"123")
			if err := os.WriteFile(stale, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if n, err := removeStaleTemps(path); n != 1 || err != nil {
				t.Errorf("removeStaleTemps through the link: %d, %v", n, err)
			}
		})
	}
	t.Run("a loop of links", func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.gob"), filepath.Join(dir, "b.gob")
		snapSymlink(t, b, a)
		snapSymlink(t, a, b)
		if _, err := writeSnapshotFile(a, rs); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
			t.Errorf("write through a loop: %v", err)
		}
	})
}

func snapSymlink(t *testing.T, dest, link string) string {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// snapLinks maps every symbolic link in dirs to where it points.
func snapLinks(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	links := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				dest, _ := os.Readlink(filepath.Join(dir, e.Name()))
				links[filepath.Join(dir, e.Name())] = dest
			}
		}
	}
	return links
}

// Reading a FIFO blocked until a writer came; a named pipe, a folder or a
// device is refused without waiting, and named.
func TestSnapshotReadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.gob")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{
		fifo:       "named pipe (FIFO)",
		dir:        "folder",
		os.DevNull: "device",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := readSnapshotFile(path)
			done <- err
		}()
		select {
		case err := <-done:
			snapCheckRefusal(t, err, path, "it is a "+regexp.QuoteMeta(kind)+", not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("readSnapshotFile(%s) blocked", path)
		}
	}
}

// The file's size decided the size of the buffer that decodeSnapshot
// filled: a valid header on a sparse 60 GB file ran out of memory. The
// declared record lengths are checked against the file's size first.
func TestSnapshotDeclaredSizes(t *testing.T) {
	good := snapEncode(t, snapRealistic(5))
	frame := func(payload []byte) []byte { return snapFrame(snapshotVersion, payload) }
	// A gob record length of n bytes: minus the count of bytes that follow.
	bigLength := []byte{0xfc, 0x40, 0x00, 0x00, 0x00} // 1 GiB
	cases := []struct {
		name   string
		data   []byte
		size   int64 // the file's size once made sparse, 0 to leave it
		reason string
	}{
		{"a record declaring 1 GiB in a small file", frame(append(slices.Clone(bigLength), 1, 2, 3)), 0,
			`the record at byte 25 declares 1073741824 bytes, and 3 remain before the checksum of this 37-byte file`},
		{"a record length cut short", frame([]byte{0xfc, 0x40}), 0, "a bad record length at byte 25"},
		{"a record length of 9 bytes", frame([]byte{0xf7, 1, 2, 3, 4, 5, 6, 7, 8, 9}), 0, "a bad record length at byte 25"},
		{"a record of 0 bytes", frame([]byte{0}), 0, "the record at byte 25 declares 0 bytes"},
		{"a valid snapshot made sparse to 60 GB", good, 60 << 30, "corrupt or truncated: .* of this 64424509440-byte file"},
		{"a valid snapshot with one byte more", good, int64(len(good)) + 1, "corrupt or truncated"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("sizes%02d.gob", i))
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if c.size > 0 {
				if err := os.Truncate(path, c.size); err != nil {
					t.Fatal(err)
				}
			}
			_, err := readSnapshotFile(path)
			snapCheckRefusal(t, err, path, c.reason)
		})
	}
	// What encodeSnapshot writes passes, both versions, empty too.
	for _, data := range [][]byte{good, snapEncodeV2(t, snapRealistic(5)), snapEncode(t, nil)} {
		if err := checkDeclaredSizes(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Errorf("a valid snapshot: %v", err)
		}
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

// append adds r to c as formats 2 and 3 wrote it, for tests of old files.
func (c *snapshotChunk) append(r *Resource) {
	c.Count++
	var nulls uint16
	for f := range v3StringFields {
		c.Text = append(c.Text, r.vals[f]...)
		c.Lens = append(c.Lens, uint32(len(r.vals[f])))
		if r.null[f] {
			nulls |= 1 << f
		}
	}
	c.Nulls = append(c.Nulls, nulls)
	c.NTypes = append(c.NTypes, uint8(len(r.types)))
	for _, t := range r.types {
		c.Types = append(c.Types, uint8(t))
	}
	if r.address == nil {
		c.AddressLens = append(c.AddressLens, -1)
	} else {
		c.AddressLens = append(c.AddressLens, int32(len(r.address)))
		c.Address = append(c.Address, r.address...)
	}
}

func (c *snapshotChunk) reset() { *c = snapshotChunk{} }

// TestSnapshotLayers: the seed is written once whatever the number of
// namespaces, each namespace as its changes, and a restart on the same seed
// brings every namespace back as it was, sharing the seed again.
func TestSnapshotLayers(t *testing.T) {
	seedRes := snapRealistic(2000)
	for _, r := range seedRes {
		r.set(fieldID, "", false) // the server gives the seed its Ids
	}
	idSeed := uint64(3)
	cfg := DefaultConfig()
	cfg.Seed = seedRes
	cfg.IDSeed = &idSeed
	srv := NewServer(cfg, NewStore(&idSeed), nil)
	path := filepath.Join(t.TempDir(), "layers.gob")
	snap := newSnapshotter(path, srv, snapLogger(nil))
	if _, err := snap.write(); err != nil {
		t.Fatal(err)
	}
	one, _ := os.Stat(path)

	seedIDs, _ := srv.defaultNS().store.All()
	for i := range 50 {
		name := fmt.Sprintf("t%02d", i)
		ns := fmt.Sprintf("/ns/%s", name)
		if i%10 == 9 {
			snapServe(t, srv, http.MethodDelete, ns+"/__admin/resources", "")
			continue
		}
		snapCreate(t, srv, fmt.Sprintf(`{"Company": "C%d"}`, i))
		snapServe(t, srv, http.MethodPost, ns+"/api/v2/resource", fmt.Sprintf(`{"FirstName": "N%d"}`, i))
		id := seedIDs[i].ID()
		if code, body := snapServe(t, srv, http.MethodPut, ns+"/api/v2/resource/"+id, putBody(id, "FirstName", name)); code != http.StatusOK {
			t.Fatalf("PUT: %d %s", code, body)
		}
	}
	res, err := snap.write()
	if err != nil {
		t.Fatal(err)
	}
	// 50 namespaces on 2,000 seed resources, the seed written once: the
	// file holds one seed and a few resources per namespace.
	if res.Bytes > one.Size()*3/2 {
		t.Errorf("the snapshot of 50 namespaces is %d bytes, the seed alone %d: the seed is not shared", res.Bytes, one.Size())
	}
	want := map[string][]string{}
	for _, ns := range srv.sortedNamespaces() {
		rs, _ := ns.store.All()
		for _, r := range rs {
			want[ns.name] = append(want[ns.name], snapWire(r))
		}
	}

	// A restart with the same seed: every namespace as it was, on the
	// server's own seed, with no second copy of it.
	srv2 := NewServer(cfg, NewStore(&idSeed), nil)
	if err := newSnapshotter(path, srv2, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ns := range srv2.sortedNamespaces() {
		rs, _ := ns.store.All()
		for _, r := range rs {
			got[ns.name] = append(got[ns.name], snapWire(r))
		}
		if err := ns.store.check(); err != nil {
			t.Fatalf("namespace %s: %v", ns.name, err)
		}
		if len(rs) > 100 && ns.store.base != srv2.seed {
			t.Errorf("namespace %s is not on the server's seed after the load", ns.name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the reload the namespaces differ (%d namespaces, want %d)", len(got), len(want))
	}
	if n := len(got["t09"]); n != 0 {
		t.Errorf("an emptied namespace holds %d after the reload, want 0", n)
	}

	// A restart with another seed: the namespaces keep the seed they were
	// written on; a reset takes one to the new seed.
	cfg3 := cfg
	cfg3.Seed = snapRealistic(3)
	srv3 := NewServer(cfg3, NewStore(&idSeed), nil)
	if err := newSnapshotter(path, srv3, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	if rs, _ := srv3.lookupNamespace("t01").store.All(); len(rs) != len(want["t01"]) {
		t.Fatalf("on another seed, t01 holds %d, want %d", len(rs), len(want["t01"]))
	}
	if code, _ := snapServe(t, srv3, http.MethodPost, "/ns/t01/__admin/reset", ""); code != http.StatusOK {
		t.Fatal("reset")
	}
	if n := srv3.lookupNamespace("t01").store.Len(); n != 3 {
		t.Errorf("after a reset t01 holds %d, want the new seed's 3", n)
	}
}

// TestSnapshotFieldsByName: a format-4 file names its fields, so a file
// written before a property existed loads with that property null, and one
// written with a property this version does not have loads without it.
func TestSnapshotFieldsByName(t *testing.T) {
	rs := snapRealistic(3)
	var older, newer snapshotRecords
	olderFields := slices.DeleteFunc(slices.Clone(fieldNames[:numStringFields]), func(n string) bool { return n == "AddressComment" })
	newerFields := append(slices.Clone(fieldNames[:numStringFields]), "Nickname")
	for _, r := range rs {
		rec := recordOf(r, 0)
		rec.Values = slices.Delete(slices.Clone(rec.Values), int(fieldAddressComment), int(fieldAddressComment)+1)
		rec.Nulls = slices.DeleteFunc(slices.Clone(rec.Nulls), func(i uint8) bool { return i >= uint8(fieldAddressComment) })
		older.Records = append(older.Records, rec)
		rec = recordOf(r, 0)
		rec.Values = append(slices.Clone(rec.Values), "Nick")
		newer.Records = append(newer.Records, rec)
	}
	for _, c := range []struct {
		name    string
		fields  []string
		records *snapshotRecords
		want    func(r *Resource) *Resource
	}{
		{"a property added since", olderFields, &older, func(r *Resource) *Resource {
			c := *r
			c.set(fieldAddressComment, "", false)
			return &c
		}},
		{"a property this version lacks", newerFields, &newer, func(r *Resource) *Resource { return r }},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := snapFrame(4, snapGob(t, snapshotHeader{Fields: c.fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, c.records))
			path := filepath.Join(t.TempDir(), "fields.gob")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readSnapshotFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				if w, g := snapWire(c.want(r)), snapWire(got[i]); g != w {
					t.Errorf("resource %d:\n got %s\nwant %s", i, g, w)
				}
			}
		})
	}
}

// TestSnapshotSparseHeaders: a sparse file of 2 GiB behind a valid header of
// each version this resourcedir reads, and of one it does not, is refused
// from its declared sizes, without a buffer of its size.
func TestSnapshotSparseHeaders(t *testing.T) {
	dir := t.TempDir()
	for _, version := range []uint32{2, 3, 4, 5, 1 << 20} {
		t.Run(fmt.Sprint(version), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("v%d.gob", version))
			head := binary.BigEndian.AppendUint32([]byte(snapshotMagic), version)
			if err := os.WriteFile(path, head, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, 2<<30); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := readSnapshotFile(path)
			runtime.ReadMemStats(&after)
			reason := "corrupt or truncated: the record at byte 25 declares 0 bytes"
			if version > snapshotVersion {
				reason = fmt.Sprintf("format version %d is newer", version)
			}
			snapCheckRefusal(t, err, path, reason)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("refusing the file allocated %d bytes", grew)
			}
		})
	}
}

// FuzzDecodeSnapshot: whatever a snapshot file holds, reading it fails with
// an error or gives namespaces that a server restores; it never panics.
func FuzzDecodeSnapshot(f *testing.F) {
	rs := snapRealistic(3)
	var v4 bytes.Buffer
	spaces := []snapshotSpace{
		{Name: "default", Base: &snapshotBase{Resources: rs}, Replaced: []replacedResource{{1, rs[1]}}, Own: snapRealistic(1)},
		{Name: "other"},
	}
	if err := encodeSnapshot(&v4, spaces); err != nil {
		f.Fatal(err)
	}
	f.Add(v4.Bytes())
	var chunk snapshotChunk
	for _, r := range rs {
		chunk.append(r)
	}
	var v3 bytes.Buffer
	enc := gob.NewEncoder(&v3)
	enc.Encode(snapshotHeader{Count: 3, Namespaces: []snapshotNamespace{{Name: "default", Count: 3}}}) //nolint:errcheck // a buffer
	enc.Encode(&chunk)                                                                                 //nolint:errcheck
	f.Add(snapFrame(3, v3.Bytes()))
	f.Add(snapFrame(4, nil))
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		// The checksum is made right, so that the fuzzer reaches gob.
		if len(data) >= len(snapshotMagic)+8 {
			body := data[:len(data)-4]
			data = binary.BigEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, crcTable))
		}
		if checkDeclaredSizes(bytes.NewReader(data), int64(len(data))) != nil {
			return
		}
		spaces, err := decodeSnapshot(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		srv := NewServer(DefaultConfig(), NewStore(nil), nil)
		if err := srv.restore(spaces); err != nil {
			return // duplicate Ids across a namespace's layer: refused, not a panic
		}
		for _, ns := range srv.sortedNamespaces() {
			if err := ns.store.check(); err != nil {
				t.Fatalf("namespace %s after a restore: %v", ns.name, err)
			}
		}
	})
}
