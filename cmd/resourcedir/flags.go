package main

// The command line: flags, each also a RESOURCEDIR_ variable, and the
// messages that say what a mistyped one meant.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resourcedir/resourcedir"
)

// options are the command-line settings.
type options struct {
	addr            string
	addrFile        string
	tls             bool
	tlsCert, tlsKey string
	tlsCAFile       string
	idSeed          string
	logFormat       string
	version         bool
	exitWithParent  bool
	linger          bool // after the command after --, serve until a signal
	// snapshotDefault: -snapshot is the default, chosen by neither a flag
	// nor a variable, which a refusal of its folder says.
	snapshotDefault bool
	logLevel        slog.Level
	cfg             resourcedir.Config // the flags that are a Config's fields write there
	// command is what follows --: run it against the server, then stop.
	command []string
}

// snapshotOff turns snapshots off, as "" does, in a form that an
// environment variable can carry (an empty variable counts as unset).
const snapshotOff = "off"

// newFlagSet defines every flag, writing into o.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("resourcedir", flag.ContinueOnError)
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
Every flag can also be set as RESOURCEDIR_<FLAG>, such as RESOURCEDIR_SNAPSHOT_INTERVAL=30s,
except the actions -version and -help.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`address` to listen on (host:port); \":8080\" listens on every interface, port 0 picks a free one")
	fs.StringVar(&o.addrFile, "addr-file", "", "`file` to write the served URL to once the server accepts connections (removed at exit)")
	fs.StringVar(&o.cfg.Snapshot, "snapshot", "resourcedir.gob", "snapshot `file`; \"off\" or \"\" keeps everything in memory only (a file named off is ./off)")
	fs.Var(durationFlag{&o.cfg.SnapshotInterval}, "snapshot-interval", "how often to write the snapshot when something changed (a `duration`: 10s, 500ms, 1m)")
	fs.BoolVar(&o.tls, "tls", false, "serve HTTPS with a certificate minted at start for localhost, 127.0.0.1, ::1 and the -allowed-hosts names, signed by the user's CA (made once: <user config folder>/resourcedir/ca.pem)")
	fs.StringVar(&o.tlsCAFile, "tls-ca-file", "", "`file` to copy the user's CA certificate to, for clients to trust (default: none; RESOURCEDIR_CA_FILE and the start-up line name <user config folder>/resourcedir/ca.pem)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate `file` (with -tls-key) instead of a generated one")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key `file` of -tls-cert")
	fs.StringVar(&o.cfg.SeedFile, "seed", "", "JSON `file` with an array of resources to load into an empty store at boot (at most -max-seed-body bytes)")
	fs.StringVar(&o.idSeed, "id-seed", "", "integer `seed` that makes generated GUIDs the same on every run")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVar(&o.linger, "linger", false, "with -- COMMAND: keep serving, console included, after COMMAND exits, until SIGINT or SIGTERM; then exit with COMMAND's status")
	fs.BoolVar(&o.exitWithParent, "exit-with-parent", false, "stop as at SIGTERM when the process that started this one dies (Linux, macOS): what a test harness's launcher passes")
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
		origins, err := resourcedir.ParseOrigins(v)
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
	fs.StringVar(&o.cfg.ServiceVersion, "service-version", o.cfg.ServiceVersion, "what GET /api/v2/version answers: four non-negative integers joined by dots (a .NET System.Version)")
	fs.IntVar(&o.cfg.CreateStatus, "create-status", o.cfg.CreateStatus, "the status of a successful create: 201, as the real service answers, or 200 for a tenant that answers so")
	fs.Func("filters", "filter `dialect`: assetic (the default: only what the real service documents) or kendo (Kendo's whole grammar: unary operators, null, mixed ~and~ and ~or~)", func(v string) error {
		d, err := resourcedir.ParseDialect(v) // on an error, o is dropped, as with -cors
		o.cfg.Filters = d
		return err
	})
	return fs
}

// actionFlags do something instead of serving: a variable left in an
// environment (RESOURCEDIR_VERSION=v0.3.0 in a CI job) must not turn every
// start into that action, so they have none.
var actionFlags = map[string]bool{"version": true, "help": true}

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return "RESOURCEDIR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseOptions reads flags, each also RESOURCEDIR_<FLAG> in environ (as
// os.Environ gives it); the command line wins.
func parseOptions(args, environ []string, stderr io.Writer) (*options, error) {
	o := &options{cfg: resourcedir.DefaultConfig()}
	fs := newFlagSet(o)
	if err := parseSubcommand(fs, args, len(args), stderr); err != nil {
		return nil, err
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
	o.snapshotDefault = !set["snapshot"] && env[envName("snapshot")] == ""
	if o.command != nil {
		// A test run wants a free port, nothing left on disk and a quiet
		// log; a flag or variable that says otherwise still wins.
		for name, value := range map[string]string{"addr": "127.0.0.1:0", "snapshot": snapshotOff, "log-level": "warn"} {
			if env[envName(name)] == "" {
				env[envName(name)] = value
			}
		}
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		v := env[name]
		// An empty variable counts as unset, as in most shells' ${VAR:-}.
		if v == "" || set[f.Name] || envErr != nil || actionFlags[f.Name] {
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
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.cfg.Snapshot == snapshotOff {
		o.cfg.Snapshot = ""
	}
	o.tls = o.tls || o.tlsCert != "" || o.tlsKey != ""
	if o.cfg.JournalSize == 0 {
		o.cfg.JournalSize = -1 // off: 0 is Config's default
	}
	return o, nil
}

// check refuses values no flag may take, with the form it wants.
func (o *options) check() error {
	switch {
	case o.addr == "":
		return errors.New("-addr must not be empty: give host:port (127.0.0.1:8080, or 127.0.0.1:0 for a free port)")
	case o.cfg.MaxPageSize < 1:
		return fmt.Errorf("-max-page-size must be at least 1, not %d", o.cfg.MaxPageSize)
	case o.cfg.MaxBody < 1:
		return fmt.Errorf("-max-body must be at least 1, not %d", o.cfg.MaxBody)
	case o.cfg.MaxSeedBody < 1:
		return fmt.Errorf("-max-seed-body must be at least 1, not %d", o.cfg.MaxSeedBody)
	case o.cfg.JournalSize < 0:
		return fmt.Errorf("-journal-size must be 0 or more, not %d", o.cfg.JournalSize)
	case o.cfg.Auth != "" && !strings.Contains(o.cfg.Auth, ":"):
		return errors.New("-auth must be user:token")
	case o.cfg.NamespaceIdle < 0:
		return fmt.Errorf("-namespace-idle must be 0 (off) or positive, not %s", o.cfg.NamespaceIdle)
	case o.cfg.SnapshotInterval <= 0:
		return fmt.Errorf("-snapshot-interval must be positive, not %s", o.cfg.SnapshotInterval)
	case o.logFormat != "text" && o.logFormat != "json":
		return fmt.Errorf("-log-format must be text or json, not %q", o.logFormat)
	}
	return nil
}

// flagError names the closest flag to an unknown one, and for the
// generator's seed, once spelt -seed, its new name: a user is not left guessing.
// A -port, as other servers spell it, is an -addr on loopback (by
// meaning: by spelling, -port was closest to -cors).
func flagError(fs *flag.FlagSet, err error, args []string) error {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !unknown {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if name == "seed" && slices.Contains(names, "rand-seed") {
		return errors.New("-seed is the server's seed file; this subcommand's integer seed is -rand-seed")
	}
	if name == "port" && slices.Contains(names, "addr") {
		return fmt.Errorf("unknown flag -port; did you mean -addr 127.0.0.1:%s? (%s -help lists every flag)", portArg(args), fs.Name())
	}
	closest, _ := resourcedir.ClosestName(name, names)
	return fmt.Errorf("unknown flag -%s; did you mean -%s? (%s -help lists every flag)", name, closest, fs.Name())
}

// newSubcommand is the flag set of resourcedir name, whose -help prints
// usage and then the flags.
func newSubcommand(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("resourcedir "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseSubcommand parses a subcommand's (or the server's) flags, then at
// most positional arguments. Its errors are one line, which Main prints:
// the flag package's own bury the error under the whole usage.
func parseSubcommand(fs *flag.FlagSet, args []string, positional int, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return err
		}
		return flagError(fs, err, args)
	}
	if fs.NArg() > positional {
		return fmt.Errorf("unexpected argument %q", fs.Arg(positional))
	}
	return nil
}

// portArg is the value given to -port in args, or PORT when there is no
// number to repeat.
func portArg(args []string) string {
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		v, withValue := strings.CutPrefix(a, "port=")
		if !withValue && a == "port" && i+1 < len(args) {
			v = args[i+1]
		} else if !withValue {
			continue
		}
		if _, err := strconv.ParseUint(v, 10, 16); err == nil {
			return v
		}
		break
	}
	return "PORT"
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

// environMap indexes environ by name, the first of two winning as in os.Getenv.
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
// names no flag, with the closest flag: a typo must not pass silently.
func unknownEnvVars(environ []string) []string {
	known := map[string]string{} // variable -> flag
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		if !actionFlags[f.Name] {
			known[envName(f.Name)] = f.Name
		}
	})
	names := slices.Sorted(maps.Keys(known))
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		// A flag's, or no typo either: what resourcedir -- COMMAND sets (and so
		// what a resourcedir started by it finds), and import's and compare's -auth.
		_, ok := known[name]
		if ok || !strings.HasPrefix(name, "RESOURCEDIR_") || slices.Contains([]string{urlVar, caFileVar, fromAuthEnv}, name) {
			continue
		}
		if flagName := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "RESOURCEDIR_"), "_", "-")); actionFlags[flagName] {
			warnings = append(warnings, fmt.Sprintf("environment %s names no flag: -%s is an action, given on the command line only (resourcedir -%s)", name, flagName, flagName))
			continue
		}
		closest, _ := resourcedir.ClosestName(name, names)
		warnings = append(warnings, fmt.Sprintf("environment %s names no flag; did you mean %s (-%s)?", name, closest, known[closest]))
	}
	return warnings
}

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

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
	return new(uint64(n)), nil
}
