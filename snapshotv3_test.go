package resourcedir

import (
	"os"
	"path/filepath"
	"testing"
)

// Tests of snapshotv3.go: snapshot formats 2 and 3 still load.

func TestSnapshotReadsVersion2(t *testing.T) {
	store, _ := snapRoundTripStore(t)
	want, _ := store.all()
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
