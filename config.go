package resourcedir

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
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

	// ServiceVersion is what GET /api/v2/version answers: four
	// non-negative integers joined by dots, as .NET's System.Version
	// prints one ("" means 2026.4.1.1, a recent release of the real
	// service; -service-version).
	ServiceVersion string
	// CreateStatus is the status of a successful create: 201 (0 means
	// 201, as the real service answers) or 200, for a tenant that answers
	// so (-create-status).
	CreateStatus int

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
	// namespace holds them (-journal-budget, 32 MiB). It counts what an
	// entry holds; the process holds up to about twice that (the garbage
	// collector lets the heap grow to twice what is live), so that RSS
	// under a load that fills it stays within 1.5 times it plus 64 MB.
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

	// DroppedLogLines, when set, counts the lines Logger's destination
	// could not take (a pipe nobody reads), for /__admin/health.
	DroppedLogLines func() uint64

	// loopbackOnly: the server listens on loopback, so a Host that is not a
	// loopback name is refused unless AllowedHosts names it (DNS rebinding).
	loopbackOnly bool
	// seedResources is a seed decoded by the caller (compare's and the
	// tests', which go to newServer, not New), and
	// seedBase the whole seed frozen, what every namespace starts from.
	seedResources []*resource
	seedBase      *base
}

// DefaultConfig is the configuration of the binary with no flags: the
// limits that New gives the fields a Config leaves at zero.
func DefaultConfig() Config {
	return Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 64 << 20, JournalSize: 1000, MaxNamespaces: 1000,
		JournalBudget: 32 << 20, MaxRequestBytes: 256 << 20, MaxFaultBodies: 64 << 20, Filters: string(dialectAssetic),
		SnapshotInterval: 10 * time.Second, ServiceVersion: defaultServiceVersion, CreateStatus: http.StatusCreated}
}

// journalOff is JournalSize's value for no journal: 0 means the default.
const journalOff = -1

// withDefaults fills the limits a caller left at zero from defaultConfig,
// rather than divide every list by zero or refuse every body. A negative
// JournalSize stays negative (journalOff): Open and newServer both apply
// the defaults, and an "off" turned into 0 here became 1000 the second time.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
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
	if c.JournalSize < 0 {
		c.JournalSize = journalOff
	}
	c.Filters = cmp.Or(c.Filters, d.Filters)
	c.ServiceVersion = cmp.Or(c.ServiceVersion, d.ServiceVersion)
	c.CreateStatus = cmp.Or(c.CreateStatus, d.CreateStatus)
	atLeastOne(&c.SnapshotInterval, d.SnapshotInterval)
	return c
}

// atLeastOne gives a limit left below 1 its default.
func atLeastOne[T ~int | ~int64](limit *T, def T) {
	if *limit < 1 {
		*limit = def
	}
}

// defaultServiceVersion is a recent release of the real service: the
// vendor's client checks that Major is at least 2023.
const defaultServiceVersion = "2026.4.1.1"

// serviceVersion is a .NET System.Version as the real service writes it.
type serviceVersion struct {
	Major, Minor, Build, Revision int32
	// The high and low 16 bits of Revision, read as unsigned.
	MajorRevision, MinorRevision uint16
}

// parseServiceVersion reads four non-negative integers joined by dots,
// each within .NET's int range.
func parseServiceVersion(text string) (serviceVersion, error) {
	parts := strings.Split(text, ".")
	var n [4]int32
	bad := len(parts) != len(n)
	for i := 0; !bad && i < len(parts); i++ {
		v, err := strconv.ParseInt(parts[i], 10, 32)
		bad = err != nil || v < 0 || strings.TrimLeft(parts[i], "0123456789") != ""
		if !bad {
			n[i] = int32(v)
		}
	}
	if bad {
		return serviceVersion{}, fmt.Errorf("service version %q: want four non-negative integers joined by dots, each at most %d, as 2026.4.1.1", text, math.MaxInt32)
	}
	return serviceVersion{Major: n[0], Minor: n[1], Build: n[2], Revision: n[3],
		MajorRevision: uint16(uint32(n[3]) >> 16), MinorRevision: uint16(uint32(n[3]))}, nil
}

// checkCreateStatus refuses a create status other than 200 and 201.
func checkCreateStatus(status int) error {
	if status != http.StatusOK && status != http.StatusCreated {
		return fmt.Errorf("create status %d: want 201 (the real service's) or 200", status)
	}
	return nil
}
