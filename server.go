package resourcedir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
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
	// seed is the current seed, frozen: the -seed file's, or the last
	// PUT /__admin/seed's; where new namespaces and resets start. seedMu
	// guards it and seedAge (when each seed held became current, to name
	// the oldest), and makes one PUT /__admin/seed at a time.
	seed      *base
	seedMu    sync.Mutex
	seedAge   map[*base]uint64
	seedClock uint64

	version serviceVersion // what GET /api/v2/version answers

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
}

func errNoRoute(path string) *apiError {
	return errorf(http.StatusNotFound, "No resource matches the path %s.", path)
}

// defaultNS is the namespace of the unprefixed paths.
func (s *Server) defaultNS() *namespace { return s.lookupNamespace(defaultNamespace) }

// beginShutdown ends pending injected delays; Serve registers it with
// http.Server.RegisterOnShutdown.
func (s *Server) beginShutdown() { s.closeClosing.Do(func() { close(s.closing) }) }

// writeTimeout stays above the longest injected fault delay; a hang fault
// without DelayMs lets its connection go then.
const writeTimeout = maxFaultDelay + time.Minute

// newHTTPServer serves h with the production settings.
func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second, // cuts off a client that trickles headers byte by byte
		ReadTimeout:       time.Minute,      // leaves time for a large seed
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// OPTIONS * is answered like every other request, not by net/http.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// Serve serves s on ln with the binary's settings (timeouts, header limits)
// until ctx ends, then stops as the binary does at SIGTERM: it stops
// accepting, lets the requests in flight finish (30 s at most) and closes
// s, writing its snapshot. On a loopback listener a request whose Host is
// not a loopback name is refused (DNS rebinding) unless
// Config.AllowedHosts names it. A TLS listener with "h2" in its NextProtos
// serves HTTP/2 too.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.cfg.loopbackOnly = isLoopbackAddr(ln.Addr().String())
	hs := newHTTPServer(s, s.log)
	hs.RegisterOnShutdown(s.beginShutdown)
	failed := make(chan error, 1)
	go func() { failed <- hs.Serve(ln) }()
	select {
	case err := <-failed:
		return errors.Join(fmt.Errorf("serve: %w", err), s.Close())
	case <-ctx.Done():
	}
	s.log.Info("shutting down: draining in-flight requests")
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := hs.Shutdown(drain)
	if err != nil {
		err = fmt.Errorf("shutdown: %w", err)
	}
	// Written even when draining timed out: what was acknowledged is kept.
	return errors.Join(err, s.Close())
}
