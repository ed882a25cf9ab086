package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the log writer. 4 MiB holds some 20,000 request lines: minutes
// of a slow terminal, seconds of a load test. 2s is as long as a stop waits
// for a destination that takes nothing.
const (
	logPendingLimit = 4 << 20
	logCloseTimeout = 2 * time.Second
)

// logWriter sits under the slog handler so that logging never costs a
// request a write of its own: Write only appends the line to memory, and
// one goroutine writes what is pending to the destination. Under load the
// lines that arrive while it writes, or while it lets ready requests run,
// go out together in its next write; on an idle server a line goes out as
// soon as it is logged, with no timer.
//
// A destination that cannot keep up (a pipe nobody reads) must not stall
// serving or grow memory without end: a line that would take the pending
// bytes past the limit is dropped and counted, and Close gives up after a
// deadline so that a stop still ends the process.
type logWriter struct {
	dst          io.Writer
	limit        int
	closeTimeout time.Duration

	mu      sync.Mutex
	pending []byte
	closing bool

	wake    chan struct{} // one token: pending became non-empty, or closing
	done    chan struct{} // closed when the writing goroutine has returned
	dropped atomic.Uint64
}

func newLogWriter(dst io.Writer) *logWriter {
	return newLogWriterBounded(dst, logPendingLimit, logCloseTimeout)
}

func newLogWriterBounded(dst io.Writer, limit int, closeTimeout time.Duration) *logWriter {
	w := &logWriter{dst: dst, limit: limit, closeTimeout: closeTimeout,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.writeLoop()
	return w
}

// Write queues p; slog handlers pass one whole line per call, so a line is
// kept or dropped whole. It never blocks on the destination and never fails:
// the request that logged has nothing to do about a slow terminal.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closing || len(w.pending)+len(p) > w.limit {
		w.mu.Unlock()
		w.dropped.Add(1)
		return len(p), nil
	}
	wasIdle := len(w.pending) == 0
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	if wasIdle {
		w.signal()
	}
	return len(p), nil
}

func (w *logWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default: // a token is already waiting
	}
}

// droppedLines is how many lines were not written: dropped at the limit, after
// Close, refused by the destination, or still pending when Close gave up.
func (w *logWriter) droppedLines() uint64 { return w.dropped.Load() }

// writeLoop writes everything pending in one write, then again, until
// Close and nothing is left. The two buffers swap, so a steady load
// allocates nothing.
func (w *logWriter) writeLoop() {
	defer close(w.done)
	var batch []byte
	for {
		w.mu.Lock()
		idle, closing := len(w.pending) == 0, w.closing
		w.mu.Unlock()
		if idle && closing {
			return
		}
		if idle {
			<-w.wake
			continue
		}
		// Let the goroutines that are ready to run go first: under load
		// they are requests about to log, whose lines then join this
		// write (7 lines a write instead of 1.3 under wrk). On an idle
		// server nothing else is ready and the write happens at once.
		runtime.Gosched()
		w.mu.Lock()
		batch, w.pending = w.pending, batch[:0]
		w.mu.Unlock()
		if _, err := w.dst.Write(batch); err != nil {
			// A closed or broken destination: there is nowhere to say so.
			w.dropped.Add(uint64(bytes.Count(batch, []byte{'\n'})))
		}
	}
}

// Close writes what is pending and stops the writer; later lines are
// dropped. When the destination takes nothing for closeTimeout, the lines
// still pending are counted dropped and Close returns an error saying so.
func (w *logWriter) Close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	w.signal()
	select {
	case <-w.done:
		return nil
	case <-time.After(w.closeTimeout):
	}
	w.mu.Lock()
	lost := bytes.Count(w.pending, []byte{'\n'})
	w.pending = nil
	w.mu.Unlock()
	w.dropped.Add(uint64(lost))
	return fmt.Errorf("log destination took nothing for %s: %d pending lines dropped", w.closeTimeout, lost)
}

// newLogger is the binary's logger: slog's text or JSON handler.
func newLogger(format string, level slog.Level, out *logWriter) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}
