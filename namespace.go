package resourcedir

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Namespaces: /ns/{name}/... is a directory of its own, with its own
// journal, faults and GUID stream, so that parallel tests sharing one server
// do not see each other (the README's "Parallel tests"). The unprefixed
// paths are the namespace "default".

const (
	defaultNamespace  = "default"
	namespacePrefix   = "/ns/"
	maxNamespaceName  = 64
	namespaceNameHelp = "1 to 64 characters of A-Z a-z 0-9 . _ -"
	// namespaceSuffixLen is the hex length of the random part of a created
	// name: 64 bits, so that runs repeated with -count=2, or two test
	// packages sharing one server, never draw the same name.
	namespaceSuffixLen = 16
	// maxNamespacePrefix leaves room in a name for "-" and the random part.
	maxNamespacePrefix = maxNamespaceName - 1 - namespaceSuffixLen
)

// namespace is one isolated directory.
type namespace struct {
	name    string
	store   *store
	journal *journal
	faults  faultList
	// created, and the Unix nanoseconds of the last request not the
	// console's (lastRequest) and of the last request of any kind but a
	// health probe (lastActivity), each set at its start and end (0:
	// none), are what GET /__admin/namespaces shows; -namespace-idle reads
	// lastActivity, so that a person using the console keeps it.
	created      time.Time
	lastRequest  atomic.Int64
	lastActivity atomic.Int64
	// transient: a namespace that does not exist, as a read that creates
	// nothing sees it (transientNamespace); nobody writes to its journal.
	transient bool
	// inFlight counts the requests being served, the console's included: a
	// long poll or a hanging fault outlasts -namespace-idle without the
	// namespace going.
	inFlight atomic.Int32
}

// idleSince is the namespace's last activity, or its creation.
func (ns *namespace) idleSince() time.Time {
	if last := ns.lastActivity.Load(); last != 0 {
		return time.Unix(0, last)
	}
	return ns.created
}

// namespaces holds every namespace by name. Each has its own locks, so a
// busy namespace does not hold up the others; this lock is taken only to
// find, create or remove one.
type namespaces struct {
	mu     sync.RWMutex
	byName map[string]*namespace
	// changed is the generation of the last namespace added or removed, or
	// restore: a snapshot must see the set change even when no store did.
	changed uint64
}

// namespaceNameChars are the characters of a namespace name: names appear
// in URLs and logs, so they are kept plain.
const namespaceNameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

// validNamespaceName: 1 to maxNamespaceName namespaceNameChars.
func validNamespaceName(name string) bool {
	return name != "" && len(name) <= maxNamespaceName && strings.Trim(name, namespaceNameChars) == ""
}

// splitNamespace cuts /ns/{name} off a path; ok is false when the path has
// no such prefix. rest keeps its leading slash ("" for /ns/{name} alone).
func splitNamespace(p string) (name, rest string, ok bool) {
	after, found := strings.CutPrefix(p, namespacePrefix)
	if !found {
		return defaultNamespace, p, false
	}
	name, rest, slash := strings.Cut(after, "/")
	if slash {
		rest = "/" + rest
	}
	return name, rest, true
}

// addNamespace returns the namespace name, creating it from the seed unless
// it exists (created says which): of two requests for one new name, only
// one creates it. It is nil with an error when the name is new and the
// limit reached. With x, x's request counts in it (enter) in the same step.
func (s *Server) addNamespace(name string, x *exchange) (ns *namespace, created bool, err error) {
	// The seed's lock, then the namespaces', as PUT /__admin/seed takes
	// them: a new namespace is on the current seed before a PUT counts the
	// seeds namespaces are on, so that none is held beyond maxHeldSeeds.
	s.seedMu.Lock()
	defer s.seedMu.Unlock()
	s.spaces.mu.Lock()
	defer s.spaces.mu.Unlock()
	if ns := s.spaces.byName[name]; ns != nil {
		ns.enter(x)
		return ns, false, nil
	}
	if len(s.spaces.byName) >= s.cfg.MaxNamespaces {
		return nil, false, errorf(http.StatusTooManyRequests, "The namespace %q would be one more than the limit of %d namespaces (-max-namespaces); delete one with DELETE /__admin/namespaces/{name}.",
			name, s.cfg.MaxNamespaces)
	}
	ns = s.newNamespace(name, newLayer(s.seed, s.cfg.IDSeed))
	s.spaces.byName[name] = ns
	s.spaces.changed = nextGeneration()
	ns.enter(x)
	return ns, true, nil
}

// enterNamespace returns the namespace name if it exists, else nil, and
// counts x's request in it (enter) under the same lock: the reaper, which
// removes a namespace only with none in flight under the write lock, can
// no longer remove it between the look-up and the count and leave the
// request to answer into a namespace that is gone.
func (s *Server) enterNamespace(x *exchange, name string) *namespace {
	s.spaces.mu.RLock()
	defer s.spaces.mu.RUnlock()
	ns := s.spaces.byName[name]
	if ns != nil {
		ns.enter(x)
	}
	return ns
}

// enter counts x's request as activity in ns and in flight until finish
// (leave), the console's included (a person using it keeps the namespace),
// unless it is a health probe, which is no activity: a probe every few
// seconds must not keep a leaked namespace for ever. Called under the
// namespaces' lock.
func (ns *namespace) enter(x *exchange) {
	if x == nil || x.using != nil || isHealthProbe(x.req) {
		return
	}
	ns.inFlight.Add(1)
	ns.lastActivity.Store(x.start.UnixNano())
	x.using = ns
}

// leave ends what enter began, at the request's end.
func (ns *namespace) leave(x *exchange) {
	now := time.Now().UnixNano()
	ns.lastActivity.Store(now)
	if x.client {
		ns.lastRequest.Store(now)
	}
	ns.inFlight.Add(-1)
}

// transientNamespace is what a read that creates nothing (the console's,
// a health probe) sees of a namespace that does not exist: a fresh one, as
// the first client request would make it, kept by nobody.
func (s *Server) transientNamespace(name string) *namespace {
	ns := s.newNamespace(name, newLayer(s.currentSeed(), s.cfg.IDSeed))
	ns.transient = true
	return ns
}

// isHealthProbe: GET or HEAD of /__admin/health, in any namespace.
func isHealthProbe(r *http.Request) bool {
	_, rest, _ := splitNamespace(r.URL.Path)
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && rest == "/__admin/health"
}

// lookupNamespace returns the namespace name if it exists, else nil.
func (s *Server) lookupNamespace(name string) *namespace {
	s.spaces.mu.RLock()
	defer s.spaces.mu.RUnlock()
	return s.spaces.byName[name]
}

func (s *Server) newNamespace(name string, store *store) *namespace {
	return &namespace{name: name, store: store, journal: newJournal(s.cfg.JournalSize, &s.journals), created: time.Now()}
}

// sortedNamespaces returns every namespace, by name.
func (s *Server) sortedNamespaces() []*namespace {
	s.spaces.mu.RLock()
	all := slices.Collect(maps.Values(s.spaces.byName))
	s.spaces.mu.RUnlock()
	slices.SortFunc(all, func(a, b *namespace) int { return strings.Compare(a.name, b.name) })
	return all
}

func (s *Server) listNamespaces(x *exchange, r *http.Request) (any, error) {
	type entry struct {
		Name         string
		Resources    int
		Created      time.Time
		LastRequest  *time.Time // null until a client's first request
		LastActivity *time.Time // any request's but a health probe's, the console's included: what -namespace-idle reads
	}
	all := s.sortedNamespaces()
	out := struct {
		Namespaces []entry
		Total      int
	}{Namespaces: make([]entry, len(all)), Total: len(all)}
	for i, ns := range all {
		out.Namespaces[i] = entry{Name: ns.name, Resources: ns.store.count(), Created: ns.created.UTC()}
		if last := ns.lastRequest.Load(); last != 0 {
			out.Namespaces[i].LastRequest = new(time.Unix(0, last).UTC())
		}
		if last := ns.lastActivity.Load(); last != 0 {
			out.Namespaces[i].LastActivity = new(time.Unix(0, last).UTC())
		}
	}
	return out, nil
}

// removeIdleNamespaces removes the namespaces, default aside, idle since
// before cutoff, so that a shared server does not fill up with the ones
// tests leaked (-namespace-idle).
func (s *Server) removeIdleNamespaces(cutoff time.Time) {
	s.spaces.mu.Lock()
	var removed []string
	for name, ns := range s.spaces.byName {
		if name != defaultNamespace && ns.inFlight.Load() == 0 && ns.idleSince().Before(cutoff) {
			delete(s.spaces.byName, name)
			ns.journal.clear() // its entries' room in the journal budget, now
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		s.spaces.changed = nextGeneration()
	}
	s.spaces.mu.Unlock()
	for _, name := range removed {
		s.log.Info("removed an idle namespace", "namespace", name, "idle", s.cfg.NamespaceIdle.String())
	}
}

// reapIdleNamespaces removes idle namespaces, a few times per
// -namespace-idle so that none outlives it by much, until the server closes.
func (s *Server) reapIdleNamespaces() {
	tick := time.NewTicker(min(max(s.cfg.NamespaceIdle/4, 10*time.Millisecond), time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-s.closing:
			return
		case now := <-tick.C:
			s.removeIdleNamespaces(now.Add(-s.cfg.NamespaceIdle))
		}
	}
}

func (s *Server) deleteNamespace(x *exchange, r *http.Request) (any, error) {
	name := r.PathValue("name")
	if !validNamespaceName(name) {
		return nil, errorf(http.StatusBadRequest, "The namespace name %q is not %s.", name, namespaceNameHelp)
	}
	if name == defaultNamespace {
		return nil, errorf(http.StatusBadRequest, "The namespace %q cannot be removed, only reset (POST /__admin/reset).", name)
	}
	s.spaces.mu.Lock()
	ns := s.spaces.byName[name]
	if ns != nil {
		delete(s.spaces.byName, name)
		s.spaces.changed = nextGeneration()
	}
	s.spaces.mu.Unlock()
	if ns == nil {
		return nil, errorf(http.StatusNotFound, "No namespace is named %q.", name)
	}
	ns.journal.clear() // its entries' room in the journal budget, now
	return struct {
		Deleted   string
		Resources int
	}{name, ns.store.count()}, nil
}

// snapshotSpaces gives the snapshot every namespace, by name, as its base
// (shared: written once) and its layer, the current seed (sharing a
// namespace's base when one is on it), and the change mark they reflect.
func (s *Server) snapshotSpaces() ([]snapshotSpace, *snapshotBase, uint64) {
	// The mark first: every change it covers is then in the states read
	// after it, and any change it does not cover has a larger generation.
	mark := s.changeMark()
	all := s.sortedNamespaces()
	spaces := make([]snapshotSpace, len(all))
	bases := map[*base]*snapshotBase{}
	for i, ns := range all {
		st := ns.store.state()
		spaces[i] = snapshotSpace{Name: ns.name, Replaced: st.replaced, Own: st.own}
		if len(st.base.rows) == 0 {
			continue
		}
		if bases[st.base] == nil {
			rs := make([]*resource, len(st.base.rows))
			for k := range st.base.rows {
				rs[k] = st.base.rows[k].res
			}
			bases[st.base] = &snapshotBase{Resources: rs, frozen: st.base}
		}
		spaces[i].Base = bases[st.base]
	}
	seed := s.currentSeed()
	if len(seed.rows) == 0 {
		return spaces, nil, mark
	}
	current := bases[seed]
	if current == nil {
		rs := make([]*resource, len(seed.rows))
		for k := range seed.rows {
			rs[k] = seed.rows[k].res
		}
		current = &snapshotBase{Resources: rs, frozen: seed}
	}
	return spaces, current, mark
}

// changeMark is the generation of the directory's last change (a store's,
// or a namespace added or removed): any later change has a larger one.
func (s *Server) changeMark() uint64 {
	s.spaces.mu.RLock()
	mark := s.spaces.changed
	all := slices.Collect(maps.Values(s.spaces.byName))
	s.spaces.mu.RUnlock()
	// Each store is read outside the namespaces' lock: a store held by a
	// long write (a large seed) must not keep a namespace from being added,
	// nor, behind that, every request from finding its namespace.
	for _, ns := range all {
		mark = max(mark, ns.store.generation())
	}
	return mark
}

// restore replaces every namespace with the snapshot's at path; the
// default one keeps its store, so that the caller's reference stays good.
// A base that is the seed's is shared with it, not frozen a second time.
// The snapshot's current seed becomes the current one unless the server
// was given a seed (-seed on the command line wins).
func (s *Server) restore(path string, spaces []snapshotSpace, current *snapshotBase) error {
	def := s.defaultNS()
	if err := s.keepSnapshotSeedIDs(path, spaces, current); err != nil {
		return err
	}
	s.seedMu.Lock()
	if current != nil && len(current.Resources) > 0 && len(s.seed.rows) == 0 {
		frozen, err := newBase(current.Resources)
		if err != nil {
			s.seedMu.Unlock()
			return fmt.Errorf("the current seed: %w", err)
		}
		current.frozen, s.seed = frozen, frozen
		s.seedClock++
		s.seedAge = map[*base]uint64{frozen: s.seedClock}
	}
	s.seedMu.Unlock()
	restored := map[string]*namespace{defaultNamespace: def}
	for _, sp := range spaces {
		b := emptyBase
		if sp.Base != nil {
			if sp.Base.frozen == nil && sameResources(sp.Base.Resources, s.seed) {
				sp.Base.frozen = s.seed
			} else if sp.Base.frozen == nil {
				frozen, err := newBase(sp.Base.Resources)
				if err != nil {
					return fmt.Errorf("namespace %s: %w", sp.Name, err)
				}
				sp.Base.frozen = frozen
			}
			b = sp.Base.frozen
		}
		store := def.store
		if sp.Name != defaultNamespace {
			store = newLayer(s.seed, s.cfg.IDSeed)
			restored[sp.Name] = s.newNamespace(sp.Name, store)
		}
		if err := store.restore(b, sp.Replaced, sp.Own); err != nil {
			return fmt.Errorf("namespace %s: %w", sp.Name, err)
		}
		s.seedMu.Lock()
		if _, ok := s.seedAge[b]; !ok && len(b.rows) > 0 {
			s.seedClock++
			s.seedAge[b] = s.seedClock
		}
		s.seedMu.Unlock()
	}
	s.spaces.mu.Lock()
	s.spaces.byName = restored
	s.spaces.changed = nextGeneration()
	s.spaces.mu.Unlock()
	if len(restored) > s.cfg.MaxNamespaces {
		// A limit lowered since the write is no reason to lose data.
		s.log.Warn("the snapshot holds more namespaces than -max-namespaces allows; all are kept, and no new one can be made until some are deleted",
			"namespaces", len(restored), "max", s.cfg.MaxNamespaces)
	}
	return nil
}

// keepSnapshotSeedIDs makes the snapshot's copies of the seed given at
// boot one seed. A resourcedir from before content-derived Ids (3738481
// and older) gave every seed resource without an Id a random one at each
// boot: its file holds the seed with those Ids, once for every boot a
// namespace stayed on, while the same seed derives other Ids now, and a
// new namespace would show a seed resource under an Id the restored ones
// do not know.
//
// The snapshot's Ids are kept, for the whole server: restored namespaces
// are where clients have stored Ids (the snapshot exists to keep what
// they wrote, and what they wrote refers to the seed by Id), while a new
// or reset namespace has given out none yet. Moving the restored ones to
// the derived Ids would turn every stored seed Id into a 404. The copy
// kept is the default namespace's, else the current seed's, else the one
// most namespaces are on; a namespace on another copy moves to it, its
// changed seed resources taking the kept Ids. The log says which, once.
func (s *Server) keepSnapshotSeedIDs(path string, spaces []snapshotSpace, current *snapshotBase) error {
	seed := s.currentSeed()
	if len(seed.rows) == 0 {
		return nil
	}
	copies, kept := seedCopies(seed, spaces, current)
	if len(copies) == 0 || len(copies) == 1 && sameResources(copies[0].Resources, seed) {
		return nil // the file's seed is this one's, Ids and all
	}
	frozen := seed
	if !sameResources(kept.Resources, seed) {
		var err error
		if frozen, err = newBase(kept.Resources); err != nil {
			return fmt.Errorf("the seed's Ids in the snapshot: %w", err)
		}
		frozen.derived = seed.derived
	}
	var moved []string
	for i := range spaces {
		sp := &spaces[i]
		if sp.Base == nil || sp.Base == kept || !slices.Contains(copies, sp.Base) {
			continue
		}
		for k, rr := range sp.Replaced {
			c := *rr.res
			c.set(fieldID, frozen.rows[rr.pos].res.id(), true)
			sp.Replaced[k].res = &c
		}
		moved = append(moved, sp.Name)
	}
	for _, c := range copies {
		c.frozen = frozen
	}
	attrs := []any{"path", path, "resources", len(frozen.rows)}
	if s.cfg.SeedFile != "" {
		attrs = append(attrs, "seed", s.cfg.SeedFile)
	}
	if len(moved) > 0 {
		attrs = append(attrs, "moved", strings.Join(moved, ","))
	}
	if frozen == seed {
		s.log.Warn("the snapshot holds copies of the seed with the Ids an older resourcedir gave it; "+
			"the default namespace is on the Ids derived from the seed, so the namespaces on a copy (moved) take those", attrs...)
		return nil
	}
	s.seedMu.Lock()
	s.seedAge[frozen] = s.seedAge[seed]
	delete(s.seedAge, seed)
	s.seed = frozen
	s.seedMu.Unlock()
	forgetFrozenSeed(seed)
	s.log.Warn("the snapshot holds the seed with the Ids an older resourcedir gave it, not the ones derived from its content now; "+
		"every namespace, new and reset ones too, keeps the snapshot's Ids, so that Ids clients stored keep working, until the seed changes "+
		"(namespaces on another copy of it, if any, moved to these Ids)", attrs...)
	return nil
}

// seedCopies returns the snapshot's bases that are seed but for the Ids
// seed derives (copies an older resourcedir wrote with Ids of its own), and
// the one to keep: the default namespace's, else the current seed's, else
// the one most namespaces are on.
func seedCopies(seed *base, spaces []snapshotSpace, current *snapshotBase) (copies []*snapshotBase, kept *snapshotBase) {
	on := map[*snapshotBase]int{} // namespaces on each copy
	isCopy := func(b *snapshotBase) bool {
		if b == nil {
			return false
		}
		if _, ok := on[b]; !ok {
			if !sameSeedBut(b.Resources, seed, seed.derivedAt) {
				return false
			}
			copies, on[b] = append(copies, b), 0
		}
		return true
	}
	for _, sp := range spaces {
		if isCopy(sp.Base) {
			on[sp.Base]++
			if sp.Name == defaultNamespace {
				kept = sp.Base
			}
		}
	}
	if isCopy(current) && kept == nil {
		kept = current
	}
	if kept == nil && len(copies) > 0 {
		kept = slices.MaxFunc(copies, func(a, b *snapshotBase) int { return cmp.Compare(on[a], on[b]) })
	}
	return copies, kept
}

// sameSeedBut reports whether rs are b's resources, value for value, but
// for the Ids at the positions idMayDiffer names.
func sameSeedBut(rs []*resource, b *base, idMayDiffer func(i int) bool) bool {
	if len(rs) != len(b.rows) {
		return false
	}
	for i, r := range rs {
		o := b.rows[i].res
		x, y := r.vals, o.vals
		if idMayDiffer(i) {
			x[fieldID], y[fieldID] = "", ""
		}
		if x != y || r.null != o.null || !slices.Equal(r.types, o.types) || !bytes.Equal(r.address, o.address) {
			return false
		}
	}
	return true
}

// sameResources reports whether rs are b's resources, value for value.
func sameResources(rs []*resource, b *base) bool {
	return slices.EqualFunc(rs, b.rows, func(r *resource, e entry) bool {
		o := e.res
		return r.vals == o.vals && r.null == o.null && slices.Equal(r.types, o.types) && bytes.Equal(r.address, o.address)
	})
}

// createNamespace is POST /__admin/namespaces: a new namespace under a
// name nobody has used, for a test that wants a fresh directory without
// inventing a unique name.
func (s *Server) createNamespace(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	prefix, err := parseNamespaceRequest(body)
	if err != nil {
		return nil, err
	}
	// A name already taken (by chance, or by a client that chose it) is
	// drawn again rather than shared.
	suffix := make([]byte, namespaceSuffixLen/2)
	for range 8 {
		rand.Read(suffix) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24)
		name := prefix + "-" + hex.EncodeToString(suffix)
		_, isNew, err := s.addNamespace(name, nil)
		if err != nil {
			return nil, err
		}
		if isNew {
			baseURL := requestScheme(r) + "://" + requestHost(r) + namespacePrefix + name
			return created{struct{ Name, BaseURL string }{name, baseURL}}, nil
		}
	}
	return nil, fmt.Errorf("create a namespace: every name drawn with the prefix %q was taken", prefix)
}

// parseNamespaceRequest reads the optional {"Prefix": "..."} of POST
// /__admin/namespaces; an empty body or {} gives the prefix "ns".
func parseNamespaceRequest(body []byte) (string, error) {
	prefix := "ns"
	props, ok := adminObject(body)
	if !ok {
		return "", errorf(http.StatusBadRequest, "The body is a JSON object such as %s, or empty.", `{"Prefix": "TestCreate"}`)
	}
	ms := modelState{}
	if raw, ok := adminProps(props, []string{"Prefix"}, "", "A namespace request", &ms)["Prefix"]; ok && string(raw) != "null" {
		var p string
		switch {
		case json.Unmarshal(raw, &p) != nil:
			ms.add("Prefix", "Prefix must be a string.")
		case len(p) > maxNamespacePrefix || !validNamespaceName(p):
			ms.add("Prefix", fmt.Sprintf("The Prefix %q is not 1 to %d characters of A-Z a-z 0-9 . _ - (the name adds a dash and %d more).",
				p, maxNamespacePrefix, namespaceSuffixLen))
		default:
			prefix = p
		}
	}
	if !ms.empty() {
		return "", invalid(ms)
	}
	return prefix, nil
}

// requestHost is the host:port the client reached the server by, so that
// a BaseURL works from where it asked; for an HTTP/1.0 request without
// Host, the address it arrived on.
func requestHost(r *http.Request) string {
	if r.Host != "" {
		return r.Host
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return addr.String()
	}
	return "127.0.0.1"
}

// requestScheme is the scheme the client used: https over TLS.
func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
