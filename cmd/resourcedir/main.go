// Command resourcedir is a local, in-memory stand-in for the Resource
// Directory API (/api/v2/resource), with snapshot persistence and
// test-double controls under /__admin/. Run it with -help for its flags and
// subcommands; the server itself is the package
// github.com/resourcedir/resourcedir.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/google/uuid"
)

func main() { os.Exit(program()) }

// program runs the command line with the process's arguments, environment
// and standard streams, handling SIGINT, SIGTERM and SIGHUP (a closed
// terminal, or a wrapper passing its own on), and returns the exit status.
func program() int {
	// GUIDs from a pool of random bytes read in batches, not a read of
	// crypto/rand per create; set before anything runs, as the pool asks.
	uuid.EnableRandPool()
	// The first signal stops the server; a command run after -- gets every
	// one (runCommand). The signal is the context's cause, to tell it from
	// a cancellation.
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	forward := make(chan os.Signal, 8)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
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
		if ce, ok := errors.AsType[*exitError](err); !errors.Is(err, flag.ErrHelp) && !(ok && ce.err == nil) {
			fmt.Fprintln(os.Stderr, "resourcedir:", err)
		}
		return exitCode(err)
	}
	return 0
}

// The variables that resourcedir -- COMMAND gives COMMAND: the served URL,
// and with -tls the CA certificate's file (what ConnectT reads).
const (
	urlVar    = "RESOURCEDIR_URL"
	caFileVar = "RESOURCEDIR_CA_FILE"
)

// signalsKey is the context key of the signals a command run after --
// gets: each SIGINT, SIGTERM and SIGHUP that main receives, once.
type signalsKey struct{}

// stopSignal is the cause of main's context when a signal stops the server:
// the command run after -- has that signal already.
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

// exitError carries an exit status other than 1 out of run: the status of
// the command run after -- (err nil when the command has spoken for itself),
// or compare's 1 (something differs) and 2 (it could not compare).
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

// The release build stamps these with -ldflags -X (see .goreleaser.yaml):
// a binary built from an archive's source tree has no VCS information, and
// a tag's name is not the module version that go build records.
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// versionText is what -version prints: the stamped or module version
// (devel when there is none), the VCS revision and time, and Go's version.
func versionText() string {
	version, revision, at, modified := "devel", "", "", false
	if buildVersion != "" {
		version, revision, at = buildVersion, buildCommit, buildDate
	} else if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		revision, at, modified = vcs["vcs.revision"], vcs["vcs.time"], vcs["vcs.modified"] == "true"
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

// run is Main without the process, for tests: a subcommand, or the server
// (serveOptions). environ is the environment as os.Environ gives it.
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
	return serveOptions(ctx, o, environ, stdout, stderr)
}
