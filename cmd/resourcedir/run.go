package main

// resourcedir -- COMMAND: the command run against the server.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"github.com/resourcedir/resourcedir"
)

// runCommand runs command with vars ("NAME=value") added to its environment
// and its standard streams passed through, and returns its exit status as a
// shell gives it (127 when it could not start). It decides when to end: the
// signals main receives (under signalsKey in ctx) are passed on to it, and
// SIGTERM when ctx ends otherwise or the server stops (served is closed)
// under it.
func runCommand(ctx context.Context, command, environ, vars []string, stdout, stderr io.Writer, served <-chan struct{}) (int, error) {
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
	done := ctx.Done()
	for {
		select {
		case <-exited:
			return exitStatus(cmd.ProcessState), nil
		case sig := <-signals:
			forward(sig)
		case <-done:
			done = nil
			// Main's signal reached the command already; any other end of
			// the server, whatever its cause, is told to it as a SIGTERM.
			if _, bySignal := errors.AsType[stopSignal](context.Cause(ctx)); !bySignal {
				forward(syscall.SIGTERM)
			}
		case <-served:
			served = nil
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

// serveCommand serves srv on ln while o's command runs against it (l says
// where), then stops it: the exit status is the command's.
func serveCommand(ctx context.Context, srv *resourcedir.Server, ln net.Listener, l *listening, o *options, environ []string, stdout, stderr io.Writer) error {
	// The server outlives main's signal until the command has exited: it
	// may still be talking to it while it stops.
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var serveErr error
	served := make(chan struct{})
	go func() {
		serveErr = srv.Serve(serveCtx, ln)
		close(served)
	}()
	// Whatever the level: where to look when COMMAND fails.
	vars, trust := []string{urlVar + "=" + l.served}, ""
	if l.caFile != "" {
		vars, trust = append(vars, caFileVar+"="+l.caFile), "; CA certificate "+l.caFile
	}
	fmt.Fprintf(stderr, "resourcedir: serving %s for %s; console %s/%s\n", l.served, o.command[0], l.served, trust)
	code, cmdErr := runCommand(ctx, o.command, environ, vars, stdout, stderr, served)
	// A stop asked of the server (a signal, -exit-with-parent) ended the
	// command: no failure of its own to explain, and nothing to linger for.
	if ctx.Err() == nil && !isClosed(served) {
		if code != 0 && cmdErr == nil {
			writeLastRequests(stderr, srv, o.cfg.Auth, l.served, fmt.Sprintf("%s exited with status %d", o.command[0], code))
		}
		if o.linger {
			fmt.Fprintf(stderr, "resourcedir: %s exited with status %d; lingering: serving %s, console %s/, until interrupted (Ctrl-C, or kill -TERM %d)\n",
				o.command[0], code, l.served, l.served, os.Getpid())
			select {
			case <-ctx.Done():
			case <-served:
			}
		}
	}
	stop()
	<-served
	err := errors.Join(cmdErr, serveErr)
	if code == 0 {
		return err // nil, or an error of the server's: status 1
	}
	return &exitError{code: code, err: err}
}
