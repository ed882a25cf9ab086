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
// New returns the server as an http.Handler, to serve or mount as one likes.
// The command line is Main; cmd/resourcedir is the binary.
package resourcedir

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Config is a server's settings. The zero value is the binary's defaults
// with no seed and no snapshot; each field a flag also sets names it.
type Config struct {
	// SeedFile names a JSON file holding an array of resources (the
	// POST /__admin/resources format) that every namespace starts from and
	// every reset goes back to (-seed).
	SeedFile string
	// Seed adds resources to the seed: JSON text (a string, []byte or
	// json.RawMessage) or any value that encoding/json turns into an array
	// of resources, such as []map[string]any.
	Seed any
	// Generate adds this many generated resources to the seed, the same
	// ones for the same RandSeed (resourcedir generate -n N -rand-seed S).
	Generate int
	RandSeed uint64 // the generator's seed for Generate

	// IDSeed, when set, makes generated GUIDs the same every run (-id-seed).
	IDSeed *uint64
	// Filters is the filter dialect: "assetic" (the default: only what the
	// real service documents) or "kendo" (-filters).
	Filters string

	MaxPageSize int   // largest list pageSize; larger ones are clamped (-max-page-size, 500)
	MaxBody     int64 // largest request body in bytes; larger ones are a 413 (-max-body, 1 MiB)
	MaxSeedBody int64 // largest seed, file or POST /__admin/resources body (-max-seed-body, 64 MiB)
	// MaxRequestBytes bounds the request bodies that every request being
	// served holds at once; a body beyond it is answered 503 with
	// Retry-After (-max-request-bytes, 256 MiB).
	MaxRequestBytes int64
	JournalSize     int // requests each journal keeps; 0 means 1000, negative turns it off (-journal-size)
	// JournalBudget bounds the bytes that the journals of every namespace
	// hold together; beyond it the oldest entries go first, whichever
	// namespace holds them (-journal-budget, 256 MiB).
	JournalBudget int64
	MaxNamespaces int // namespaces that may exist at once (-max-namespaces, 1000)
	// MaxFaultBodies bounds the bytes the bodies and headers of every
	// namespace's faults hold together; a POST /__admin/faults beyond it
	// is a 400 (-max-fault-bodies, 64 MiB).
	MaxFaultBodies int64

	Auth         string   // "user:token" to require as HTTP Basic credentials (-auth); "" for none
	CORSOrigins  []string // origins (scheme://host[:port]) browsers may call from, "*" for any (-cors); none by default
	AllowedHosts []string // Host names admitted besides loopback ones on a loopback listener (-allowed-hosts)

	// NamespaceIdle, when positive, removes the namespaces (default aside)
	// that no request touched for that long (-namespace-idle).
	NamespaceIdle time.Duration

	// Snapshot names the snapshot file, loaded by New and written every
	// SnapshotInterval (default 10s) when something changed and by Close;
	// "" keeps everything in memory only.
	Snapshot         string
	SnapshotInterval time.Duration

	// Logger receives the server's log, one line per request at Info;
	// nil discards it.
	Logger *slog.Logger

	// loopbackOnly: the server listens on loopback, so a Host that is not a
	// loopback name is refused unless AllowedHosts names it (DNS rebinding).
	loopbackOnly bool
	// seedResources is a seed decoded by the caller (compare's and the
	// tests', which go to newServer, not New), and
	// seedBase the whole seed frozen, what every namespace starts from.
	seedResources []*resource
	seedBase      *base
}

// defaultConfig is the configuration of the binary with no flags.
func defaultConfig() Config {
	return Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 64 << 20, JournalSize: 1000, MaxNamespaces: 1000,
		JournalBudget: 256 << 20, MaxRequestBytes: 256 << 20, MaxFaultBodies: 64 << 20, Filters: string(dialectAssetic)}
}

// journalOff is JournalSize's value for no journal: 0 means the default.
const journalOff = -1

// withDefaults fills the limits a caller left at zero from defaultConfig,
// rather than divide every list by zero or refuse every body. A negative
// JournalSize becomes 0, which the server reads as off.
func (c Config) withDefaults() Config {
	d := defaultConfig()
	atLeastOne(&c.MaxPageSize, d.MaxPageSize)
	atLeastOne(&c.MaxBody, d.MaxBody)
	atLeastOne(&c.MaxSeedBody, d.MaxSeedBody)
	atLeastOne(&c.MaxNamespaces, d.MaxNamespaces)
	atLeastOne(&c.MaxRequestBytes, d.MaxRequestBytes)
	atLeastOne(&c.JournalBudget, d.JournalBudget)
	atLeastOne(&c.MaxFaultBodies, d.MaxFaultBodies)
	if c.JournalSize == 0 {
		c.JournalSize = d.JournalSize
	}
	c.JournalSize = max(c.JournalSize, 0)
	c.Filters = cmp.Or(c.Filters, d.Filters)
	atLeastOne(&c.SnapshotInterval, defaultSnapshotInterval)
	return c
}

const defaultSnapshotInterval = 10 * time.Second

// atLeastOne gives a limit left below 1 its default.
func atLeastOne[T ~int | ~int64](limit *T, def T) {
	if *limit < 1 {
		*limit = def
	}
}

// New returns a server configured by cfg, ready to serve as an
// http.Handler: its seed read, and with cfg.Snapshot its snapshot loaded,
// locked against a second server and written on a timer. Close it when
// the http.Server in front of it has stopped.
func New(cfg Config) (*Server, error) {
	return open(context.Background(), cfg)
}

// open is New with a context that abandons the read of a seed file that
// never comes (a FIFO): main's, which SIGTERM ends.
func open(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	dialect, err := parseDialect(cfg.Filters)
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	cfg.Filters = string(dialect) // "Kendo" is kendo, as -filters reads it
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
		if err := generateItems(&items, c.Generate, c.RandSeed); err != nil {
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
