package resourcedir

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// Main runs the resourcedir command line (server, -- mode, subcommands) with
// the process's arguments, environment and standard streams, handling SIGINT
// and SIGTERM: cmd/resourcedir is os.Exit(resourcedir.Main()).
func Main() int {
	// GUIDs from a pool of random bytes read in batches, not a read of
	// crypto/rand per create; set before anything runs, as the pool asks.
	uuid.EnableRandPool()
	// The first signal stops the server; a command run after -- gets every
	// one (runCommand). The signal is the context's cause, to tell it from
	// a cancellation.
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
		if ce, ok := errors.AsType[*exitError](err); !errors.Is(err, flag.ErrHelp) && !(ok && ce.err == nil) {
			fmt.Fprintln(os.Stderr, "resourcedir:", err)
		}
		return exitCode(err)
	}
	return 0
}

// signalsKey is the context key of the signals a command run after --
// gets: each SIGINT and SIGTERM that main receives, once.
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

// serveOptions serves as o says until ctx ends or the command after --
// exits, then drains in-flight requests and writes the snapshot.
func serveOptions(ctx context.Context, o *options, environ []string, stdout, stderr io.Writer) error {
	logOut := stdout
	if o.command != nil {
		// Standard output is the command's: a server's line in the middle
		// of go test -json would break whatever reads it.
		logOut = stderr
	}
	logs := newLogWriter(logOut)
	// Last out, on every return, so a stop's lines are written; an error of
	// the destination is not the stop's (the lines count as dropped).
	defer logs.Close() //nolint:errcheck // see above
	logger := newLogger(o.logFormat, o.logLevel, logs)
	idSeed, err := parseIDSeed(o.idSeed)
	if err != nil {
		return err
	}
	o.cfg.IDSeed, o.cfg.Logger = idSeed, logger
	srv, err := open(ctx, o.cfg)
	if err != nil {
		return err
	}
	// Last, after the server has drained: what was acknowledged is written.
	defer srv.Close() //nolint:errcheck // stopServer reports the last write's error
	srv.droppedLogLines = logs.droppedLines

	l, err := listen(o)
	if err != nil {
		return err
	}
	defer l.close()
	if o.addrFile != "" {
		defer removeAddrFile(o.addrFile, l.served, logger)
	}
	httpSrv := newHTTPServer(srv, logger)
	httpSrv.RegisterOnShutdown(srv.beginShutdown)
	serveErr := make(chan error, 1)
	if l.tls != nil {
		httpSrv.TLSConfig = l.tls
		logger.Info("serving", "addr", "https://"+l.ln.Addr().String(), "ca_file", l.caFile)
		go func() { serveErr <- httpSrv.ServeTLS(l.ln, "", "") }()
	} else {
		logger.Info("serving", "addr", "http://"+l.ln.Addr().String())
		go func() { serveErr <- httpSrv.Serve(l.ln) }()
	}
	if o.command != nil {
		// Whatever the level: where to look when COMMAND fails.
		vars, trust := []string{urlVar + "=" + l.served}, ""
		if l.caFile != "" {
			vars, trust = append(vars, caFileVar+"="+l.caFile), "; CA certificate "+l.caFile
		}
		fmt.Fprintf(stderr, "resourcedir: serving %s for %s; console %s/%s\n", l.served, o.command[0], l.served, trust)
		code, cmdErr := runCommand(ctx, o.command, environ, vars, stdout, stderr, serveErr)
		err = errors.Join(cmdErr, stopServer(httpSrv, srv, logger))
		if code == 0 {
			return err // nil, or an error of the server's: status 1
		}
		return &exitError{code: code, err: err}
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return stopServer(httpSrv, srv, logger)
}

// stopServer drains in-flight requests and closes srv (writing the snapshot).
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

// runCommand runs command with vars ("NAME=value") added to its environment
// and its standard streams passed through, and returns its exit status as a
// shell gives it (127 when it could not start). It decides when to end: the
// signals main receives (under signalsKey in ctx) are passed on to it, and
// SIGTERM when ctx ends otherwise or the server fails, which is reported.
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
		if execErr, ok := errors.AsType[*exec.Error](err); ok {
			err = execErr.Err
		} else if pathErr, ok := errors.AsType[*fs.PathError](err); ok {
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
			// Main's signal reached the command already; any other end of
			// the server, whatever its cause, is told to it as a SIGTERM.
			if _, bySignal := errors.AsType[stopSignal](context.Cause(ctx)); !bySignal {
				forward(syscall.SIGTERM)
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

// removeAddrFile removes the -addr-file at exit, so that its presence means
// a server is serving there, unless another server has written it since.
func removeAddrFile(path, served string, logger *slog.Logger) {
	if b, err := os.ReadFile(path); err != nil || string(b) != served+"\n" {
		return
	}
	if err := os.Remove(path); err != nil {
		logger.Warn("could not remove the -addr-file", "path", path, "error", err)
	}
}

// readSeedFile reads at most limit bytes of the seed file, a larger one
// being an error; pipes and devices too (-seed <(generate)), abandoned when
// ctx ends so that a FIFO no one writes to does not stall SIGTERM at boot.
func readSeedFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	tooLarge := fmt.Errorf("seed %s: larger than the -max-seed-body limit of %d bytes", path, limit)
	info, err := os.Stat(path)
	switch {
	case err == nil && info.Mode().IsRegular() && info.Size() > limit:
		return nil, tooLarge
	case err != nil || info.Mode().IsRegular():
		// A regular file does not block: read it, or say why not.
		ctx = context.WithoutCancel(ctx)
	}
	var body []byte
	read := make(chan struct{})
	go func() {
		body, err = readAtMost(path, limit+1) // left unread when ctx ends first
		close(read)
	}()
	select {
	case <-read:
	case <-ctx.Done():
		return nil, fmt.Errorf("seed %s: stopped before the file could be read: %w", path, ctx.Err())
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("seed %s: %w", path, err)
	case int64(len(body)) > limit:
		return nil, tooLarge
	}
	return body, nil
}

// readAtMost reads the first n bytes of the file at path, or all of a shorter one.
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// describeError flattens an API error into one line for the terminal.
func describeError(err error) string {
	var ve *apiError
	if !errors.As(err, &ve) || ve.ModelState.empty() {
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
