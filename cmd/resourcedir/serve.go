package main

// The server's life: options to a served listener, until a signal or the
// command after -- ends it.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/resourcedir/resourcedir"
)

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
	if o.exitWithParent {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		go watchParent(ctx, os.Getppid(), parentPoll, stop, logger)
	}
	idSeed, err := parseIDSeed(o.idSeed)
	if err != nil {
		return err
	}
	o.cfg.IDSeed, o.cfg.Logger, o.cfg.DroppedLogLines = idSeed, logger, logs.droppedLines
	if o.cfg.Snapshot != "" {
		if err := checkSnapshotFolder(o.cfg.Snapshot, o.snapshotDefault, writableFolder); err != nil {
			return err
		}
	}
	srv, err := resourcedir.Open(ctx, o.cfg)
	if err != nil {
		return err
	}
	// Serve closes it; this is for the returns before Serve.
	defer srv.Close() //nolint:errcheck // Serve reports the last write's error
	l, err := listen(o, environ, logger)
	if err != nil {
		return err
	}
	defer l.close()
	if o.addrFile != "" {
		defer removeAddrFile(o.addrFile, l.served, logger)
	}
	ln := l.ln
	if l.tls != nil {
		l.tls.NextProtos = []string{"h2", "http/1.1"}
		ln = tls.NewListener(ln, l.tls)
		logger.Info("serving", "addr", "https://"+l.ln.Addr().String(), "ca_file", l.caFile)
	} else {
		logger.Info("serving", "addr", "http://"+l.ln.Addr().String())
	}
	if o.command == nil {
		return srv.Serve(ctx, ln)
	}
	return serveCommand(ctx, srv, ln, l, o, environ, stdout, stderr)
}

// imageData is the image's volume (Containerfile), where its snapshot is.
const imageData = "/data"

// checkSnapshotFolder says what to do when the snapshot's folder cannot be
// written and the user never chose it: the default path in the working
// directory, or the image's /data, whose owner on the host is rarely the
// image's user. Other paths, and other problems, are Open's to report.
func checkSnapshotFolder(path string, isDefault bool, writable func(dir string) error) error {
	inImage := strings.HasPrefix(filepath.Clean(path), imageData+"/")
	if !isDefault && !inImage {
		return nil
	}
	dir := filepath.Dir(path)
	err := writable(dir)
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return nil
	}
	if pathErr, ok := errors.AsType[*fs.PathError](err); ok {
		err = pathErr.Err // its path is a probe's, not the user's
	}
	if inImage {
		return fmt.Errorf("snapshot %s: the folder %s cannot be written (%v) by uid %d; the image runs as 65532:65532: "+
			"give it the folder, as in podman run -v DIR:/data:U, or chown 65532:65532 DIR (or run with -snapshot off)", path, dir, err, os.Getuid())
	}
	if abs, absErr := filepath.Abs(dir); absErr == nil {
		dir = abs
	}
	return fmt.Errorf("snapshot %s: the folder %s cannot be written (%v); %s in the working directory is the default snapshot: "+
		"run with -snapshot off to keep everything in memory, or -snapshot PATH to write it elsewhere", path, dir, err, path)
}

// writableFolder checks that dir takes new files, by making one.
func writableFolder(dir string) error {
	f, err := os.CreateTemp(dir, ".resourcedir-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// isClosed tells whether c is closed, without waiting.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// parentPoll is how often -exit-with-parent looks at its parent: a stop
// within a second of the parent's death, for one getppid call.
const parentPoll = 500 * time.Millisecond

// errParentExited is the cause of the stop that -exit-with-parent makes.
var errParentExited = errors.New("the process that started resourcedir exited (-exit-with-parent)")

// watchParent stops the server (cancel) once the process that started it
// has died, which the kernel tells by giving it a new parent (init or a
// subreaper): a launcher killed with SIGKILL cannot stop it itself.
func watchParent(ctx context.Context, parent int, every time.Duration, cancel context.CancelCauseFunc, logger *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				logger.Warn("stopping: the process that started resourcedir exited", "parent_pid", parent)
				cancel(errParentExited)
				return
			}
		}
	}
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
