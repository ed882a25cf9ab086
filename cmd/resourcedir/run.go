package main

// resourcedir -- COMMAND: the command run against the server.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
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
