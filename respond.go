package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// apiError is an answer in the ASP.NET Web API error shape. cause, when
// set, is logged and never shown to the client.
type apiError struct {
	Status     int
	Message    string
	ModelState modelState
	cause      error
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

func errInternal(requestID string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Message: fmt.Sprintf(
		"An unexpected error occurred; quote request id %s when reporting it.", requestID)}
}

func errBodyTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"The request body is larger than the limit of %d bytes.", limit)}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// writeError answers err in the error shape: the errors of the wire and
// the rules are 400s, an *apiError says its status, and anything else is a
// 500 that names nothing internal (the log has it).
func (s *Server) writeError(x *exchange, err error) {
	var ae *apiError
	var je *jsonError
	var ve *validationError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &je):
		ae = &apiError{Status: http.StatusBadRequest, Message: je.msg}
	case errors.As(err, &ve):
		ae = &apiError{Status: http.StatusBadRequest, Message: ve.Message, ModelState: ve.ModelState}
	default:
		ae = &apiError{Status: http.StatusInternalServerError, cause: err}
	}
	if ae.Status == http.StatusInternalServerError {
		if ae.Message == "" {
			ae.Message = errInternal(x.requestID).Message
		}
		if ae.cause != nil {
			s.log.Error("request failed", "request_id", x.requestID, "error", ae.cause)
		}
	}
	body := struct {
		Message    string
		ModelState *modelState `json:",omitempty"`
	}{Message: ae.Message}
	if !ae.ModelState.empty() {
		body.ModelState = &ae.ModelState
	}
	writeJSON(x, ae.Status, body)
}

// jsonText is a handler's answer that is JSON already.
type jsonText []byte

// pooledJSON is an answer built in a pooled buffer; list pages are the hot
// path.
type pooledJSON struct{ buf *[]byte }

// jsonStream is an answer written piece by piece, so that a large one is
// never held whole in memory.
type jsonStream func(w io.Writer) error

// created is a handler's answer that made something new: a 201.
type created struct{ v any }

// writeValue writes a handler's answer as a 200 (a 201 when created).
func writeValue(x *exchange, v any) {
	switch v := v.(type) {
	case created:
		writeJSON(x, http.StatusCreated, v.v)
	case jsonText:
		writeBody(x, http.StatusOK, v)
	case pooledJSON:
		writeBody(x, http.StatusOK, *v.buf)
		if cap(*v.buf) <= 1<<20 { // don't keep a giant page's buffer forever
			*v.buf = (*v.buf)[:0]
			bufPool.Put(v.buf)
		}
	case jsonStream:
		x.Header()["Content-Type"] = jsonContentTypeHeader
		x.WriteHeader(http.StatusOK)
		v(x) //nolint:errcheck // the client has gone; nothing to tell it
	default:
		writeJSON(x, http.StatusOK, v)
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// encoded builds an answer with appendBody into a pooled buffer.
func encoded(appendBody func([]byte) []byte) pooledJSON {
	bp := bufPool.Get().(*[]byte)
	*bp = appendBody((*bp)[:0])
	return pooledJSON{bp}
}

// writeJSON encodes v with encoding/json, for the small, rare answers.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		status = http.StatusInternalServerError
		buf.WriteString(`{"Message":"An unexpected error occurred while encoding the response."}`)
	}
	writeBody(w, status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// jsonContentTypeHeader is every JSON answer's Content-Type, one slice for all:
// Header.Set would canonicalise the key and allocate the slice per answer.
// Nothing appends to or writes into a header's values once they are set.
var jsonContentTypeHeader = []string{jsonMediaType}

const jsonMediaType = "application/json; charset=utf-8"

func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentTypeHeader
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client has gone; nothing to tell it
}

// How much of an oversized body the server reads and throws away before it
// answers 413: a client that sends its whole body before reading the answer
// (most HTTP libraries) would otherwise see the connection reset.
const (
	maxDiscard     = 64 << 20
	discardTimeout = 10 * time.Second
)

// readBody reads a request body of at most limit bytes.
func readBody(x *exchange, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(x, r, limit)
	}
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		// Declared: read exactly that, into a buffer of that size (net/http
		// ends the body there, and a short one is an error).
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
		if int64(len(body)) > limit {
			return nil, tooLarge(x, r, limit)
		}
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		// Said plainly: the error's text names the server's own address.
		return nil, badRequest("The request body could not be read: it did not arrive within the server's read timeout.")
	}
	if err != nil {
		return nil, badRequest("The request body could not be read: %v.", err)
	}
	return body, nil
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
