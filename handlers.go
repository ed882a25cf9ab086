package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Config holds the server's settings; main fills it from flags.
type Config struct {
	MaxPageSize int    // list pageSize is clamped to this
	MaxBody     int64  // request bodies larger than this get 413
	MaxSeedBody int64  // the same for POST /__admin/resources, which takes many at once
	JournalSize int    // requests kept in the journal; 0 turns it off
	Auth        string // "user:token" to require HTTP Basic authentication; "" for none
	CORSOrigin  string // origin allowed by CORS ("*" for any); "" turns CORS off
}

// DefaultConfig is the configuration of `go run .` with no flags.
func DefaultConfig() Config {
	return Config{MaxPageSize: 500, MaxBody: 1 << 20, MaxSeedBody: 64 << 20, JournalSize: 1000}
}

const defaultPageSize = 20

// Server serves the emulated API and the test-double controls.
type Server struct {
	cfg   Config
	store *Store
	log   *slog.Logger
	mux   *http.ServeMux
	snap  *snapshotter // nil when running in memory only

	journal *journal
	// closing is closed when the server begins to shut down, to cut
	// injected delays short.
	closing      chan struct{}
	closeClosing sync.Once
	faults       faultList

	requestIDPrefix string
	requestSeq      atomic.Uint64
}

// NewServer returns a Server over store. A nil logger discards logs.
func NewServer(cfg Config, store *Store, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Limits left at zero (a test's Config{}) take their defaults rather
	// than divide every list by zero or refuse every body.
	if cfg.MaxPageSize < 1 {
		cfg.MaxPageSize = DefaultConfig().MaxPageSize
	}
	if cfg.MaxBody < 1 {
		cfg.MaxBody = DefaultConfig().MaxBody
	}
	s := &Server{cfg: cfg, store: store, log: logger, mux: http.NewServeMux(), journal: newJournal(cfg.JournalSize)}
	s.requestIDPrefix = uuid.NewString()[:8]
	s.closing = make(chan struct{})
	s.route("/api/v2/resource", map[string]http.HandlerFunc{
		http.MethodGet:  s.handleList,
		http.MethodPost: s.handleCreate,
	})
	s.route("/api/v2/resource/{id}", map[string]http.HandlerFunc{
		http.MethodPut: s.handleUpdate,
	})
	s.registerAdmin()
	s.registerConsole()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No resource matches the path %s.", r.URL.Path)})
	})
	return s
}

// beginShutdown ends pending injected delays; main registers it with
// http.Server.RegisterOnShutdown.
func (s *Server) beginShutdown() { s.closeClosing.Do(func() { close(s.closing) }) }

// route registers one handler per method on path, and a JSON 405 with an
// Allow header for every other method (ServeMux's own 405 is plain text).
func (s *Server) route(path string, handlers map[string]http.HandlerFunc) {
	var allow []string
	for method, h := range handlers {
		s.mux.HandleFunc(method+" "+path, h)
		allow = append(allow, method)
		if method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	slices.Sort(allow)
	allowed := strings.Join(allow, ", ")
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Message: fmt.Sprintf(
			"The method %s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, allowed)})
	})
}

// ServeHTTP gives every request an X-Request-Id, one log line, and a JSON
// 500 instead of a dropped connection when a handler panics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = s.requestIDPrefix + "-" + strconv.FormatUint(s.requestSeq.Add(1), 10)
	}
	w.Header().Set("X-Request-Id", id)
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic serving request", "request_id", id, "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if rec.wroteHeader {
				// Part of a response is out: cut the connection so the client
				// sees a failure rather than a truncated 200.
				panic(http.ErrAbortHandler)
			}
			writeError(rec, &apiError{Status: http.StatusInternalServerError, Message: fmt.Sprintf(
				"An unexpected error occurred; quote request id %s when reporting it.", id)})
		}
		s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status(),
			"bytes", rec.bytes, "duration", time.Since(start), "request_id", id)
	}()
	if p := r.URL.Path; strings.HasPrefix(p, "/") && p != cleanPath(p) {
		// ServeMux would answer an unclean path with an HTML redirect; the
		// real service knows no such path.
		writeError(rec, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No resource matches the path %s.", p)})
		return
	}
	s.serveControlled(rec, r, id)
}

// cleanPath is the path ServeMux would redirect p to.
func cleanPath(p string) string {
	cleaned := path.Clean(p)
	if strings.HasSuffix(p, "/") && cleaned != "/" {
		cleaned += "/"
	}
	return cleaned
}

// validRequestID accepts a caller's request id only when it is short and
// printable, so that it is safe to echo and log.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// statusRecorder remembers what was written, for the log and the recovery.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	bytes       int
	wroteHeader bool
}

func (rec *statusRecorder) WriteHeader(code int) {
	if !rec.wroteHeader {
		rec.code, rec.wroteHeader = code, true
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *statusRecorder) Write(b []byte) (int, error) {
	rec.wroteHeader = true
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += n
	return n, err
}

func (rec *statusRecorder) status() int {
	if rec.code == 0 {
		return http.StatusOK
	}
	return rec.code
}

// Unwrap lets http.ResponseController reach the connection.
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// apiError is an error response in the ASP.NET Web API shape.
type apiError struct {
	Status     int
	Message    string
	ModelState modelState
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

func invalid(ms modelState) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: "The request is invalid.", ModelState: ms}
}

func errBodyTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"The request body is larger than the limit of %d bytes.", limit)}
}

// writeError writes err; an error that is not an *apiError is a 500 that
// names nothing internal.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{Status: http.StatusInternalServerError, Message: fmt.Sprintf(
			"An unexpected error occurred; quote request id %s when reporting it.", w.Header().Get("X-Request-Id"))}
	}
	body := struct {
		Message    string
		ModelState modelState `json:",omitempty"`
	}{ae.Message, ae.ModelState}
	writeJSON(w, ae.Status, body)
}

// writeJSON encodes v with encoding/json, for the small, rare responses.
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

func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client has gone; nothing to tell it
}

// bufPool recycles response buffers: list pages are the hot path.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeEncoded builds a response with appendBody into a pooled buffer.
func writeEncoded(w http.ResponseWriter, appendBody func([]byte) []byte) {
	bp := bufPool.Get().(*[]byte)
	b := appendBody((*bp)[:0])
	writeBody(w, http.StatusOK, b)
	if cap(b) <= 1<<20 { // don't keep a giant page's buffer forever
		*bp = b
		bufPool.Put(bp)
	}
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errBodyTooLarge(limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errBodyTooLarge(limit)
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		// Said plainly: the error's text names the server's own address.
		return nil, &apiError{Status: http.StatusBadRequest, Message: "The request body could not be read: it did not arrive within the server's read timeout."}
	}
	if err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("The request body could not be read: %v.", err)}
	}
	return body, nil
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	res, err := s.decodeWrite(w, r, modeCreate, "")
	if err != nil {
		writeError(w, err)
		return
	}
	res, err = s.store.Create(res)
	if err != nil {
		writeError(w, fmt.Errorf("create resource: %w", err))
		return
	}
	writeEncoded(w, func(b []byte) []byte {
		b = append(b, `{"Data":[`...)
		b = appendResource(b, res, false)
		return append(b, `],"Total":1}`...)
	})
}

// decodeWrite reads and validates a create or update body; pathID is the
// canonical GUID of an update's path, which the body's Id must equal.
func (s *Server) decodeWrite(w http.ResponseWriter, r *http.Request, mode writeMode, pathID string) (*Resource, error) {
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	ms := modelState{}
	in, err := decodeResource(body, ms)
	if err != nil {
		return nil, err
	}
	res := in.build(mode, ms)
	if _, badType := ms["Id"]; mode == modeUpdate && in.seen[fieldID] && !badType {
		// Checked with the other rules, so that it is reported with them.
		bodyID, _ := res.value(fieldID)
		if canonical, ok := parseGUID(bodyID); !ok || canonical != pathID {
			ms.add("Id", fmt.Sprintf("Id in the body (%q) must equal the id in the path (%s).", bodyID, pathID))
		}
	}
	if mode == modeUpdate {
		if missing := in.missingEditable(); len(missing) > 0 {
			for _, p := range missing {
				ms.add(p, "The "+p+" property is required in an update (its value may be null).")
			}
			return nil, &apiError{Status: http.StatusBadRequest, ModelState: ms, Message: fmt.Sprintf(
				"Partial updates are not supported: the body lacks %s. Send every editable property with its current or new value.",
				strings.Join(missing, ", "))}
		}
	}
	if len(ms) > 0 {
		return nil, invalid(ms)
	}
	return res, nil
}

// parseGUID reads a GUID in any case and returns its canonical form.
func parseGUID(s string) (string, bool) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return id.String(), true
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := parseGUID(r.PathValue("id"))
	if !ok {
		writeError(w, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
			"The id in the path, %q, is not a GUID.", r.PathValue("id"))})
		return
	}
	res, err := s.decodeWrite(w, r, modeUpdate, id)
	if err != nil {
		writeError(w, err)
		return
	}
	res.set(fieldID, id, true)
	updated, found := s.store.Update(res)
	if !found {
		writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No resource has the id %s.", id)})
		return
	}
	writeEncoded(w, func(b []byte) []byte { return appendResource(b, updated, true) })
}

// List query parameters, matched case-insensitively.
const (
	paramFilters  = "requestParams.filters"
	paramPage     = "requestParams.page"
	paramPageSize = "requestParams.pageSize"
	paramSorts    = "requestParams.sorts"
)

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q, pageSize, err := s.parseListQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, err)
		return
	}
	total, page := s.store.List(q)
	totalPages := (total + pageSize - 1) / pageSize
	writeEncoded(w, func(b []byte) []byte {
		b = append(b, `{"TotalResults":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, `,"TotalPages":`...)
		b = strconv.AppendInt(b, int64(totalPages), 10)
		b = append(b, `,"Page":`...)
		b = strconv.AppendInt(b, int64(q.Page), 10)
		b = append(b, `,"ResourceList":[`...)
		for i, res := range page {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendResource(b, res, true)
		}
		return append(b, `],"_links":[],"_embedded":null}`...)
	})
}

// parseListQuery reads the list parameters; it returns the page size in
// effect after clamping.
func (s *Server) parseListQuery(rawQuery string) (Query, int, error) {
	// Split by hand, not with url.ParseQuery: that rejects ';', which
	// ASP.NET reads as an ordinary character (a filter value may hold one),
	// and its map would make the choice between one name in two cases
	// random. The first occurrence of a parameter counts, as in ASP.NET.
	listParams := [...]string{paramFilters, paramPage, paramPageSize, paramSorts}
	var values [len(listParams)]*string
	for rest := rawQuery; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		var value string
		if err == nil {
			value, err = url.QueryUnescape(rawValue)
		}
		if err != nil {
			return Query{}, 0, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("The query string is malformed: %v.", err)}
		}
		for i, known := range listParams {
			if values[i] == nil && strings.EqualFold(name, known) {
				values[i] = &value
			}
		}
	}
	param := func(name string) (string, bool) {
		i := slices.Index(listParams[:], name)
		if values[i] == nil {
			return "", false
		}
		return *values[i], true
	}
	var err error
	q := Query{Page: 1, PageSize: defaultPageSize}
	ms := modelState{}
	positive := func(name string, dst *int) {
		text, ok := param(name)
		if !ok {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil || n < 1 {
			ms.add(name, fmt.Sprintf("%s must be an integer of at least 1, not %q.", name, text))
			return
		}
		*dst = n
	}
	positive(paramPage, &q.Page)
	positive(paramPageSize, &q.PageSize)
	q.PageSize = min(q.PageSize, s.cfg.MaxPageSize)
	if text, ok := param(paramFilters); ok {
		if q.Filter, err = parseFilter(text); err != nil {
			ms.add(paramFilters, err.Error())
		}
	}
	if text, ok := param(paramSorts); ok {
		if q.Sorts, err = parseSorts(text); err != nil {
			ms.add(paramSorts, err.Error())
		}
	}
	if len(ms) == 0 {
		return q, q.PageSize, nil
	}
	msg := "The request is invalid."
	if len(ms) == 1 {
		for _, msgs := range ms {
			msg = msgs[0]
		}
	}
	return Query{}, 0, &apiError{Status: http.StatusBadRequest, Message: msg, ModelState: ms}
}
