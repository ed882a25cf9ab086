package resourcedir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Reading a request body: its size limit (413), its declared media type
// (415) and the byte-order mark some tools put before it. What the bytes
// mean is decode.go's business.

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
			x.capture.share(body)
		}
		_, err = io.ReadFull(r.Body, body)
	} else {
		// Chunked: the buffer is held as it grows.
		for err == nil && int64(len(body)) <= limit {
			if len(body) == cap(body) {
				grown := min(max(2*int64(cap(body)), 64<<10), limit+1)
				if !x.hold(grown - int64(cap(body))) {
					return nil, tooBusy(x)
				}
				body = append(make([]byte, 0, grown), body...)
			}
			var n int
			n, err = r.Body.Read(body[len(body):cap(body)])
			body = body[:len(body)+n]
		}
		if err == io.EOF {
			err = nil
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
		return badRequest("The request body could not be read: it did not arrive within the server's read timeout.")
	}
	return badRequest("The request body could not be read: %v.", err)
}

// tooLarge is the 413 for r. Unless the client waits for 100 Continue
// (then it sends nothing more) or declared more than could be thrown away,
// the rest of the body is read and thrown away first, within bounds, and
// the connection closed after the answer.
func tooLarge(x *exchange, r *http.Request, limit int64) error {
	x.Header().Set("Connection", "close")
	waits := strings.EqualFold(r.Header.Get("Expect"), "100-continue")
	if !waits && r.ContentLength <= limit+maxDiscard {
		rc := http.NewResponseController(x)
		rc.SetReadDeadline(time.Now().Add(discardTimeout)) //nolint:errcheck // best effort
		io.Copy(io.Discard, io.LimitReader(r.Body, maxDiscard))
		rc.SetReadDeadline(time.Time{}) //nolint:errcheck // best effort
	}
	return errBodyTooLarge(limit)
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
// and the connection closed, so that its unread bytes are not read.
func tooBusy(x *exchange) error {
	x.capture.truncated = true
	h := x.Header()
	h.Set("Retry-After", "1")
	h.Set("Connection", "close")
	return &apiError{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(
		"The server holds as many request bytes as it may at once (-max-request-bytes, %d); retry after a second.", x.srv.cfg.MaxRequestBytes)}
}

// readJSONBody is readBody for the API, whose bodies must be declared as
// JSON, as ASP.NET reads nothing else as JSON.
func readJSONBody(x *exchange, r *http.Request, limit int64) ([]byte, error) {
	body, err := readBody(x, r, limit)
	if err != nil || len(body) == 0 {
		return body, err
	}
	if sent := r.Header.Get("Content-Type"); !isJSONMediaType(sent) {
		if sent == "" {
			sent = "no Content-Type"
		} else {
			sent = "Content-Type " + strconv.Quote(sent)
		}
		return nil, &apiError{Status: http.StatusUnsupportedMediaType, Message: fmt.Sprintf(
			"The request body was sent with %s; send it as JSON with Content-Type: application/json.", sent)}
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

func errBodyTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"The request body is larger than the limit of %d bytes.", limit)}
}
