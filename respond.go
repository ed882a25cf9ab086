package resourcedir

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// writeError answers err in the error shape, the one place an error
// becomes a status and a body: an *apiError says its status, and anything
// else is a 500 that names nothing internal (the log has it).
func (s *Server) writeError(x *exchange, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = errInternal(x.requestID)
		ae.cause = err
	}
	if ae.location != "" {
		x.Header().Set("Location", ae.location)
	}
	if ae.cause != nil {
		s.log.Error("request failed", "request_id", x.requestID, "error", ae.cause)
	}
	writeJSON(x, ae.Status, ae)
}

// jsonText is a handler's answer that is JSON already.
type jsonText []byte

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
	case *madeAnswer:
		writeMade(x, v)
	case jsonStream:
		x.Header()["Content-Type"] = jsonContentTypeHeader
		x.WriteHeader(http.StatusOK)
		v(x) //nolint:errcheck // the client has gone; nothing to tell it
	default:
		writeJSON(x, http.StatusOK, v)
	}
}

// writeMade writes a made answer from a pooled buffer, as list pages are
// the hot path. The journal makes it again when it is read (exchange.answer).
func writeMade(x *exchange, a *madeAnswer) {
	bp := bufPool.Get().(*[]byte)
	*bp = a.appendTo((*bp)[:0])
	x.kept.next, x.kept.madeLen = true, len(*bp)
	writeBody(x, cmp.Or(a.status, http.StatusOK), *bp)
	if cap(*bp) <= 1<<20 { // don't keep a giant page's buffer forever
		*bp = (*bp)[:0]
		bufPool.Put(bp)
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

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
	h["Content-Length"] = contentLength(w, len(body))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client has gone; nothing to tell it
}

// contentLength is the value of an answer's Content-Length header: the
// exchange's first answer keeps it in the exchange, rather than in a slice
// of its own (an allocation an answer). A second answer (a fault's after
// the handler's) gets its own, so that the first answer's headers, which
// the journal keeps, stay as they were sent.
func contentLength(w http.ResponseWriter, n int) []string {
	v := strconv.Itoa(n)
	if x, ok := w.(*exchange); ok && x.contentLength[0] == "" {
		x.contentLength[0] = v
		return x.contentLength[:]
	}
	return []string{v}
}

// madeAnswer is an answer of stored resources, which never change: a
// create's, an update's or a list's. The journal makes its bytes again
// when it is read, rather than keep a copy of them that most entries never
// show.
type madeAnswer struct {
	created *resource   // a create's resource
	status  int         // the create's status (-create-status); 0 means 200
	updated *resource   // an update's resource
	page    []*resource // a list's page, when neither is set
	total   int
	pages   int
	pageNo  int
}

func (a *madeAnswer) appendTo(b []byte) []byte {
	if a.updated != nil {
		return appendResource(b, a.updated, true)
	}
	if a.created != nil {
		b = append(b, `{"Data":[`...)
		b = appendResource(b, a.created, false)
		return append(b, `],"Total":1}`...)
	}
	b = append(b, `{"TotalResults":`...)
	b = strconv.AppendInt(b, int64(a.total), 10)
	b = append(b, `,"TotalPages":`...)
	b = strconv.AppendInt(b, int64(a.pages), 10)
	b = append(b, `,"Page":`...)
	b = strconv.AppendInt(b, int64(a.pageNo), 10)
	b = append(b, `,"ResourceList":[`...)
	for i, res := range a.page {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendResource(b, res, true)
	}
	return append(b, `],"_links":[],"_embedded":null}`...)
}

// streamList answers head, n items that item appends joined by commas, then
// tail, some 32 KiB at a time: a million items are never one buffer.
func streamList(head string, n int, item func(b []byte, i int) ([]byte, error), tail string) jsonStream {
	return func(w io.Writer) error {
		b := []byte(head)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = item(b, i); err != nil {
				return err
			}
			if len(b) > 32<<10 {
				if _, err := w.Write(b); err != nil {
					return err
				}
				b = b[:0]
			}
		}
		_, err := w.Write(append(b, tail...))
		return err
	}
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
