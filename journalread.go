package resourcedir

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The journal as the admin API reads it: GET /__admin/requests, its
// filters and waits, the JSON of an entry, and clearing it.

// parseJournalQuery reads the filters; the admin API is strict, so an
// unknown parameter or a bad value is a 400 that names it.
func parseJournalQuery(raw string) (journalQuery, error) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return journalQuery{}, errorf(http.StatusBadRequest, "The query string is malformed: %v.", err)
	}
	var q journalQuery
	ms := modelState{}
	number := func(name string, min int64) int64 {
		n, err := strconv.ParseInt(values.Get(name), 10, 64)
		if err != nil || n < min {
			ms.add(name, fmt.Sprintf("%s must be an integer of at least %d, not %q.", name, min, values.Get(name)))
		}
		return n
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if len(values[name]) > 1 {
			ms.add(name, fmt.Sprintf("%s is given %d times; give it once.", name, len(values[name])))
			continue
		}
		switch name {
		case "method":
			q.method = strings.ToUpper(values.Get(name))
		case "path":
			q.path = canonicalAPIPath(values.Get(name))
			if !strings.HasPrefix(q.path, "/") {
				ms.add(name, "path must start with /, e.g. /api/v2/resource/{id}.")
			}
		case "status":
			q.status, q.hasStatus = int(number(name, 0)), true
		case "since":
			q.since = uint64(number(name, 0))
		case "limit":
			q.limit = int(number(name, 1))
		case "count":
			q.count = int(number(name, 1))
		case "wait":
			d, err := time.ParseDuration(values.Get(name))
			if err != nil || d < 0 || d > maxJournalWait {
				ms.add(name, fmt.Sprintf("wait must be a duration such as 5s, at most %s, not %q.", maxJournalWait, values.Get(name)))
			}
			q.wait = d
		default:
			ms.add(name, fmt.Sprintf("Unknown parameter %q; the journal takes method, path, status, since, limit, count and wait.", name))
		}
	}
	if !ms.empty() {
		return journalQuery{}, invalidAs("The journal query is invalid.", ms)
	}
	if q.wait > 0 && q.count == 0 {
		q.count = 1
	}
	return q, nil
}

// readJournal answers GET /__admin/requests, waiting when asked until
// enough entries match. The answer is streamed (streamList), so that
// reading a journal of large bodies does not build it whole.
func (s *Server) readJournal(x *exchange, r *http.Request) (any, error) {
	q, err := parseJournalQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	var entries []*journalEntry
	state := "off"
	if x.ns.transient {
		// Nobody writes to a namespace that does not exist yet: the first
		// client request makes another. A wait ends within a second, so
		// that a poller (the console) asks again and finds it.
		q.wait = min(q.wait, time.Second)
	}
	if j := x.ns.journal; j != nil {
		entries, state = j.await(q, r.Context().Done(), s.closing), "on"
	}
	if q.limit > 0 && len(entries) > q.limit {
		entries = entries[len(entries)-q.limit:]
	}
	tail := fmt.Sprintf(`],"Count":%d,"Journal":%q}`, len(entries), state)
	return streamList(`{"Requests":[`, len(entries), func(b []byte, i int) ([]byte, error) {
		return appendJournalEntry(b, entries[i]), nil
	}, tail), nil
}

// appendJournalEntry writes one entry as the journal shows it.
func appendJournalEntry(b []byte, e *journalEntry) []byte {
	b = append(b, `{"Seq":`...)
	b = strconv.AppendUint(b, e.seq, 10)
	b = append(b, `,"Time":"`...)
	b = e.time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","RequestId":`...)
	b = appendJSONString(b, e.requestID)
	b = append(b, `,"Method":`...)
	b = appendJSONString(b, e.method)
	b = append(b, `,"Path":`...)
	b = appendJSONString(b, e.path) // masked by the pipeline
	b = append(b, `,"Query":`...)
	query := maskQuery(e.rawQuery)
	b = appendJSONString(b, query)
	b = append(b, `,"Params":`...)
	params, _ := url.ParseQuery(query)
	b = appendMultiMap(b, params)
	b = append(b, `,"Headers":`...)
	headers := maskHeaders(e.header)
	if !e.refused {
		headers["Host"] = []string{e.host}
	}
	b = appendMultiMap(b, headers)
	b = append(b, `,"HeadersTruncated":`...)
	b = strconv.AppendBool(b, e.headersCut)
	b = append(b, `,"Body":`...)
	b = appendJournalBody(b, e.body, e.truncated)
	b = append(b, `,"BodyTruncated":`...)
	b = strconv.AppendBool(b, e.truncated)
	b = append(b, `,"Status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, `,"DurationMs":`...)
	b = strconv.AppendFloat(b, e.durationMs, 'f', -1, 64)
	b = append(b, `,"Fault":`...)
	if e.faultID == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(e.faultID), 10)
	}
	b = append(b, `,"Delivered":`...)
	b = strconv.AppendInt(b, int64(e.delivered), 10)
	b = append(b, `,"Response":`...)
	respTruncated := e.respTruncated
	if e.respHeader == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"Headers":`...)
		b = appendMultiMap(b, maskHeaders(e.respHeader))
		b = append(b, `,"Body":`...)
		if e.answerMade {
			b, respTruncated = appendMadeAnswer(b, &e.answer, respTruncated)
		} else {
			b = appendJournalBody(b, e.respBody, respTruncated)
		}
		b = append(b, '}')
	}
	b = append(b, `,"ResponseTruncated":`...)
	b = strconv.AppendBool(b, respTruncated)
	if e.route == "/api/v2/resource" && (e.method == http.MethodGet || e.method == http.MethodHead) {
		if ignored := ignoredListParams(e.rawQuery); ignored != nil {
			b = append(b, `,"Ignored":`...)
			m := make(map[string][]string, len(ignored))
			for name, closest := range ignored {
				m[name] = []string{closest}
			}
			b = appendMultiMap(b, m)
		}
	}
	return append(b, '}')
}

// appendMadeAnswer writes a made answer as appendJournalBody writes the
// copy it replaces: the answer itself, which is compact JSON in UTF-8
// already, or its first maxJournalResponse bytes as a string.
func appendMadeAnswer(b []byte, a *madeAnswer, truncated bool) ([]byte, bool) {
	start := len(b)
	b = a.appendTo(b)
	if len(b)-start <= maxJournalResponse {
		return b, truncated
	}
	cut := string(b[start : start+maxJournalResponse])
	return appendJSONString(b[:start], cut), true
}

// appendMultiMap writes names in order, each to its value, or to a list of
// them when repeated.
func appendMultiMap(b []byte, m map[string][]string) []byte {
	b = append(b, '{')
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		vals := m[name]
		if len(vals) == 1 {
			b = appendJSONString(b, vals[0])
			continue
		}
		b = append(b, '[')
		for k, v := range vals {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJournalBody writes a captured body: the body itself (compacted) when
// it is JSON, read as the API reads it (past a byte-order mark), else a JSON
// string; null when empty. Either way invalid UTF-8 and lone surrogate
// escapes are written as U+FFFD, so that a strict JSON reader can read the
// journal whatever a client sent.
func appendJournalBody(b, body []byte, truncated bool) []byte {
	if len(body) == 0 {
		return append(b, "null"...)
	}
	if !truncated {
		if c := compactJSON(withoutBOM(body)); c != nil {
			return append(b, c...)
		}
	}
	return appendJSONString(b, string(body))
}

func (s *Server) clearJournal(x *exchange, r *http.Request) (any, error) {
	return struct{ Cleared int }{x.ns.journal.clear()}, nil
}
