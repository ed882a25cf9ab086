package resourcedir

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// adminPrefix is where the test-double controls live, apart from the API.
const adminPrefix = "/__admin/"

const defaultPageSize = 20

// Server serves the emulated API and the test-double controls.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
	// routes is the table (routes) the mux serves and the OpenAPI document
	// describes: held here because the document's own handler is in the
	// table, which the table's initialization may not refer back to.
	routes []route
	snap   *snapshotter // nil when running in memory only

	spaces namespaces
	seed   *base // the -seed file, frozen: where every namespace starts

	// closing is closed when the server begins to shut down, to cut
	// injected delays short.
	closing      chan struct{}
	closeClosing sync.Once
	// closeOnce, stopTimer and timerDone: Close writes the snapshot once,
	// after the timer's last write has ended.
	closeOnce sync.Once
	stopTimer context.CancelFunc
	timerDone chan struct{}

	// journals bounds what every namespace's journal holds together.
	journals journalBudget
	// requestBytes bounds the bodies held by the requests being served.
	requestBytes requestBytes

	// faultAdds: one POST /__admin/faults at a time checks and takes room
	// under -max-fault-bodies, which bounds every namespace's together.
	faultAdds sync.Mutex

	requestIDPrefix string
	requestSeq      atomic.Uint64

	// droppedLogLines counts the log lines the log could not take (a pipe
	// nobody reads); nil when the server has no such log.
	droppedLogLines func() uint64
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
	s.journals.limit = s.cfg.JournalBudget
	s.requestBytes.limit = s.cfg.MaxRequestBytes
	// The seed is frozen once and shared by every namespace.
	seed, err := cfg.seedBase, error(nil)
	if seed == nil {
		seed, err = newBase(cfg.seedResources)
	}
	if err != nil {
		// Each source of the seed was checked when it was read
		// (decodeSeed): only an Id given by two of them gets here.
		s.log.Error("the seed could not be loaded; namespaces start empty", "error", err)
		seed = emptyBase
	}
	s.seed = seed
	store.setSeed(seed)
	def := s.newNamespace(defaultNamespace, store)
	s.spaces.byName = map[string]*namespace{defaultNamespace: def}
	allowed := map[string][]string{}
	d := docContext{openAPILimitsOf(s.cfg), currentOpenAPITables()}
	for _, rt := range s.routes {
		// A control that documents no query parameter refuses any, so that
		// a typo does not pass silently; the API ignores unknown ones.
		strict := strings.HasPrefix(rt.pattern, "/__admin/") && len(rt.doc(d).params) == 0
		s.mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			x := w.(*exchange) // the pipeline passes its exchange to every handler
			var v any
			var err error
			if strict {
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
			s.writeError(x, &apiError{Status: http.StatusMethodNotAllowed, Message: fmt.Sprintf(
				"The method %s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, allow)})
		})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		x := w.(*exchange)
		s.writeError(x, errNoRoute(x.path))
	})
	return s
}

func errNoRoute(path string) *apiError {
	return &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No resource matches the path %s.", path)}
}

// defaultNS is the namespace of the unprefixed paths.
func (s *Server) defaultNS() *namespace { return s.lookupNamespace(defaultNamespace) }

// beginShutdown ends pending injected delays; main registers it with
// http.Server.RegisterOnShutdown.
func (s *Server) beginShutdown() { s.closeClosing.Do(func() { close(s.closing) }) }
