package main

import (
	"encoding/json"
	"testing"
	"time"
)

// wireEntry is a journal entry as GET /__admin/requests shows it.
type wireEntry struct {
	Seq           uint64
	Time          time.Time
	RequestID     string `json:"RequestId"`
	Method        string
	Path          string
	Query         string
	Params        map[string]any
	Headers       map[string]any
	Body          json.RawMessage
	BodyTruncated bool
	Status        int
	DurationMs    float64
	Fault         *int
}

// journalEntries reads srv's journal as a client would see it, oldest first.
func journalEntries(t testing.TB, srv *Server) []wireEntry {
	t.Helper()
	if srv.defaultNS().journal == nil {
		return nil
	}
	entries, _ := srv.defaultNS().journal.matching(journalQuery{})
	out := make([]wireEntry, len(entries))
	for i, e := range entries {
		if err := json.Unmarshal(appendJournalEntry(nil, e), &out[i]); err != nil {
			t.Fatalf("journal entry %d: %v", i, err)
		}
	}
	return out
}

// buildBody decodes body and applies the rules of mode, as the handlers do.
func buildBody(body []byte, mode writeMode, pathID string) (*Resource, error) {
	in, err := decodeResource(body)
	if err != nil {
		return nil, err
	}
	return buildResource(in, mode, pathID)
}

// storeDir lets a snapshotter save and restore a lone Store, as the
// default namespace.
type storeDir struct{ *Store }

func (d storeDir) snapshotSpaces() ([]snapshotSpace, uint64) {
	rs, changes := d.All()
	return []snapshotSpace{{defaultNamespace, rs}}, changes
}

func (d storeDir) changeMark() uint64 { return d.Changes() }

func (d storeDir) restore(spaces []snapshotSpace) error {
	var all []*Resource
	for _, sp := range spaces {
		all = append(all, sp.Resources...)
	}
	return d.Load(all)
}

// defaultSpace is a snapshot of one directory, the default namespace.
func defaultSpace(rs []*Resource) []snapshotSpace {
	return []snapshotSpace{{defaultNamespace, rs}}
}

// writeSnapshotFile writes a snapshot of one directory.
func writeSnapshotFile(path string, rs []*Resource) (int64, error) {
	return writeSnapshot(path, defaultSpace(rs))
}

// readSnapshotFile reads a snapshot's resources, every namespace's in order.
func readSnapshotFile(path string) ([]*Resource, error) {
	spaces, err := readSnapshot(path)
	if err != nil {
		return nil, err
	}
	var all []*Resource
	for _, sp := range spaces {
		all = append(all, sp.Resources...)
	}
	return all, nil
}

// jsonInto decodes body into v, for goroutines that cannot call t.Fatal.
func jsonInto(body []byte, v any) error { return json.Unmarshal(body, v) }
