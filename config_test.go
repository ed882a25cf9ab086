package resourcedir

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// NewServer(Config{}, …) answered every seed 413 "larger than the limit of
// 0 bytes": the zero limits take the defaults that the flags have.
func TestMainConfigDefaultsAgree(t *testing.T) {
	t.Parallel()
	want := DefaultConfig()
	if got := (Config{}).withDefaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("Config{}.withDefaults() = %+v, want %+v", got, want)
	}
	// A negative JournalSize turns the journal off: 0 is the default. The
	// defaults are applied twice (Open, newServer): off must stay off.
	if got := (Config{JournalSize: -5}).withDefaults().withDefaults().JournalSize; got != journalOff {
		t.Errorf("JournalSize %d becomes %d, want %d (off)", -5, got, journalOff)
	}
	set := Config{MaxPageSize: 3, MaxBody: 10, MaxSeedBody: 20, JournalSize: 4, Auth: "a:b", CORSOrigins: []string{"*"}, MaxNamespaces: 5, MaxFaultBodies: 6, JournalBudget: 7, MaxRequestBytes: 8, Filters: "kendo", SnapshotInterval: time.Second, ServiceVersion: "1.2.3.4", CreateStatus: 200}
	if got := set.withDefaults(); !reflect.DeepEqual(got, set) {
		t.Errorf("withDefaults changed set values: %+v", got)
	}
	e := startServer(t, Config{}, nil)
	if got := e.seed(`[{"Company": "A"}, {"Company": "B"}]`); len(got) != 2 {
		t.Errorf("seeded %d resources, want 2", len(got))
	}
	big := `[` + strings.Repeat(`{"Company": "A"},`, 150_000) + `{"Company": "B"}]` // 2.5 MB: over -max-body, under -max-seed-body
	e.expect(http.StatusOK, http.MethodPost, "/__admin/resources", big)
}
