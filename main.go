// Command resourcedir is a local, in-memory stand-in for the Resource
// Directory API (/api/v2/resource), with snapshot persistence and test-double
// controls under /__admin/.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "resourcedir:", err)
		}
		os.Exit(exitCode(err))
	}
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

// options are the command-line settings.
type options struct {
	addr             string
	snapshotPath     string
	snapshotInterval time.Duration
	seedFile         string
	idSeed           string
	logFormat        string
	cfg              Config
}

// parseOptions reads flags, each of which can also come from the
// environment as RESOURCEDIR_<FLAG>; the command line wins.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: DefaultConfig()}
	fs := flag.NewFlagSet("resourcedir", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`address` to listen on (host:port); \":8080\" listens on every interface")
	fs.StringVar(&o.snapshotPath, "snapshot", "resourcedir.gob", "snapshot `file`; \"\" keeps everything in memory only")
	fs.DurationVar(&o.snapshotInterval, "snapshot-interval", 10*time.Second, "how often to write the snapshot when something changed")
	fs.StringVar(&o.seedFile, "seed", "", "JSON `file` with an array of resources to load into an empty store at boot")
	fs.StringVar(&o.idSeed, "id-seed", "", "integer `seed` that makes generated GUIDs the same on every run")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.IntVar(&o.cfg.MaxPageSize, "max-page-size", o.cfg.MaxPageSize, "largest list pageSize; larger requests are clamped")
	fs.Int64Var(&o.cfg.MaxBody, "max-body", o.cfg.MaxBody, "largest request body in `bytes` on /api/v2")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags start with -)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "RESOURCEDIR_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok := lookupEnv(getenv, env)
		if !ok || set[f.Name] || envErr != nil {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("environment %s=%q: %w", env, v, err)
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	switch {
	case o.cfg.MaxPageSize < 1:
		return nil, fmt.Errorf("-max-page-size must be at least 1, not %d", o.cfg.MaxPageSize)
	case o.cfg.MaxBody < 1:
		return nil, fmt.Errorf("-max-body must be at least 1, not %d", o.cfg.MaxBody)
	case o.snapshotInterval <= 0:
		return nil, fmt.Errorf("-snapshot-interval must be positive, not %s", o.snapshotInterval)
	case o.logFormat != "text" && o.logFormat != "json":
		return nil, fmt.Errorf("-log-format must be text or json, not %q", o.logFormat)
	}
	return o, nil
}

// lookupEnv reports a variable as set only when it is not empty: getenv
// cannot tell an empty variable from an unset one.
func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// run starts the server and blocks until ctx is cancelled, then drains
// in-flight requests. It is main without the process: tests call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := newLogger(o.logFormat, stdout)
	ids, err := idSource(o.idSeed)
	if err != nil {
		return err
	}
	store := NewStore(ids)
	srv := NewServer(o.cfg, store, logger)
	var snap *snapshotter
	if o.snapshotPath != "" {
		snap = newSnapshotter(o.snapshotPath, store, logger)
		if err := snap.load(); err != nil {
			return err
		}
		srv.snap = snap
	} else {
		logger.Info("snapshots off: the directory lives in memory only")
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	httpSrv := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("serving", "addr", "http://"+ln.Addr().String())

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	if snap != nil {
		go snap.run(ctx, o.snapshotInterval)
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shutdownErr := httpSrv.Shutdown(shutdownCtx)
	if shutdownErr != nil {
		shutdownErr = fmt.Errorf("shutdown: %w", shutdownErr)
	}
	// Written even when draining timed out: what was acknowledged is kept.
	if snap != nil {
		if _, err := snap.writeIfChanged(); err != nil {
			return errors.Join(shutdownErr, err)
		}
	}
	return shutdownErr
}

// idSource returns the randomness for generated GUIDs: crypto/rand (nil)
// unless a seed makes them reproducible.
func idSource(seed string) (io.Reader, error) {
	if seed == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(seed, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("-id-seed must be an integer, not %q", seed)
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(n))
	return rand.NewChaCha8(key), nil
}
