package resourcedir

// Tests of snapshot.go: the snapshot format encoded and decoded (round
// trips, corruption, layers, fields by name, declared sizes), and the
// benchmarks of writing and loading it.

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
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

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
				store := newStore(nil)
				if err := newSnapshotter(path, storeDir{store}, logger).load(); err != nil {
					b.Fatal(err)
				}
				if store.count() != size.n {
					b.Fatalf("loaded %d resources, want %d", store.count(), size.n)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(bytes), "file-bytes")
			b.ReportMetric(float64(size.n)*float64(b.N)/b.Elapsed().Seconds(), "resources/s")
		})
	}
}

// ---- helpers ----

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

func snapEncode(t *testing.T, rs []*resource) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeSnapshot(&buf, defaultSpace(rs), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ---- round trip ----

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
	if res.Path != path || res.Resources != store.count() || res.Bytes != info.Size() {
		t.Errorf("write reported %+v; the file is %d bytes and the store holds %d", res, info.Size(), store.count())
	}

	loaded := newStore(nil)
	snap2 := newSnapshotter(path, storeDir{loaded}, snapLogger(nil))
	if err := snap2.load(); err != nil {
		t.Fatal(err)
	}
	want, _ := store.all()
	got, _ := loaded.all()
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
	gotIDs, gotIndex := indexContents(loaded)
	wantIDs, wantIndex := indexContents(store)
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
	srv2 := newServer(kendoConfig(), loaded, nil)
	anID := want[len(want)/2].id()
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
	store := newStore(nil)
	store.insert(snapRealistic(3))
	if err := newSnapshotter(path, storeDir{store}, snapLogger(nil)).load(); err != nil || store.count() != 0 {
		t.Fatalf("load of an empty snapshot: %d resources, %v", store.count(), err)
	}
}

// ---- corruption ----

func TestSnapshotCorruption(t *testing.T) {
	store, _ := snapRoundTripStore(t)
	rs, _ := store.all()
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
	badID := *rs[0]
	badID.set(fieldID, strings.ToUpper(badID.id()), true)
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
		// The checksum is checked before the version is believed: a flipped
		// bit is not a newer resourcedir's file.
		{"flipped high version byte", flip(len(snapshotMagic), 0x80), "checksum mismatch"},
		{"flipped low version byte", flip(headerLen-1, 0x04), "checksum mismatch"},
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
		{"format 4, negative count", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Bases: []int{-1}})), "bad resource count -1"},
		{"format 4, a count beyond the file", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 1 << 40}}})), "bad resource count 1099511627776"},
		{"format 4, fewer records than the header says", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 5}}}, &v4Three)), "decode resources after 3"},
		{"format 4, more records than the header says", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 2}}}, &v4Three)), "a chunk of 3 resources where 2 remain"},
		{"format 4, data after the resources", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &v4Three, &v4Three)), "data after the resources"},
		{"format 4, values that do not match the fields", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields[:5], Namespaces: []snapshotNamespace{{Name: "default", Own: 3}}}, &v4Three)), fmt.Sprintf("%d values for 5 fields", numStringFields)},
		{"format 4, an upper-case Id", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Own: 1}}}, &snapshotRecords{[]snapshotRecord{recordOf(&badID, 0)}})), "invalid Id"},
		{"format 4, a base that does not exist", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "default", Base: 2}}})), `bad namespace "default"`},
		{"format 4, a bad namespace name", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Namespaces: []snapshotNamespace{{Name: "a/b"}}})), `bad namespace "a/b"`},
		{"format 4, a replaced resource outside its base", snapFrame(4, snapGob(t, snapshotHeader{Fields: v4Fields, Bases: []int{1}, Namespaces: []snapshotNamespace{{Name: "default", Base: 1, Replaced: 1}}}, &snapshotRecords{v4Three.Records[:1]}, &snapshotRecords{[]snapshotRecord{recordOf(rs[1], 7)}})), "is not in the seed"},
		// Formats 1 to 3 were written by development builds only.
		{"format 1, before the first release", withVersion(1), "format version 1 was written by a development build of resourcedir, before the first release; this resourcedir reads 4 to 5"},
		{"format 3, before the first release", withVersion(3), "format version 3 was written by a development build of resourcedir, before the first release"},
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
			store := newStore(nil)
			store.insert(snapRealistic(2))
			err = newSnapshotter(path, storeDir{store}, snapLogger(nil)).load()
			snapCheckRefusal(t, err, path, c.reason)
			if store.count() != 2 {
				t.Errorf("a refused load left %d resources in the store, want the 2 it had", store.count())
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
		data := snapEncode(t, []*resource{rs[0], rs[1], rs[0]})
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		store := newStore(nil)
		err := newSnapshotter(path, storeDir{store}, snapLogger(nil)).load()
		snapCheckRefusal(t, err, path, "already in use")
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Error("the refused file was modified")
		}
	})
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
			srv, err := Open(ctx, Config{Snapshot: path})
			if err == nil {
				srv.Close()
				t.Fatal("Open booted on a bad snapshot")
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
		})
	}
}

// ---- failing writes ----

func TestSnapshotEncodeWriterFails(t *testing.T) {
	rs := snapRealistic(snapshotChunkSize + 10)
	size := len(snapEncode(t, rs))
	for _, limit := range []int{0, 1, len(snapshotMagic) + 2, 100, 1 << 16, size / 2, size - 4, size - 1} {
		var buf bytes.Buffer
		err := encodeSnapshot(&snapFailingWriter{w: &buf, limit: limit, err: errSnapInjected}, defaultSpace(rs), nil)
		if !errors.Is(err, errSnapInjected) {
			t.Errorf("failing after %d of %d bytes: encodeSnapshot = %v, want the writer's error", limit, size, err)
		}
	}
}

// ---- the built binary: crashes, graceful stop, exit status ----

// ---- latency of requests while a snapshot is written ----

// ---- the file: links, what is not a file, sizes that lie ----

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
		// Which refusal depends on the checksum, now inside the file, read as a
		// record length: it changes with the header's time.
		{"a valid snapshot made sparse to 60 GB", good, 60 << 30, "corrupt or truncated: .*64424509440"},
		// One record claiming exactly the room the file leaves: the sizes
		// agree, but a record is not that big, nor a run of zeros.
		{"one record filling 2 GiB", snapFilling(2 << 30), 2 << 30, "declares 2147483614 bytes, more than the 1073741824 a record may hold"},
		{"one record filling 512 MiB", snapFilling(512 << 20), 512 << 20, "the record at byte 25 has no type"},
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
	for _, data := range [][]byte{good, snapEncode(t, nil)} {
		if err := checkDeclaredSizes(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Errorf("a valid snapshot: %v", err)
		}
	}
}

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
	cfg.seedResources = seedRes
	cfg.IDSeed = &idSeed
	srv := newServer(cfg, newStore(&idSeed), nil)
	path := filepath.Join(t.TempDir(), "layers.gob")
	snap := newSnapshotter(path, srv, snapLogger(nil))
	if _, err := snap.write(); err != nil {
		t.Fatal(err)
	}
	one, _ := os.Stat(path)

	seedIDs, _ := srv.defaultNS().store.all()
	for i := range 50 {
		name := fmt.Sprintf("t%02d", i)
		ns := fmt.Sprintf("/ns/%s", name)
		if i%10 == 9 {
			snapServe(t, srv, http.MethodDelete, ns+"/__admin/resources", "")
			continue
		}
		snapCreate(t, srv, fmt.Sprintf(`{"Company": "C%d"}`, i))
		snapServe(t, srv, http.MethodPost, ns+"/api/v2/resource", fmt.Sprintf(`{"FirstName": "N%d"}`, i))
		id := seedIDs[i].id()
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
		rs, _ := ns.store.all()
		for _, r := range rs {
			want[ns.name] = append(want[ns.name], snapWire(r))
		}
	}

	// A restart with the same seed: every namespace as it was, on the
	// server's own seed, with no second copy of it.
	srv2 := newServer(cfg, newStore(&idSeed), nil)
	if err := newSnapshotter(path, srv2, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ns := range srv2.sortedNamespaces() {
		rs, _ := ns.store.all()
		for _, r := range rs {
			got[ns.name] = append(got[ns.name], snapWire(r))
		}
		if err := checkStore(ns.store); err != nil {
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
	cfg3.seedResources = snapRealistic(3)
	srv3 := newServer(cfg3, newStore(&idSeed), nil)
	if err := newSnapshotter(path, srv3, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	if rs, _ := srv3.lookupNamespace("t01").store.all(); len(rs) != len(want["t01"]) {
		t.Fatalf("on another seed, t01 holds %d, want %d", len(rs), len(want["t01"]))
	}
	if code, _ := snapServe(t, srv3, http.MethodPost, "/ns/t01/__admin/reset", ""); code != http.StatusOK {
		t.Fatal("reset")
	}
	if n := srv3.lookupNamespace("t01").store.count(); n != 3 {
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
		rec.Nulls = slices.DeleteFunc(slices.Clone(rec.Nulls), func(i uint8) bool { return i == uint8(fieldAddressComment) })
		for i, n := range rec.Nulls { // the fields after it move up one
			if n > uint8(fieldAddressComment) {
				rec.Nulls[i] = n - 1
			}
		}
		older.Records = append(older.Records, rec)
		rec = recordOf(r, 0)
		rec.Values = append(slices.Clone(rec.Values), "Nick")
		newer.Records = append(newer.Records, rec)
	}
	for _, c := range []struct {
		name    string
		fields  []string
		records *snapshotRecords
		want    func(r *resource) *resource
	}{
		{"a property added since", olderFields, &older, func(r *resource) *resource {
			c := *r
			c.set(fieldAddressComment, "", false)
			return &c
		}},
		{"a property this version lacks", newerFields, &newer, func(r *resource) *resource { return r }},
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
// the version this resourcedir reads, of development builds' older ones and
// of newer ones, is refused from its declared sizes, without a buffer of its
// size: a version is not believed before the file is.
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
			snapCheckRefusal(t, err, path, "corrupt or truncated: the record at byte 25 declares 0 bytes")
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("refusing the file allocated %d bytes", grew)
			}
		})
	}
}

// snapFilling returns the start of a format-4 file whose one record
// declares exactly the room a file of size bytes leaves it before the
// checksum: the declared-size check alone let it through.
func snapFilling(size int64) []byte {
	head := binary.BigEndian.AppendUint32([]byte(snapshotMagic), snapshotVersion)
	room := uint64(size) - uint64(len(head)) - 4
	for width := uint64(2); ; width++ { // a length of width-1 bytes, after its count
		if n := room - width; n>>(8*(width-1)) == 0 && n>>(8*(width-2)) != 0 {
			head = append(head, byte(-int8(width-1)))
			for i := int(width) - 2; i >= 0; i-- {
				head = append(head, byte(n>>(8*i)))
			}
			return head
		}
	}
}

// snapPlanted makes path a sparse file of size bytes in the frame of a
// format-4 snapshot whose records, each a length and a type id planted in
// the holes, pass every check of the declared sizes: only the checksum
// tells it from a snapshot, and it must be checked without reading the
// holes.
func snapPlanted(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := binary.BigEndian.AppendUint32([]byte(snapshotMagic), snapshotVersion)
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	for at, end := int64(len(head)), size-4; at < end; {
		rec := snapFilling(min(end-at, 256<<20) + int64(len(head)) + 4)[len(head):]
		length, width := gobLength(rec)
		if _, err := f.WriteAt(append(rec, 0x03), at); err != nil {
			t.Fatal(err)
		}
		at += int64(width) + int64(length)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// snapGNUTime reports whether /usr/bin/time is GNU time, which writes a
// child's peak memory with -f %M.
func snapGNUTime() bool {
	out, err := exec.Command("/usr/bin/time", "-f", "%M", "-o", os.DevNull, "true").CombinedOutput()
	return err == nil && len(out) == 0 && runtime.GOOS == "linux"
}

// TestSnapshotHostileFilesBinary: the built binary meets snapshots that
// lie. A file whose one record claims exactly the room the file leaves
// passed the declared-size check and was read whole (2 GiB sparse: 2.1 GB
// and seconds before "checksum mismatch"; 60 GiB: out of memory); a
// flipped version byte read as "newer: upgrade"; a seed position replaced
// twice loaded, and a filter then found that resource twice. Each stops
// the boot naming the file and what is wrong, at once and in little memory.
func TestSnapshotHostileFilesBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the built binary's memory; skipped with -short")
	}
	t.Parallel()
	bin := builtBinary(t)
	dir := t.TempDir()
	good := snapEncode(t, snapRealistic(40))
	rs := snapRealistic(3)
	twice := snapFrame(snapshotVersion, snapGob(t,
		snapshotHeader{Fields: fieldNames[:numStringFields], Bases: []int{3}, Namespaces: []snapshotNamespace{{Name: "default", Base: 1, Replaced: 2}}},
		&snapshotRecords{[]snapshotRecord{recordOf(rs[0], 0), recordOf(rs[1], 0), recordOf(rs[2], 0)}},
		&snapshotRecords{[]snapshotRecord{recordOf(rs[1], 1), recordOf(rs[1], 1)}}))
	cases := []struct {
		name   string
		data   []byte
		size   int64 // made sparse to this size; 0 to leave it
		reason string
	}{
		{"one record filling 2 GiB", snapFilling(2 << 30), 2 << 30, "corrupt"},
		{"one record filling 60 GiB", snapFilling(60 << 30), 60 << 30, "corrupt"},
		{"60 GiB of records, all holes", nil, 60 << 30, "checksum mismatch"},
		{"a flipped version byte", append(append(slices.Clone(good[:len(snapshotMagic)]), good[len(snapshotMagic)]^0x80), good[len(snapshotMagic)+1:]...), 0, "checksum mismatch"},
		{"a seed position replaced twice", twice, 0, "position 1 .*twice"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("hostile%d.gob", i))
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if c.data == nil {
				snapPlanted(t, path, c.size)
			} else if c.size > 0 {
				if err := os.Truncate(path, c.size); err != nil {
					t.Fatal(err)
				}
			}
			// At most 4 GiB of address space: a resourcedir that reads the
			// file whole fails here rather than taking the machine's memory;
			// one that reads the holes of a sparse file runs into the
			// deadline.
			// GNU time, where there is one, measures its peak: the rusage of
			// a child of the test would count the test's own memory, which
			// a child inherits as its peak when it starts.
			args := []string{"/bin/sh", "-c", `ulimit -v 4194304 && exec "$0" "$@"`, bin, "-addr", "127.0.0.1:0", "-snapshot", path}
			peakFile := filepath.Join(t.TempDir(), "peak")
			if snapGNUTime() {
				args = append([]string{"/usr/bin/time", "-f", "%M", "-o", peakFile}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env = binaryEnv()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
				t.Fatalf("exit status %d (%v), want 1; stderr:\n%.2000s", code, err, stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, path) || !regexp.MustCompile(c.reason).MatchString(msg) {
				t.Errorf("the refusal does not name the file and say %q:\n%s", c.reason, msg)
			}
			t.Logf("refused in %v", took)
			if b, err := os.ReadFile(peakFile); err == nil { // "Command exited with non-zero status 1\n9348\n"
				words := strings.Fields(string(b))
				if kb, err := strconv.Atoi(words[len(words)-1]); err != nil || kb > 64<<10 {
					t.Errorf("refusing it took %q kB at peak, want at most 64 MB", b)
				}
			}
			if info, err := os.Stat(path); err != nil || (c.size > 0 && info.Size() != c.size) || (c.size == 0 && info.Size() != int64(len(c.data))) {
				t.Errorf("the file was changed: %v %v", info, err)
			}
		})
	}
}

// TestSnapshotSparseChecksum: the holes of a sparse file are added to the
// checksum without being read, and the CRC of n zeros is what crc32 makes
// of them.
// Not parallel: it reads the process's allocations and bytes read, which
// other tests running beside it would add to.
func TestSnapshotSparseChecksum(t *testing.T) {
	lead := []byte("some data before the zeros")
	for _, n := range []int64{0, 1, 3, 8, 255, 4096, 1 << 20, 3<<20 + 7} {
		crc := crc32.Update(0, crcTable, lead)
		if got, want := crcZeros(crc, n), crc32.Update(crc, crcTable, make([]byte, n)); got != want {
			t.Errorf("crcZeros of %d zeros: %08x, want %08x", n, got, want)
		}
	}
	// A snapshot with holes in it (a copy made by cp --sparse) still
	// loads: the zeros count. A resource may hold NULs.
	rs := snapRealistic(20)
	rs[5].set(fieldAddressComment, strings.Repeat("\x00", 64<<10), true)
	good := snapEncode(t, rs)
	path := filepath.Join(t.TempDir(), "holes.gob")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(good))); err != nil {
		t.Fatal(err)
	}
	for at := 0; at < len(good); at += 4096 { // blocks of zeros are left holes
		if block := good[at:min(at+4096, len(good))]; bytes.Count(block, []byte{0}) != len(block) {
			if _, err := f.WriteAt(block, int64(at)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if hole, err := f.Seek(0, 4); runtime.GOOS == "linux" && (err != nil || hole >= int64(len(good))) { // SEEK_HOLE
		t.Logf("this file system made no hole (%d, %v)", hole, err)
	}
	f.Close()
	loaded, err := readSnapshotFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snapWire(loaded[5]), snapWire(rs[5]); got != want {
		t.Errorf("the resource with the holes loads as\n%.200s\nwant\n%.200s", got, want)
	}
	// 60 GiB of planted records and holes: refused unread, in little memory.
	snapPlanted(t, path, 60<<30)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	readBefore := snapBytesRead(t)
	_, err = readSnapshotFile(path)
	read := snapBytesRead(t) - readBefore
	runtime.ReadMemStats(&after)
	snapCheckRefusal(t, err, path, "checksum mismatch")
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("refusing the file allocated %d bytes", grew)
	}
	if read > 1<<30 {
		t.Errorf("refusing the file read %d bytes: its holes were read", read)
	}
}

// snapBytesRead is what the process has read so far (rchar of
// /proc/self/io: every read and pread), or 0 where there is no such file.
func snapBytesRead(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
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
	if err := encodeSnapshot(&v4, spaces, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(v4.Bytes())
	f.Add(snapFrame(3, v4.Bytes()[len(snapshotMagic)+4:v4.Len()-4])) // a development build's version
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
		spaces, current, err := decodeSnapshot(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		srv := newServer(DefaultConfig(), newStore(nil), nil)
		if err := srv.restore("fuzz.gob", spaces, current); err != nil {
			return // duplicate Ids across a namespace's layer: refused, not a panic
		}
		for _, ns := range srv.sortedNamespaces() {
			if err := checkStore(ns.store); err != nil {
				t.Fatalf("namespace %s after a restore: %v", ns.name, err)
			}
		}
	})
}

func snapDropRealisticCache() {
	snapRealisticCache.Lock()
	defer snapRealisticCache.Unlock()
	snapRealisticCache.n, snapRealisticCache.rs = 0, nil
	runtime.GC()
}

// storeDir lets a snapshotter save and restore a lone Store, as the
// default namespace.
type storeDir struct{ *store }

func (d storeDir) snapshotSpaces() ([]snapshotSpace, *snapshotBase, uint64) {
	rs, changes := d.all()
	return defaultSpace(rs), nil, changes
}

func (d storeDir) changeMark() uint64 { return d.generation() }

func (d storeDir) restore(_ string, spaces []snapshotSpace, _ *snapshotBase) error {
	var all []*resource
	for _, sp := range spaces {
		all = append(all, spaceResources(&sp)...)
	}
	return storeLoad(d.store, all)
}

// spaceResources returns what the namespace shows: its base with its
// replacements, then its own.
func spaceResources(sp *snapshotSpace) []*resource {
	var out []*resource
	if sp.Base != nil {
		out = slices.Clone(sp.Base.Resources)
	}
	for _, rr := range sp.Replaced {
		out[rr.pos] = rr.res
	}
	return append(out, sp.Own...)
}

// defaultSpace is a snapshot of one directory, the default namespace.
func defaultSpace(rs []*resource) []snapshotSpace {
	return []snapshotSpace{{Name: defaultNamespace, Own: rs}}
}

// writeSnapshotFile writes a snapshot of one directory.
func writeSnapshotFile(path string, rs []*resource) (int64, error) {
	return writeSnapshot(path, defaultSpace(rs), nil)
}

// readSnapshotFile reads a snapshot's resources, every namespace's in order.
func readSnapshotFile(path string) ([]*resource, error) {
	spaces, _, err := readSnapshot(path)
	if err != nil {
		return nil, err
	}
	var all []*resource
	for _, sp := range spaces {
		all = append(all, spaceResources(&sp)...)
	}
	return all, nil
}

func snapAssertNoTemps(t *testing.T, dir string) {
	t.Helper()
	if temps := snapTemps(t, dir); len(temps) > 0 {
		t.Errorf("temporary files left in %s: %v", dir, temps)
	}
}

// snapRealistic returns n deterministic resources shaped like a real
// directory: names, email, phone, external id, two types, an Address on one
// in four, a few nulls and empty strings.
func snapRealistic(n int) []*resource {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	ids := rand.NewChaCha8([32]byte{byte(n), byte(n >> 8), byte(n >> 16)})
	out := make([]*resource, n)
	for i := range out {
		r := &resource{}
		for f := range numStringFields {
			r.null[f] = true
		}
		id, err := uuid.NewRandomFromReader(ids)
		if err != nil {
			panic(err)
		}
		first := snapFirstNames[rng.IntN(len(snapFirstNames))]
		sur := snapSurnames[rng.IntN(len(snapSurnames))]
		r.set(fieldID, id.String(), true)
		r.set(fieldFirstName, first, true)
		r.set(fieldSurname, sur, true)
		r.set(fieldDisplayName, first+" "+sur, true)
		r.set(fieldCompany, snapCompanies[rng.IntN(len(snapCompanies))], true)
		r.set(fieldPosition, snapPositions[rng.IntN(len(snapPositions))], i%7 != 0)
		if i%10 == 0 {
			r.set(fieldStatus, statusInactive, true)
		} else {
			r.set(fieldStatus, statusActive, true)
		}
		r.set(fieldExternalID, fmt.Sprintf("EXT-%08d", i), true)
		r.set(fieldPhone, fmt.Sprintf("+44 20 7946 %04d", rng.IntN(10000)), true)
		r.set(fieldMobile, fmt.Sprintf("+44 7700 9%05d", rng.IntN(100000)), i%3 == 0)
		r.set(fieldFax, "", i%11 == 0)
		r.set(fieldEmail, fmt.Sprintf("%s.%s%d@example.com", first, sur, i), true)
		r.set(fieldAddressComment, "Reception on the 2nd floor", i%13 == 0)
		r.types = []requestorType{16, requestorType(2 << rng.IntN(4))}
		if r.types[1] == 16 {
			r.types[1] = 4
		}
		if i%4 == 0 {
			r.address = fmt.Appendf(nil, `{"Street":"%d High Street","City":"London","PostCode":"N1 9GU","Country":"United Kingdom"}`, i%500+1)
		}
		out[i] = r
	}
	return out
}

var snapCompanies = []string{"Analytical Engines", "Acme Ltd", "Globex", "Initech", "Umbrella plc", "Stark Industries", "Wayne Enterprises", "Hooli"}

var snapFirstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Émile", "Katherine", "Linus", "Margaret", "Niklaus", "Radia", "Søren", "Tim", "Yukihiro", "Zoë"}

var snapPositions = []string{"Engineer", "Manager", "Director", "Analyst", "Consultant", "Intern"}

var snapSurnames = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Zola", "Johnson", "Torvalds", "Hamilton", "Wirth", "Perlman", "Kierkegaard", "Berners-Lee", "Matsumoto", "O'Brien"}

// snapTemps lists the snapshot temporary files in dir.
func snapTemps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var temps []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			temps = append(temps, e.Name())
		}
	}
	return temps
}

var errSnapInjected = errors.New("injected fault: disk on fire")

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

var snapBenchSizes = []struct {
	name string
	n    int
}{{"100k", 100_000}, {"1M", 1_000_000}}

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

// snapFrame wraps payload in the file format: magic, version, payload,
// CRC-32C of all that.
func snapFrame(version uint32, payload []byte) []byte {
	b := []byte(snapshotMagic)
	b = binary.BigEndian.AppendUint32(b, version)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func snapLogger(w io.Writer) *slog.Logger {
	if w == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// snapRealisticCache keeps the resources of the last size generated, so that
// a benchmark's runs do not generate them again.
var snapRealisticCache struct {
	sync.Mutex
	n  int
	rs []*resource
}

func snapRealisticCached(n int) []*resource {
	snapRealisticCache.Lock()
	defer snapRealisticCache.Unlock()
	if snapRealisticCache.n != n {
		snapRealisticCache.n, snapRealisticCache.rs = 0, nil
		runtime.GC()
		snapRealisticCache.n, snapRealisticCache.rs = n, snapRealistic(n)
	}
	return snapRealisticCache.rs
}

// snapRoundTripStore fills a store through the API with every shape a
// resource can take, updates some, and adds enough to span several chunks.
func snapRoundTripStore(t *testing.T) (*store, *Server) {
	t.Helper()
	store := newStore(nil)
	srv := newServer(kendoConfig(), store, nil)
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
	if err := store.insert(snapRealistic(2*snapshotChunkSize + 17)); err != nil {
		t.Fatal(err)
	}
	return store, srv
}

// snapWire is how the list serves r.
func snapWire(r *resource) string { return string(appendResource(nil, r, true)) }

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
	if code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", body, code, resp)
	}
	var out struct{ Data []struct{ Id string } }
	if err := json.Unmarshal(resp, &out); err != nil || len(out.Data) != 1 {
		t.Fatalf("create %s: %v in %s", body, err, resp)
	}
	return out.Data[0].Id
}
