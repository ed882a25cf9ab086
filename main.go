package resourcedir

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// Main runs the resourcedir command line (the server, its -- mode and the
// subcommands) with the process's arguments, environment and standard
// streams, handling SIGINT and SIGTERM, and returns the exit status:
// cmd/resourcedir is os.Exit(resourcedir.Main()).
func Main() int {
	// GUIDs from a pool of random bytes read in batches, not a read of
	// crypto/rand per create; set before anything runs, as the pool asks.
	uuid.EnableRandPool()
	// The first signal stops the server. A command run after -- gets
	// every one, through the context (see runCommand); the signal is the
	// context's cause, so that run tells it from a cancellation of its own.
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	forward := make(chan os.Signal, 8)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		for sig := range signals {
			cancel(stopSignal{sig})
			select {
			case forward <- sig:
			default: // a command that let eight pass will not heed a ninth
			}
		}
	}()
	ctx = context.WithValue(ctx, signalsKey{}, (<-chan os.Signal)(forward))
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		var ce *exitError
		if !errors.Is(err, flag.ErrHelp) && !(errors.As(err, &ce) && ce.err == nil) {
			fmt.Fprintln(os.Stderr, "resourcedir:", err)
		}
		return exitCode(err)
	}
	return 0
}

// signalsKey is the context key of the signals a command run after --
// gets: each SIGINT and SIGTERM that main receives, once.
type signalsKey struct{}

// stopSignal is the cause of main's context when a signal stops the server.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.sig.String() + " received" }

func exitCode(err error) int {
	var ee *exitError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	return 1
}

// exitError carries an exit status other than 1 out of run, to be the
// process's: the status of the command run after -- (err is what else went
// wrong, or nil when the command has spoken for itself and there is
// nothing to add), or compare's 1 (something differs) and 2 (it could not
// compare).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("the command exited with status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// options are the command-line settings.
type options struct {
	addr             string
	addrFile         string
	tls              bool
	tlsCert, tlsKey  string
	tlsCAFile        string
	snapshotPath     string // "" when snapshots are off
	snapshotInterval time.Duration
	seedFile         string
	idSeed           string
	logFormat        string
	version          bool
	logLevel         slog.Level
	cfg              Config
	// command is what follows --: run it against the server, then stop.
	command []string
}

// snapshotOff turns snapshots off, as "" does, in a form that an
// environment variable can carry (an empty variable counts as unset).
const snapshotOff = "off"

// newFlagSet defines every flag, writing into o. It prints nothing: the
// flag package reports a bad flag with its error and then the whole usage,
// in which the error is lost; ours is one line (flagError), and -help
// prints the usage itself.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("resourcedir", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage:
  resourcedir [flags]                        serve until SIGINT or SIGTERM
  resourcedir [flags] -- COMMAND [ARGS...]   serve while COMMAND runs, with RESOURCEDIR_URL
                                             set to the served URL; exit with its status
  resourcedir generate -n N [-rand-seed S]   write N realistic resources as a seed file
  resourcedir import -from URL [-scrub] ...  read a real directory into a seed file (GETs only)
  resourcedir compare -from URL ...          check resourcedir's answers against a real directory
  resourcedir health [URL]                   exit 0 when the server at URL (http://127.0.0.1:8080)
                                             answers its health check, 1 with the reason otherwise
  resourcedir SUBCOMMAND -h                  that subcommand's flags
Every flag can also be set as RESOURCEDIR_<FLAG>, such as RESOURCEDIR_SNAPSHOT_INTERVAL=30s.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`address` to listen on (host:port); \":8080\" listens on every interface, port 0 picks a free one")
	fs.StringVar(&o.addrFile, "addr-file", "", "`file` to write the served URL to once the server accepts connections (removed at exit)")
	fs.StringVar(&o.snapshotPath, "snapshot", "resourcedir.gob", "snapshot `file`; \"off\" or \"\" keeps everything in memory only (a file named off is ./off)")
	o.snapshotInterval = 10 * time.Second
	fs.Var(durationFlag{&o.snapshotInterval}, "snapshot-interval", "how often to write the snapshot when something changed (a `duration`: 10s, 500ms, 1m)")
	fs.BoolVar(&o.tls, "tls", false, "serve HTTPS with a certificate generated at start for localhost, 127.0.0.1, ::1 and the -allowed-hosts names")
	fs.StringVar(&o.tlsCAFile, "tls-ca-file", "", "`file` to write the generated certificate's CA to (default: beside the snapshot, else a temporary folder)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate `file` (with -tls-key) instead of a generated one")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key `file` of -tls-cert")
	fs.StringVar(&o.seedFile, "seed", "", "JSON `file` with an array of resources to load into an empty store at boot (at most -max-seed-body bytes)")
	fs.StringVar(&o.idSeed, "id-seed", "", "integer `seed` that makes generated GUIDs the same on every run")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
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
	fs.Int64Var(&o.cfg.MaxSeedBody, "max-seed-body", o.cfg.MaxSeedBody, "largest POST /__admin/resources body and -seed file in `bytes`")
	fs.Int64Var(&o.cfg.MaxRequestBytes, "max-request-bytes", o.cfg.MaxRequestBytes, "`bytes` the bodies of all requests being served may hold at once; a request beyond it is answered 503 with Retry-After")
	fs.IntVar(&o.cfg.JournalSize, "journal-size", o.cfg.JournalSize, "how many /api/v2 requests /__admin/requests keeps; 0 turns the journal off")
	fs.Int64Var(&o.cfg.JournalBudget, "journal-budget", o.cfg.JournalBudget, "`bytes` the journals of all namespaces may hold together; the oldest entries go first")
	fs.StringVar(&o.cfg.Auth, "auth", "", "`user:token` required as HTTP Basic credentials on every path")
	fs.Func("cors", "comma-separated `origins` (scheme://host[:port]) allowed to call from a browser (\"*\" for any); off when empty", func(v string) error {
		origins, err := parseOrigins(v)
		o.cfg.CORSOrigins = origins
		return err
	})
	fs.Func("allowed-hosts", "comma-separated host `names` admitted besides loopback ones when listening on loopback (\"*\" for any)", func(v string) error {
		o.cfg.AllowedHosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				o.cfg.AllowedHosts = append(o.cfg.AllowedHosts, h)
			}
		}
		return nil
	})
	fs.Var(durationFlag{&o.cfg.NamespaceIdle}, "namespace-idle", "remove namespaces (default aside) that no request touched for this `duration`; 0 keeps them")
	fs.Int64Var(&o.cfg.MaxFaultBodies, "max-fault-bodies", o.cfg.MaxFaultBodies, "`bytes` the bodies and headers of all faults (every namespace's) may hold together")
	fs.IntVar(&o.cfg.MaxNamespaces, "max-namespaces", o.cfg.MaxNamespaces, "how many namespaces (/ns/{name}) may exist at once")
	fs.Func("filters", "filter `dialect`: assetic (the default: only what the real service documents) or kendo (Kendo's whole grammar: unary operators, null, mixed ~and~ and ~or~)", func(v string) error {
		d, err := parseDialect(v)
		if err != nil {
			return err
		}
		o.cfg.Filters = string(d)
		return nil
	})
	return fs
}

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return "RESOURCEDIR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseOptions reads flags, each of which can also come from the
// environment as RESOURCEDIR_<FLAG>; the command line wins. environ is
// "NAME=value" pairs, as os.Environ gives them.
func parseOptions(args, environ []string, stderr io.Writer) (*options, error) {
	o := &options{cfg: defaultConfig()}
	fs := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return nil, err
		}
		return nil, flagError(fs, err)
	}
	// flag.Parse drops the -- it stops at: the argument before the rest
	// tells a command from a stray argument.
	if dashes := len(args) - fs.NArg() - 1; fs.NArg() > 0 && dashes >= 0 && args[dashes] == "--" {
		o.command = fs.Args()
	} else if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags start with -; to run a command, put -- before it: resourcedir -- go test ./...)", fs.Arg(0))
	} else if len(args) > 0 && args[len(args)-1] == "--" {
		return nil, errors.New("-- must be followed by a command to run, as in resourcedir -- go test ./...")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	env := environMap(environ)
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		v := env[name]
		// An empty variable counts as unset, as in most shells' ${VAR:-}.
		if v == "" || set[f.Name] || envErr != nil {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("environment %s=%q: %w", name, v, err)
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if unknown := unknownEnvVars(environ); len(unknown) > 0 {
		return nil, errors.New(strings.Join(unknown, "; "))
	}
	if o.command != nil {
		// A test run wants a free port, nothing left on disk and a quiet
		// log; a flag or variable that says otherwise still wins.
		for name, value := range map[string]string{"addr": "127.0.0.1:0", "snapshot": snapshotOff, "log-level": "warn"} {
			if !set[name] && env[envName(name)] == "" {
				if err := fs.Set(name, value); err != nil {
					return nil, fmt.Errorf("default -%s for a command: %w", name, err)
				}
			}
		}
	}
	switch {
	case o.addr == "":
		return nil, errors.New("-addr must not be empty: give host:port (127.0.0.1:8080, or 127.0.0.1:0 for a free port)")
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
	case o.cfg.NamespaceIdle < 0:
		return nil, fmt.Errorf("-namespace-idle must be 0 (off) or positive, not %s", o.cfg.NamespaceIdle)
	case o.snapshotInterval <= 0:
		return nil, fmt.Errorf("-snapshot-interval must be positive, not %s", o.snapshotInterval)
	case o.logFormat != "text" && o.logFormat != "json":
		return nil, fmt.Errorf("-log-format must be text or json, not %q", o.logFormat)
	}
	if o.snapshotPath == snapshotOff {
		o.snapshotPath = ""
	}
	if o.tlsCert != "" || o.tlsKey != "" {
		o.tls = true
	}
	if o.cfg.JournalSize == 0 {
		o.cfg.JournalSize = journalOff // 0 is Config's default
	}
	o.cfg.loopbackOnly = isLoopbackAddr(o.addr)
	return o, nil
}

// flagError rewords the flag package's parse errors that leave a user
// guessing: an unknown flag names the closest one, and the generator's
// seed, once spelt -seed, its new name.
func flagError(fs *flag.FlagSet, err error) error {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !unknown {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if name == "seed" && slices.Contains(names, "rand-seed") {
		return errors.New("-seed is the server's seed file; this subcommand's integer seed is -rand-seed")
	}
	closest, _ := closestName(name, names)
	return fmt.Errorf("unknown flag -%s; did you mean -%s? (%s -help lists every flag)", name, closest, fs.Name())
}

// parseSubcommand parses a subcommand's flags, then at most positional
// arguments. Its errors are one line, which Main prints once (the flag
// package's own print the error and then the whole usage, in which it is
// lost); -help prints the usage.
func parseSubcommand(fs *flag.FlagSet, args []string, positional int, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return err
		}
		return flagError(fs, err)
	}
	if fs.NArg() > positional {
		return fmt.Errorf("unexpected argument %q", fs.Arg(positional))
	}
	return nil
}

// durationFlag is a time.Duration flag whose error, for a number without
// a unit, says which to add: time.ParseDuration only says "missing unit".
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil { // the zero value flag.PrintDefaults makes
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err == nil {
		*f.d = d
		return nil
	}
	if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
		return fmt.Errorf("a duration needs a unit: %ss for seconds (or ms, m, h)", s)
	}
	return errors.New("want a duration such as 10s, 500ms or 1m")
}

// isLoopbackAddr reports whether addr listens on loopback only, where the
// Host checks against DNS rebinding apply.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// environMap indexes environ by name; the first of two same names wins,
// as with os.Getenv.
func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if _, seen := m[name]; ok && !seen {
			m[name] = value
		}
	}
	return m
}

// unknownEnvVars returns a problem for each RESOURCEDIR_ variable that
// names no flag, with the flag whose variable is closest: a typo must not
// pass silently, any more than a mistyped flag does.
func unknownEnvVars(environ []string) []string {
	known := map[string]string{} // variable -> flag
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = f.Name })
	names := slices.Sorted(maps.Keys(known))
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		// RESOURCEDIR_URL and RESOURCEDIR_CA_FILE are what resourcedir --
		// COMMAND sets, and so what a resourcedir started by it finds.
		if !strings.HasPrefix(name, "RESOURCEDIR_") || name == urlVar || name == caFileVar {
			continue
		}
		// RESOURCEDIR_FROM_AUTH is import's and compare's, not a server flag.
		if _, ok := known[name]; ok || name == fromAuthEnv {
			continue
		}
		closest, _ := closestName(name, names)
		warnings = append(warnings, fmt.Sprintf("environment %s names no flag; did you mean %s (-%s)?", name, closest, known[closest]))
	}
	return warnings
}

// closestName is the candidate nearest to name by edit distance, case
// ignored (the first of equals), and that distance: what a typo most likely
// meant, for the messages of an unknown flag, variable or property.
func closestName(name string, candidates []string) (string, int) {
	closest, best := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); best < 0 || d < best {
			closest, best = c, d
		}
	}
	return closest, best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The release build stamps these with -ldflags -X (see .goreleaser.yaml):
// a binary built from an archive's source tree has no VCS information, and
// a tag's name is not the module version that go build records.
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// versionText is what -version prints: the stamped version, else the module
// version (devel when built from a work tree without one); the VCS
// revision and time when stamped or recorded by the build; and the Go
// version.
func versionText() string {
	version, revision, at, modified := "devel", "", "", false
	if buildVersion != "" {
		version, revision, at = buildVersion, buildCommit, buildDate
	} else if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "resourcedir %s\n", version)
	if revision != "" {
		fmt.Fprintf(&b, "revision %s", revision)
		if at != "" {
			fmt.Fprintf(&b, " (%s)", at)
		}
		if modified {
			b.WriteString(" with uncommitted changes")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// run starts the server and blocks until ctx is cancelled, or, with a
// command after --, until that command exits; then it drains in-flight
// requests. It is main without the process: tests call it. environ is the
// environment as os.Environ gives it.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "generate":
			return runGenerate(args[1:], stdout, stderr)
		case "import":
			return runImport(ctx, args[1:], environ, stdout, stderr)
		case "compare":
			return runCompare(ctx, args[1:], environ, stdout, stderr)
		case "health":
			return runHealth(ctx, args[1:], environ, stdout, stderr)
		}
	}
	o, err := parseOptions(args, environ, stderr)
	if err != nil {
		return err
	}
	if o.version {
		_, err := io.WriteString(stdout, versionText())
		return err
	}
	logOut := stdout
	if o.command != nil {
		// Standard output is the command's: a server's line in the middle
		// of go test -json would break whatever reads it.
		logOut = stderr
	}
	logs := newLogWriter(logOut)
	// Last out, on every return: the lines of a stop are written. The
	// error of a destination that takes nothing is not the stop's: those
	// lines are counted dropped, and the process must still end.
	defer logs.Close() //nolint:errcheck // see above
	logger := newLogger(o.logFormat, o.logLevel, logs)
	idSeed, err := parseIDSeed(o.idSeed)
	if err != nil {
		return err
	}
	cfg := o.cfg
	cfg.IDSeed, cfg.SeedFile, cfg.Logger = idSeed, o.seedFile, logger
	cfg.Snapshot, cfg.SnapshotInterval = o.snapshotPath, o.snapshotInterval
	srv, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	// Last, after the server has drained: what was acknowledged is written.
	defer srv.Close() //nolint:errcheck // stopServer reports the last write's error
	srv.droppedLogLines = logs.droppedLines
	srv.requestLog = newRequestLog(o.logFormat, o.logLevel, logs)

	scheme, commandVars := "http", []string{}
	var serving *serverTLS
	if o.tls {
		if serving, err = newServerTLS(o); err != nil {
			return err
		}
		if serving.removeCA != nil {
			defer serving.removeCA()
		}
		scheme = "https"
		if serving.caFile != "" {
			commandVars = append(commandVars, caFileVar+"="+serving.caFile)
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return listenError(o.addr, err)
	}
	served := servedURL(ln.Addr(), scheme)
	if o.addrFile != "" {
		// The listener queues connections from now on, so the URL is
		// good as soon as the file appears.
		if err := writeAddrFile(o.addrFile, served); err != nil {
			ln.Close()
			return err
		}
		defer removeAddrFile(o.addrFile, served, logger)
	}
	httpSrv := newHTTPServer(srv, logger)
	httpSrv.RegisterOnShutdown(srv.beginShutdown)
	serveErr := make(chan error, 1)
	if serving != nil {
		httpSrv.TLSConfig = serving.config
		logger.Info("serving", "addr", scheme+"://"+ln.Addr().String(), "ca_file", serving.caFile)
		go func() { serveErr <- httpSrv.ServeTLS(ln, "", "") }()
	} else {
		logger.Info("serving", "addr", scheme+"://"+ln.Addr().String())
		go func() { serveErr <- httpSrv.Serve(ln) }()
	}
	// serving ends when the server stops: at ctx's end, or when the
	// command after -- exits.
	if o.command != nil {
		// Whatever the level: where to look when COMMAND fails.
		trust := ""
		if serving != nil && serving.caFile != "" {
			trust = "; CA certificate " + serving.caFile
		}
		fmt.Fprintf(stderr, "resourcedir: serving %s for %s; console %s/%s\n", served, o.command[0], served, trust)
		commandVars = append(commandVars, urlVar+"="+served)
		code, cmdErr := runCommand(ctx, o.command, environ, commandVars, stdout, stderr, serveErr)
		return commandResult(code, errors.Join(cmdErr, stopServer(httpSrv, srv, logger)))
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return stopServer(httpSrv, srv, logger)
}

// stopServer drains in-flight requests and closes srv, which writes the
// snapshot, as at SIGTERM.
func stopServer(httpSrv *http.Server, srv *Server, logger *slog.Logger) error {
	logger.Info("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shutdownErr := httpSrv.Shutdown(shutdownCtx)
	if shutdownErr != nil {
		shutdownErr = fmt.Errorf("shutdown: %w", shutdownErr)
	}
	// Written even when draining timed out: what was acknowledged is kept.
	return errors.Join(shutdownErr, srv.Close())
}

// runCommand runs command with vars ("NAME=value": urlVar, and caFileVar
// with -tls) set in its environment and its standard streams
// passed through, and returns its exit status once it exits (128 plus the
// signal's number when a signal ended it; 127 when it could not start).
// The signals that main receives (under signalsKey in ctx) are passed on
// to it, and SIGTERM when ctx ends otherwise: it decides when to end, and
// the server serves until then. A server that fails meanwhile is
// reported, and the command is asked to stop with SIGTERM.
func runCommand(ctx context.Context, command, environ, vars []string, stdout, stderr io.Writer, serveErr <-chan error) (int, error) {
	if err := context.Cause(ctx); err != nil {
		return 1, fmt.Errorf("%s was not run: the server was stopped first (%w)", command[0], err)
	}
	signals, _ := ctx.Value(signalsKey{}).(<-chan os.Signal) // nil: none come
	cmd := exec.Command(command[0], command[1:]...)
	// An outer resourcedir -- COMMAND's variables are replaced, not doubled.
	cmd.Env = append(slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, urlVar+"=") || strings.HasPrefix(kv, caFileVar+"=")
	}), vars...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		// Their text repeats the name.
		var execErr *exec.Error
		var pathErr *fs.PathError
		if errors.As(err, &execErr) {
			err = execErr.Err
		} else if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return 127, fmt.Errorf("cannot run %s: %w", command[0], err)
	}
	exited := make(chan struct{})
	go func() {
		// The error says no more than ProcessState; a copy of output that
		// failed has left its trace in that output.
		cmd.Wait() //nolint:errcheck // see above
		close(exited)
	}()
	forward := func(sig os.Signal) {
		cmd.Process.Signal(sig) //nolint:errcheck // it has exited: the wait below ends
	}
	var failed error
	done := ctx.Done()
	for {
		select {
		case <-exited:
			return exitStatus(cmd.ProcessState), failed
		case sig := <-signals:
			forward(sig)
		case <-done:
			done = nil
			if !errors.As(context.Cause(ctx), new(stopSignal)) {
				forward(syscall.SIGTERM) // a caller's cancellation: no signal comes
			}
		case err := <-serveErr:
			serveErr = nil
			failed = fmt.Errorf("serve: %w", err)
			forward(syscall.SIGTERM)
		}
	}
}

// exitStatus is a finished process's status as a shell gives it.
func exitStatus(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

// commandResult is run's answer once the command has exited with code and
// the server has stopped: the command's status, and err said besides.
func commandResult(code int, err error) error {
	if code == 0 {
		return err // nil, or an error of the server's: status 1
	}
	return &exitError{code: code, err: err}
}

// listenError says what to do about the commonest failure to listen: a
// port another process holds.
func listenError(addr string, err error) error {
	host, port, splitErr := net.SplitHostPort(addr)
	if !errors.Is(err, syscall.EADDRINUSE) || splitErr != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return fmt.Errorf("listen on %s: port %s is already in use; choose another with -addr %s, or -addr %s for a free one",
		addr, port, net.JoinHostPort(host, "PORT"), net.JoinHostPort(host, "0"))
}

// servedURL is the URL a client on this machine reaches addr by: a
// listener on every interface is reached on the loopback address.
func servedURL(addr net.Addr, scheme string) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return scheme + "://" + addr.String()
	}
	return scheme + "://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// writeAddrFile writes the served URL, one line, atomically: a reader sees
// no file or the whole line, never a part.
func writeAddrFile(path, served string) error {
	line := served + "\n"
	_, err := writeFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, line)
		return err
	})
	if err != nil {
		return fmt.Errorf("-addr-file: %w", err)
	}
	return nil
}

// removeAddrFile removes the -addr-file at exit, so that its presence means
// a server is serving there, unless another server has written its own URL
// there since.
func removeAddrFile(path, served string, logger *slog.Logger) {
	if b, err := os.ReadFile(path); err != nil || string(b) != served+"\n" {
		return
	}
	if err := os.Remove(path); err != nil {
		logger.Warn("could not remove the -addr-file", "path", path, "error", err)
	}
}

// Server timeouts. Headers must arrive within readHeaderTimeout, so a client
// that trickles them byte by byte is cut off; a whole request (a large seed
// included) within readTimeout; a response must be written within
// writeTimeout, which stays above the longest injected fault delay and is
// also when a hang fault without DelayMs lets its connection go.
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
		// OPTIONS * is answered like every other request, not by net/http.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// readSeedFile reads at most limit bytes of the seed file; a larger one is
// an error. Pipes and devices are read too (-seed <(generate) works), with
// the same limit; the read is abandoned when ctx ends, so a FIFO that no
// one writes to does not keep SIGTERM from stopping the boot.
func readSeedFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	if info, err := os.Stat(path); err != nil || info.Mode().IsRegular() {
		// A regular file does not block: read it, or say why not.
		body, err := readLimited(path, limit)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", path, err)
		}
		return body, nil
	}
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		body, err := readLimited(path, limit)
		done <- result{body, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("seed %s: %w", path, r.err)
		}
		return r.body, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("seed %s: stopped before the file could be read: %w", path, ctx.Err())
	}
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("larger than the -max-seed-body limit of %d bytes", limit)
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > limit {
		return nil, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, tooLarge
	}
	return body, nil
}

// describeError flattens an API error into one line for the terminal.
func describeError(err error) string {
	var ve *validationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	parts := []string{strings.TrimSuffix(ve.Message, ".")}
	ms := ve.ModelState
	for _, key := range ms.order {
		parts = append(parts, fmt.Sprintf("item %s: %s", key, strings.Join(ms.props[key], " ")))
	}
	if rest := ms.problems - ms.kept(); rest > 0 {
		parts = append(parts, fmt.Sprintf("and %d more problems", rest))
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
