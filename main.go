// Command resourcedir is a local, in-memory stand-in for the Resource
// Directory API (/api/v2/resource), with snapshot persistence and test-double
// controls under /__admin/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
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
	logLevel         slog.Level
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
	fs.Func("log-level", "least severe `level` logged: debug, info (the default: one line per request), warn (problems only) or error", func(s string) error {
		level, ok := logLevels[s]
		if !ok {
			return errors.New("want debug, info, warn or error")
		}
		o.logLevel = level
		return nil
	})
	fs.IntVar(&o.cfg.MaxPageSize, "max-page-size", o.cfg.MaxPageSize, "largest list pageSize; larger requests are clamped")
	fs.Int64Var(&o.cfg.MaxBody, "max-body", o.cfg.MaxBody, "largest request body in `bytes`")
	fs.Int64Var(&o.cfg.MaxSeedBody, "max-seed-body", o.cfg.MaxSeedBody, "largest POST /__admin/resources body in `bytes`")
	fs.IntVar(&o.cfg.JournalSize, "journal-size", o.cfg.JournalSize, "how many /api/v2 requests /__admin/requests keeps; 0 turns the journal off")
	fs.StringVar(&o.cfg.Auth, "auth", "", "`user:token` required as HTTP Basic credentials on every path")
	fs.StringVar(&o.cfg.CORSOrigin, "cors", "", "`origin` allowed to call from a browser (\"*\" for any); off when empty")
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
	case o.cfg.MaxSeedBody < 1:
		return nil, fmt.Errorf("-max-seed-body must be at least 1, not %d", o.cfg.MaxSeedBody)
	case o.cfg.JournalSize < 0:
		return nil, fmt.Errorf("-journal-size must be 0 or more, not %d", o.cfg.JournalSize)
	case o.cfg.Auth != "" && !strings.Contains(o.cfg.Auth, ":"):
		return nil, errors.New("-auth must be user:token")
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

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

func newLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// run starts the server and blocks until ctx is cancelled, then drains
// in-flight requests. It is main without the process: tests call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	logs := newLogWriter(stdout)
	// Last out, on every return: the lines of a stop are written. The
	// error of a destination that takes nothing is not the stop's: those
	// lines are counted dropped, and the process must still end.
	defer logs.Close() //nolint:errcheck // see above
	logger := newLogger(o.logFormat, o.logLevel, logs)
	idSeed, err := parseIDSeed(o.idSeed)
	if err != nil {
		return err
	}
	store := NewStore(idSeed)
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
	if o.seedFile != "" {
		if err := seedFromFile(o.seedFile, store, logger); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	httpSrv := newHTTPServer(srv, logger)
	httpSrv.RegisterOnShutdown(srv.beginShutdown)
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

// Server timeouts. Headers must arrive within readHeaderTimeout, so a client
// that trickles them byte by byte is cut off; a whole request (a large seed
// included) within readTimeout; a response must be written within
// writeTimeout, which stays above the longest injected fault delay.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = maxFaultDelay + time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// seedFromFile loads the seed file into an empty store; a store restored
// from a snapshot is left alone, so a restart does not seed twice.
func seedFromFile(path string, store *Store, logger *slog.Logger) error {
	if n := store.Len(); n > 0 {
		logger.Info("seed file skipped: the store already holds resources", "path", path, "resources", n)
		return nil
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	resources, err := decodeSeed(body)
	if err == nil {
		err = store.Insert(resources)
	}
	if err != nil {
		return fmt.Errorf("seed %s: %s", path, describeError(err))
	}
	logger.Info("seeded", "path", path, "resources", len(resources))
	return nil
}

// describeError flattens an API error into one line for the terminal.
func describeError(err error) string {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	parts := []string{strings.TrimSuffix(ae.Message, ".")}
	for _, key := range slices.Sorted(maps.Keys(ae.ModelState)) {
		parts = append(parts, fmt.Sprintf("item %s: %s", key, strings.Join(ae.ModelState[key], " ")))
	}
	return strings.Join(parts, "; ")
}

// parseIDSeed reads -id-seed; nil (random GUIDs) when it is empty.
func parseIDSeed(seed string) (*uint64, error) {
	if seed == "" {
		return nil, nil
	}
	if u, err := strconv.ParseUint(seed, 10, 64); err == nil {
		return &u, nil
	}
	n, err := strconv.ParseInt(seed, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("-id-seed must be an integer, not %q", seed)
	}
	u := uint64(n)
	return &u, nil
}
