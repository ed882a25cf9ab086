package resourcedir

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The rules of a request body, all in one place: its size limit (413) and
// the bytes every request may hold (503), its declared media type (415),
// the byte-order mark some tools put before it, Expect: 100-continue, what
// is read ahead for a fault or thrown away before an answer, and what the
// journal keeps of it. What the bytes mean is decode.go's business.

// utf8BOM is what some Windows tools put before UTF-8 text; ASP.NET skips it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// afterBOM is where the JSON of body starts: past a byte-order mark. The
// mark stays in body, so that positions in messages are those of the body
// as sent.
func afterBOM(body []byte) int {
	if bytes.HasPrefix(body, utf8BOM) {
		return len(utf8BOM)
	}
	return 0
}

// withoutBOM is body past a byte-order mark, for a reader that names no
// positions in it.
func withoutBOM(body []byte) []byte { return body[afterBOM(body):] }

// How much of an oversized body the server reads and throws away before it
// answers 413: a client that sends its whole body before reading the answer
// (most HTTP libraries) would otherwise see the connection reset.
const (
	maxDiscard     = 64 << 20
	discardTimeout = 10 * time.Second
)

// readBody reads a request body of at most limit bytes, within the bytes
// that every request may hold at once (requestBytes).
func readBody(x *exchange, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(x, r, limit)
	}
	if ahead, ok := r.Body.(*readAheadBody); ok {
		// A fault read it ahead, and holds it: the answer is what that
		// reading found, never a second reading held again (a body over
		// the limit, held twice, passed -max-request-bytes: a 503 for a
		// 413). Only API paths are read ahead, with the limit of their
		// handlers (MaxBody), so head is the whole body or past limit.
		switch {
		case int64(len(ahead.head)) > limit:
			return nil, tooLarge(x, r, limit)
		case ahead.err != nil:
			return nil, unreadable(ahead.err)
		}
		return ahead.head, nil
	}
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		// Declared: read exactly that, into a buffer of that size (net/http
		// ends the body there, and a short one is an error).
		if !x.hold(r.ContentLength) {
			return nil, tooBusy(x)
		}
		body = make([]byte, r.ContentLength)
		if r.Body == io.ReadCloser(&x.capture) && r.ContentLength <= maxJournalBody {
			x.capture.shared = body
		}
		_, err = io.ReadFull(r.Body, body)
	} else {
		// Chunked: the buffer is held as it grows.
		body, err = readHeld(x, r.Body, -1, limit+1)
		if errors.Is(err, errNoRoom) {
			return nil, tooBusy(x)
		}
		if int64(len(body)) > limit {
			return nil, tooLarge(x, r, limit)
		}
	}
	if err != nil {
		return nil, unreadable(err)
	}
	return body, nil
}

// unreadable is the 400 for a body that could not be read.
func unreadable(err error) error {
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		// Said plainly: the error's text names the server's own address.
		return errorf(http.StatusBadRequest, "The request body could not be read: it did not arrive within the server's read timeout.")
	}
	return errorf(http.StatusBadRequest, "The request body could not be read: %v.", err)
}

// tooLarge is the 413 for r. Unless the client waits for 100 Continue
// (then it sends nothing more) or declared more than could be thrown away,
// the rest of the body is read and thrown away first, within bounds, and
// an HTTP/1.x connection closed after the answer.
func tooLarge(x *exchange, r *http.Request, limit int64) error {
	closeAfter(x, r)
	if !waitsContinue(r) && r.ContentLength <= limit+maxDiscard {
		discardRest(x, r)
	}
	return errorf(http.StatusRequestEntityTooLarge, "The request body is larger than the limit of %d bytes.", limit)
}

// closeAfter closes r's connection after its answer, so that the unread
// rest of its body is not read as the next request: on HTTP/1.x only. On
// HTTP/2 the refusal ends that stream alone; "Connection: close" there
// makes Go close the whole connection (GOAWAY), failing every other
// request on it (191 of 200 streams).
func closeAfter(x *exchange, r *http.Request) {
	if r.ProtoMajor < 2 {
		x.Header().Set("Connection", "close")
	}
}

// discardRest reads and throws away up to maxDiscard more bytes of r's
// body, for no longer than discardTimeout, so that a client that sends its
// whole body before it reads the answer sees the answer, not a reset.
func discardRest(x *exchange, r *http.Request) {
	rc := http.NewResponseController(x)
	rc.SetReadDeadline(time.Now().Add(discardTimeout))      //nolint:errcheck // best effort
	io.Copy(io.Discard, io.LimitReader(r.Body, maxDiscard)) //nolint:errcheck // best effort
	rc.SetReadDeadline(time.Time{})                         //nolint:errcheck // best effort
}

// waitsContinue reports whether r's client sends its body only after a 100
// Continue, which net/http sends on the body's first read: until then the
// client has sent nothing, and reading would invite it to.
func waitsContinue(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// requestBytes bounds the request bytes that every request being served
// holds at once (Config.MaxRequestBytes): 2,500 slow uploads of 1 MiB held
// 2.6 GB for up to the read timeout. A body is held from the moment its
// buffer is made until its request is answered.
type requestBytes struct {
	limit int64
	used  atomic.Int64
}

// hold takes n more bytes for x's body, or reports false when the total
// would pass the limit.
func (x *exchange) hold(n int64) bool {
	g := &x.srv.requestBytes
	for {
		used := g.used.Load()
		if used+n > g.limit {
			return false
		}
		if g.used.CompareAndSwap(used, used+n) {
			x.held += n
			return true
		}
	}
}

// release gives back what x held, once its answer is done.
func (x *exchange) release() {
	x.srv.requestBytes.used.Add(-x.held)
	x.held = 0
}

// tooBusy is the 503 for a body that would pass the total: answered at
// once, without waiting for the body (nor for the journal's part of it),
// and an HTTP/1.x connection closed, so that its unread bytes are not read.
func tooBusy(x *exchange) error {
	x.capture.truncated = true
	h := x.Header()
	h.Set("Retry-After", "1")
	closeAfter(x, x.req)
	return errorf(http.StatusServiceUnavailable, "The server holds as many request bytes as it may at once (-max-request-bytes, %d); retry after a second.", x.srv.cfg.MaxRequestBytes)
}

// readJSONBody is readBody for the API, whose bodies must be declared as
// JSON, as ASP.NET reads nothing else as JSON.
func readJSONBody(x *exchange, r *http.Request, limit int64) ([]byte, error) {
	body, err := readBody(x, r, limit)
	if err != nil || len(body) == 0 {
		return body, err
	}
	if ct := r.Header.Get("Content-Type"); !isJSONMediaType(ct) {
		sent := "Content-Type " + strconv.Quote(ct)
		if ct == "" {
			sent = "no Content-Type"
		}
		return nil, errorf(http.StatusUnsupportedMediaType, "The request body was sent with %s; send it as JSON with Content-Type: application/json.", sent)
	}
	return body, nil
}

// isJSONMediaType reports whether a request's Content-Type declares JSON.
// The two spellings clients send most are known without parsing them.
func isJSONMediaType(contentType string) bool {
	switch contentType {
	case "application/json", jsonMediaType:
		return true
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	return mediaType == "application/json" || mediaType == "text/json"
}

// capturedBody keeps the first maxJournalBody bytes that the handler reads.
type capturedBody struct {
	io.ReadCloser
	buf       []byte
	read      int64 // bytes read so far
	ended     bool  // a read returned an error: EOF, or one that recurs
	truncated bool
	declared  int64 // Content-Length; -1 when unknown (chunked)
	// waitsContinue: the client sends the body only after a 100 Continue,
	// which the server sends on the first read, and not once it has answered.
	waitsContinue bool
	started       bool
	// shared is the handler's buffer, which it reads the whole body into
	// from its start and never changes: the journal keeps it rather than a
	// copy of what it reads, and buf is its start. It fits maxJournalBody.
	shared []byte
}

func (c *capturedBody) Read(p []byte) (int, error) {
	c.started = true
	n, err := c.ReadCloser.Read(p)
	c.read += int64(n)
	c.ended = err != nil || c.read == c.declared
	if c.shared != nil {
		c.buf = c.shared[:c.read]
		return n, err
	}
	keep := min(n, maxJournalBody-len(c.buf))
	if c.buf == nil && c.declared > 0 {
		// Made to measure: grown by append, it held a quarter more than it
		// kept.
		c.buf = make([]byte, 0, min(c.declared, maxJournalBody))
	}
	c.buf = append(c.buf, p[:keep]...)
	c.truncated = c.truncated || keep < n
	return n, err
}

// drain reads what the handler left unread (a faulted request, a 404), so
// that the journal shows what the client sent, up to the journal's cap. It
// does not wait for a body that the client holds back: one that waits for a
// 100 Continue never sent, or one declared over the cap (a 413 answered from
// Content-Length), which a client may send only after the verdict.
func (c *capturedBody) drain() {
	switch {
	case c.ended || c.ReadCloser == http.NoBody || c.truncated:
	case c.declared > maxJournalBody:
		c.truncated = true
	case c.waitsContinue && !c.started:
	default:
		io.Copy(io.Discard, io.LimitReader(c, maxJournalBody+1-int64(len(c.buf)))) //nolint:errcheck // best effort
	}
}

// readAhead reads r's body to its end before a delay (the server notices a
// client that hangs up only once the body has been read, and a delay must
// end when the client gives up) or for a fault that matches on it. The
// first limit+1 bytes are kept, held against -max-request-bytes as the
// handler's reading is (a fault's reading once got around the total),
// returned and put back for the handler, which needs no more to answer;
// the rest of a body over the limit is thrown away, within the bounds of a
// 413. Reading it again is free. The error is the 503 when holding the
// body would pass the total.
func readAhead(x *exchange, r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if ahead, ok := r.Body.(*readAheadBody); ok {
		return ahead.head, nil
	}
	head, err := readHeld(x, r.Body, r.ContentLength, limit+1)
	if errors.Is(err, errNoRoom) {
		return nil, tooBusy(x)
	}
	if int64(len(head)) > limit {
		discardRest(x, r)
	}
	// An error recurs when the handler reads past head.
	r.Body = &readAheadBody{io.MultiReader(bytes.NewReader(head), r.Body), r.Body, head, err}
	return head, nil
}

// errNoRoom: a body would pass -max-request-bytes (the 503, tooBusy).
var errNoRoom = errors.New("no room under -max-request-bytes")

// readHeld reads at most most bytes of body, declared to be declared bytes
// long (-1: unknown), holding every byte against -max-request-bytes before
// it is read: a declared body at once, another as its buffer grows. It
// reads to the end or to most; the error is errNoRoom when the total would
// be passed, or the body's read error (io.EOF aside).
func readHeld(x *exchange, body io.Reader, declared, most int64) ([]byte, error) {
	if declared >= 0 {
		n := min(declared, most)
		if !x.hold(n) {
			return nil, errNoRoom
		}
		// A body cut off short is what arrived, not zeros to its length,
		// which a fault would match on as sent. The bytes stay held by
		// the buffer's size: the whole buffer stays allocated.
		buf := make([]byte, n)
		k, err := io.ReadFull(body, buf)
		return buf[:k], err
	}
	var buf []byte
	var err error
	for err == nil && int64(len(buf)) < most {
		if len(buf) == cap(buf) {
			grown := min(max(2*int64(cap(buf)), 64<<10), most)
			if !x.hold(grown - int64(cap(buf))) {
				return nil, errNoRoom
			}
			buf = append(make([]byte, 0, grown), buf...)
		}
		var n int
		n, err = body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
	}
	if err == io.EOF {
		err = nil
	}
	return buf, err
}

// readAheadBody is a body that readAhead has read: what it read first
// (head, held), then the rest; err is what reading head ended with.
type readAheadBody struct {
	io.Reader
	io.Closer
	head []byte
	err  error
}

// readSentBody reads what the client has sent of r's body, within limit,
// before its connection is closed without an answer: the journal shows it,
// and closing a socket with bytes unread makes the kernel send a reset
// instead of the close an empty or garbage fault means. A client waiting
// for 100 Continue has sent nothing, and reading would invite it to.
func readSentBody(r *http.Request, limit int64) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > limit || waitsContinue(r) {
		return
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, limit)) //nolint:errcheck // closing anyway
}
