package resourcedir

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The current seed at run time: PUT /__admin/seed makes one, as -seed does
// at start, for a CI service container that starts before the checkout.
// Namespaces made or reset after it start from it; the others keep the
// seed they are on (they pin it) until they are reset or removed.

// maxHeldSeeds bounds the distinct seeds held at once (the current one and
// those namespaces pin): each is a whole directory in memory.
const maxHeldSeeds = 8

// currentSeed is where a new namespace, and a reset, starts.
func (s *Server) currentSeed() *base {
	s.seedMu.Lock()
	defer s.seedMu.Unlock()
	return s.seed
}

// pinnedSeeds maps every non-empty base a namespace is on to the names of
// those namespaces, sorted.
func (s *Server) pinnedSeeds() map[*base][]string {
	pinned := map[*base][]string{}
	for _, ns := range s.sortedNamespaces() {
		if b := ns.store.pinnedBase(); len(b.rows) > 0 {
			pinned[b] = append(pinned[b], ns.name)
		}
	}
	return pinned
}

// putSeed is PUT /__admin/seed: the body becomes the current seed, a
// distinct seed held once.
func (s *Server) putSeed(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxSeedBody)
	if err != nil {
		return nil, err
	}
	resources, err := decodeSeed(body)
	if err != nil {
		return nil, err
	}
	seed, err := newBase(resources)
	if dup := (*errDuplicateID)(nil); errors.As(err, &dup) {
		ms := modelState{}
		ms.add(fmt.Sprintf("[%d].Id", dup.Index), fmt.Sprintf("The Id %s is given twice; nothing was seeded.", dup.ID))
		return nil, invalid(ms)
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "The seed cannot be frozen: %v; nothing was seeded.", err)
	}
	s.seedMu.Lock()
	defer s.seedMu.Unlock()
	pinned := s.pinnedSeeds()
	held := []*base{}
	for b := range pinned {
		held = append(held, b)
	}
	// A seed held already, by its content and Ids, is shared, not held twice.
	rs := make([]*resource, len(seed.rows))
	for i := range seed.rows {
		rs[i] = seed.rows[i].res
	}
	// So is one whose Ids differ only where both derive them: the seed
	// with the Ids an older resourcedir gave it, which the server keeps
	// (keepSnapshotSeedIDs), so that one seed resource has one Id.
	put := seed
	for _, b := range append(held, s.seed) {
		bothDerive := func(i int) bool { return put.derivedAt(i) && b.derivedAt(i) }
		if len(b.rows) > 0 && (sameResources(rs, b) || sameSeedBut(rs, b, bothDerive)) {
			seed = b
		}
	}
	if len(seed.rows) > 0 && !slices.Contains(held, seed) && len(held)+1 > maxHeldSeeds {
		oldest := slices.MinFunc(held, func(a, b *base) int { return cmp.Compare(s.seedAge[a], s.seedAge[b]) })
		return nil, errorf(http.StatusConflict, "%d distinct seeds are held already (the most at once); the oldest is pinned by the namespaces %s: reset or remove them (POST /ns/{name}/__admin/reset, DELETE /__admin/namespaces/{name}), then put the seed again.",
			maxHeldSeeds, strings.Join(pinned[oldest], ", "))
	}
	if _, ok := s.seedAge[seed]; !ok {
		s.seedClock++
		s.seedAge[seed] = s.seedClock
	}
	s.seed = seed
	for b := range s.seedAge {
		if _, ok := pinned[b]; !ok && b != seed {
			delete(s.seedAge, b)
		}
	}
	s.spaces.mu.Lock()
	s.spaces.changed = nextGeneration() // the snapshot holds the current seed
	s.spaces.mu.Unlock()
	ids := make([]string, len(seed.rows))
	for i := range seed.rows {
		ids[i] = seed.rows[i].res.id()
	}
	return struct {
		Total int
		Ids   []string
	}{len(ids), ids}, nil
}

// getSeed is GET /__admin/seed: the current seed, with the Ids its
// resources get.
func (s *Server) getSeed(x *exchange, r *http.Request) (any, error) {
	seed := s.currentSeed()
	return streamList(`{"Data":[`, len(seed.rows), func(b []byte, i int) ([]byte, error) {
		return appendResource(b, seed.rows[i].res, false), nil
	}, fmt.Sprintf(`],"Total":%d}`, len(seed.rows))), nil
}
