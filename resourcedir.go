// Package resourcedir is a local, in-memory stand-in for the Resource
// Directory API (/api/v2/resource): the same endpoints, JSON, validation and
// filter language, with test-double controls under /__admin/ (faults, a
// journal of what clients sent, isolated namespaces, reset and seed).
//
// In a Go test, RunT starts one for the test and hands back its URL:
//
//	dir := resourcedir.RunT(t, resourcedir.Config{SeedFile: "testdata/people.json"})
//	client := myclient.New(dir.URL) // the client under test
//
// ConnectT gives a test a fresh namespace of a server running in another
// process instead (resourcedir -- go test ./...), with the same controls.
// New returns the server as an http.Handler, to mount as one likes or to
// Serve on a listener. The command line is the program in cmd/resourcedir.
package resourcedir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// New returns a server configured by cfg, ready to serve as an
// http.Handler: its seed read, and with cfg.Snapshot its snapshot loaded,
// locked against a second server and written on a timer. Close it when
// the http.Server in front of it has stopped.
func New(cfg Config) (*Server, error) {
	return Open(context.Background(), cfg)
}

// Open is New with a context that abandons the read of a seed file that
// never comes (a FIFO): the program's, which SIGTERM ends.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	dialect, err := parseDialect(cfg.Filters)
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	cfg.Filters = string(dialect) // "Kendo" is kendo, as -filters reads it
	if _, err := parseServiceVersion(cfg.ServiceVersion); err != nil {
		return nil, err
	}
	if err := checkCreateStatus(cfg.CreateStatus); err != nil {
		return nil, err
	}
	if cfg.Auth != "" && !strings.Contains(cfg.Auth, ":") {
		return nil, errors.New("auth must be user:token")
	}
	for _, origin := range cfg.CORSOrigins {
		if err := validOrigin(origin); err != nil {
			return nil, fmt.Errorf("cors: %w", err)
		}
	}
	if cfg.seedBase, err = cfg.frozenSeed(ctx); err != nil {
		return nil, err
	}
	srv := newServer(cfg, newStore(cfg.IDSeed), cfg.Logger)
	if cfg.SeedFile != "" {
		srv.log.Info("seed read: every namespace starts from it, and every reset goes back to it",
			"path", cfg.SeedFile, "resources", len(cfg.seedBase.rows))
	}
	if cfg.Snapshot == "" {
		srv.log.Info("snapshots off: the directory lives in memory only")
	} else {
		snap := newSnapshotter(cfg.Snapshot, srv, srv.log)
		if err := snap.open(); err != nil {
			return nil, err
		}
		srv.snap = snap
		timer, stop := context.WithCancel(context.Background())
		srv.stopTimer = stop
		srv.timerDone = make(chan struct{})
		go func() {
			defer close(srv.timerDone)
			snap.run(timer, cfg.SnapshotInterval)
		}()
	}
	// Started last: a server New refuses leaves no goroutine behind.
	if cfg.NamespaceIdle > 0 {
		go srv.reapIdleNamespaces()
	}
	return srv, nil
}

// frozenSeeds keeps this process's frozen seeds by their content, so that
// tests that each start a server from one seed decode and index it once
// (with 1,000 resources, 6 ms of BenchmarkRunT's 7). Frozen seeds never
// change, so servers share them as namespaces do.
var (
	frozenSeedsMu sync.Mutex
	frozenSeeds   = map[[sha256.Size]byte]*base{}
	frozenOrder   [][sha256.Size]byte // oldest first, to bound the map
)

const maxFrozenSeeds = 16

// frozenSeed returns the seed file, Seed and Generate, in that order,
// decoded and frozen.
func (c Config) frozenSeed(ctx context.Context) (*base, error) {
	var file, values []byte
	var err error
	if c.SeedFile != "" {
		if file, err = readSeedFile(ctx, c.SeedFile, c.MaxSeedBody); err != nil {
			return nil, err
		}
	}
	if c.Seed != nil {
		if values, err = asJSON(c.Seed); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	if file == nil && values == nil && c.Generate <= 0 {
		return emptyBase, nil
	}
	// Each source is framed by its length, so that no two sets of sources
	// hash alike.
	key := sha256.Sum256(fmt.Appendf(nil, "%d:%s%d:%sgenerate %d %d",
		len(file), file, len(values), values, c.Generate, c.RandSeed))
	frozenSeedsMu.Lock()
	got := frozenSeeds[key]
	frozenSeedsMu.Unlock()
	if got != nil {
		return got, nil
	}
	type source struct {
		text []byte
		what string // in a message
	}
	sources := []source{{file, "seed " + c.SeedFile}, {values, "seed"}}
	if c.Generate > 0 {
		var items bytes.Buffer
		if err := GenerateSeed(&items, c.Generate, c.RandSeed); err != nil {
			return nil, err
		}
		sources = append(sources, source{items.Bytes(), "generate"})
	}
	var all []*resource
	for _, src := range sources {
		if src.text == nil {
			continue
		}
		rs, err := decodeSeed(src.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", src.what, describeError(err))
		}
		all = append(all, rs...)
	}
	frozen, err := newBase(all)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	frozenSeedsMu.Lock()
	defer frozenSeedsMu.Unlock()
	if frozenSeeds[key] == nil {
		if len(frozenOrder) == maxFrozenSeeds {
			delete(frozenSeeds, frozenOrder[0])
			frozenOrder = frozenOrder[1:]
		}
		frozenSeeds[key] = frozen
		frozenOrder = append(frozenOrder, key)
	}
	return frozen, nil
}

// asJSON is v as JSON: v itself when it is JSON text (a string, []byte
// or json.RawMessage), else what encoding/json makes of it.
func asJSON(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}

// Close ends the server's injected delays and hangs, and with a snapshot
// stops its timer, writes it a last time when something changed and lets
// another server use the file. Call it after the http.Server in front of
// it has shut down (http.Server.Shutdown, httptest.Server.Close), so that
// everything acknowledged is in the file. Calling it again does nothing.
func (s *Server) Close() error {
	s.beginShutdown()
	var err error
	s.closeOnce.Do(func() {
		if s.snap == nil {
			return
		}
		s.stopTimer()
		<-s.timerDone
		_, err = s.snap.writeIfChanged()
		s.snap.close()
	})
	return err
}

// newServer returns a Server whose default namespace is store; other
// namespaces get stores of their own. A nil logger discards logs.
func newServer(cfg Config, store *store, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IDSeed == nil {
		cfg.IDSeed = store.idSeed
	}
	s := &Server{
		cfg: cfg.withDefaults(), log: logger, mux: http.NewServeMux(), routes: routes,
		closing: make(chan struct{}), requestIDPrefix: uuid.NewString()[:8],
	}
	// Open refused a version that does not parse; the tests' servers,
	// which come here directly, get the default for one.
	var err error
	if s.version, err = parseServiceVersion(s.cfg.ServiceVersion); err != nil {
		s.version, _ = parseServiceVersion(defaultServiceVersion)
	}
	if checkCreateStatus(s.cfg.CreateStatus) != nil {
		s.cfg.CreateStatus = http.StatusCreated
	}
	s.journals.limit = s.cfg.JournalBudget
	s.requestBytes.limit = s.cfg.MaxRequestBytes
	// The seed is frozen once and shared by every namespace.
	seed := cfg.seedBase
	if seed == nil {
		seed, err = newBase(cfg.seedResources)
	}
	if err != nil {
		// Each source of the seed was checked when it was read
		// (decodeSeed): only an Id given by two of them gets here.
		s.log.Error("the seed could not be loaded; namespaces start empty", "error", err)
		seed = emptyBase
	}
	s.seed, s.seedAge = seed, map[*base]uint64{seed: 0}
	store.setSeed(seed)
	def := s.newNamespace(defaultNamespace, store)
	s.spaces.byName = map[string]*namespace{defaultNamespace: def}
	allowed := map[string][]string{}
	for _, rt := range s.routes {
		noQueryRead := rt.flags&strict != 0
		s.mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			x := w.(*exchange) // the pipeline passes its exchange to every handler
			var v any
			var err error
			if noQueryRead {
				err = noQuery(r)
			}
			if err == nil {
				v, err = rt.handle(s, x, r)
			}
			switch {
			case err != nil:
				s.writeError(x, err)
			case v != nil: // nil: the handler wrote its own answer (a console file)
				writeValue(x, v)
			}
		})
		allowed[rt.pattern] = append(allowed[rt.pattern], rt.method)
		if rt.method == http.MethodGet {
			allowed[rt.pattern] = append(allowed[rt.pattern], http.MethodHead)
		}
	}
	// ServeMux's own 405 and 404 are plain text; these are JSON.
	for pattern, methods := range allowed {
		slices.Sort(methods)
		allow := strings.Join(methods, ", ")
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			x := w.(*exchange)
			x.Header().Set("Allow", allow)
			s.writeError(x, errorf(http.StatusMethodNotAllowed, "The method %s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, allow))
		})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		x := w.(*exchange)
		s.writeError(x, errNoRoute(x.path))
	})
	return s
}

// forgetFrozenSeed drops b from the process's frozen seeds: a server that
// replaced it (keepSnapshotSeedIDs) must not leave a second copy of its
// seed in memory for the process's lifetime.
func forgetFrozenSeed(b *base) {
	frozenSeedsMu.Lock()
	defer frozenSeedsMu.Unlock()
	for key, got := range frozenSeeds {
		if got == b {
			delete(frozenSeeds, key)
			frozenOrder = slices.DeleteFunc(frozenOrder, func(k [sha256.Size]byte) bool { return k == key })
		}
	}
}
