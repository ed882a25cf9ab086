package resourcedir

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
)

// The test-double controls but the journal and faults. Nothing here exists
// on the real service; the admin API is ours, so it is strict.

func (s *Server) health(x *exchange, r *http.Request) (any, error) {
	if x.anonymous {
		return struct{ Status string }{"ok"}, nil
	}
	var dropped uint64
	if s.cfg.DroppedLogLines != nil {
		dropped = s.cfg.DroppedLogLines()
	}
	var snap *snapshotHealth
	if s.snap != nil {
		snap = new(s.snap.health())
	}
	return struct {
		Status          string
		Resources       int
		DroppedLogLines uint64          `json:",omitempty"` // present once a line was dropped
		Snapshot        *snapshotHealth `json:",omitempty"` // present when a snapshot file is written
	}{"ok", x.ns.store.count(), dropped, snap}, nil
}

// adminResources answers every resource in creation order.
func (s *Server) adminResources(x *exchange, r *http.Request) (any, error) {
	all, _ := x.ns.store.all()
	return streamList(`{"Data":[`, len(all), func(b []byte, i int) ([]byte, error) {
		return appendResource(b, all[i], false), nil
	}, fmt.Sprintf(`],"Total":%d}`, len(all))), nil
}

func (s *Server) seedResources(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxSeedBody)
	if err != nil {
		return nil, err
	}
	return s.insertSeed(x, body)
}

// insertSeed adds a seed body's resources to x's namespace, all or nothing, and answers their Ids.
func (s *Server) insertSeed(x *exchange, body []byte) (any, error) {
	resources, err := decodeSeed(body)
	if err == nil {
		err = x.ns.store.insert(resources)
	}
	if dup := (*errDuplicateID)(nil); errors.As(err, &dup) {
		ms := modelState{}
		ms.add(fmt.Sprintf("[%d].Id", dup.Index), fmt.Sprintf("The Id %s is already in use; nothing was seeded.", dup.ID))
		return nil, invalid(ms)
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(resources))
	for i, res := range resources {
		ids[i] = res.id()
	}
	return struct {
		Total int
		Ids   []string
	}{len(ids), ids}, nil
}

func (s *Server) deleteResources(x *exchange, r *http.Request) (any, error) {
	n := x.ns.store.count()
	x.ns.store.clear()
	return struct{ Deleted int }{n}, nil
}

func (s *Server) writeSnapshot(x *exchange, r *http.Request) (any, error) {
	if s.snap == nil {
		return nil, errorf(http.StatusConflict, "Snapshots are off (started with -snapshot off), so there is nothing to write.")
	}
	res, err := s.snap.write()
	if err != nil {
		// The path and the OS's words are for the log, not for a client.
		e := errorf(http.StatusInternalServerError,
			"The snapshot could not be written (%s); the previous snapshot is kept, and the server log says more (request id %s).",
			writeFailureReason(err), x.requestID)
		e.cause = err
		return nil, e
	}
	return res, nil
}

// reset puts resources, journal and faults back to the start: empty, or
// the current seed (the -seed file's, or the last PUT /__admin/seed's).
func (s *Server) reset(x *exchange, r *http.Request) (any, error) {
	// Under the seed's lock, as addNamespace: a PUT /__admin/seed counting
	// the seeds namespaces are on sees this one.
	s.seedMu.Lock()
	x.ns.store.resetTo(s.seed)
	s.seedMu.Unlock()
	x.ns.journal.clear()
	x.ns.faults.clear()
	return struct {
		Status    string
		Resources int
	}{"reset", x.ns.store.count()}, nil
}

// noQuery refuses parameters on a control that takes none, so that a typo does not pass silently.
func noQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	values, _ := url.ParseQuery(r.URL.RawQuery)
	ms := modelState{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		ms.add(name, fmt.Sprintf("Unknown parameter %q; %s %s takes none.", name, r.Method, r.URL.Path))
	}
	return invalidAs("The query string is invalid.", ms)
}
