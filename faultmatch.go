package resourcedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// anyAPIPath is the Path of a fault that matches every /api/v2 path.
const anyAPIPath = "*"

// Bounds of a fault's Match, so that matching stays cheap and a fault's size is known.
const (
	maxMatchEntries = 32      // Query parameters, Headers, Body properties
	maxMatchText    = 4 << 10 // a name, a value, the Body string or object
	maxSkip         = 1 << 30
)

// faultMatch narrows which requests a fault matches, beyond Method and
// Path: Query parameters, Headers and Body properties (names in any case)
// must have these values, and a Body string must be in the body.
type faultMatch struct {
	Query   map[string]string `json:",omitempty"`
	Headers map[string]string `json:",omitempty"`
	Body    json.RawMessage   `json:",omitempty"` // a string, or an object of properties

	bodyText  string                     // Body as a string to find
	bodyProps map[string]json.RawMessage // Body as properties, by lower-case name, values compacted
}

// parseFaultMatch reads a fault's Match, strictly, each part bounded.
func parseFaultMatch(raw json.RawMessage, prefix string, ms *modelState) *faultMatch {
	var spec map[string]json.RawMessage
	if json.Unmarshal(raw, &spec) != nil || spec == nil {
		ms.add(prefix, `Match is an object such as {"Query": {"requestParams.page": "2"}, "Headers": {"X-Tenant": "a"}, "Body": {"ExternalID": "X-1"}}.`)
		return nil
	}
	m := &faultMatch{}
	props := adminProps(spec, []string{"Query", "Headers", "Body"}, prefix+".", "Match", ms)
	if raw, ok := props["Query"]; ok {
		m.Query = parseMatchPairs(raw, prefix+".Query", "a query parameter", ms)
	}
	if raw, ok := props["Headers"]; ok {
		m.Headers = parseMatchPairs(raw, prefix+".Headers", "a header", ms)
		for name := range m.Headers {
			if !validHeaderName(name) {
				ms.add(prefix+".Headers", fmt.Sprintf("%q is not a header name.", name))
			}
		}
	}
	if raw, ok := props["Body"]; ok {
		m.Body = compactJSON(raw)
		var obj map[string]json.RawMessage
		switch {
		case len(raw) > maxMatchText:
			ms.add(prefix+".Body", fmt.Sprintf("Body may be at most %d bytes of JSON.", maxMatchText))
		case json.Unmarshal(raw, &m.bodyText) == nil && m.bodyText != "":
		case json.Unmarshal(raw, &obj) == nil && len(obj) > 0 && len(obj) <= maxMatchEntries:
			m.bodyProps = make(map[string]json.RawMessage, len(obj))
			for name, v := range obj {
				m.bodyProps[strings.ToLower(name)] = compactJSON(v)
			}
		default:
			ms.add(prefix+".Body", fmt.Sprintf("Body is a string the request body must contain, or an object of 1 to %d JSON properties it must have with these values.", maxMatchEntries))
		}
	}
	return m
}

// parseMatchPairs reads Match's Query or Headers: names to string values, bounded.
func parseMatchPairs(raw json.RawMessage, prop, what string, ms *modelState) map[string]string {
	var pairs map[string]string
	if json.Unmarshal(raw, &pairs) != nil {
		ms.add(prop, fmt.Sprintf("%s is an object of names to string values.", prop))
		return nil
	}
	if len(pairs) == 0 || len(pairs) > maxMatchEntries {
		ms.add(prop, fmt.Sprintf("%s names 1 to %d of %s.", prop, maxMatchEntries, what))
	}
	for name, value := range pairs {
		if name == "" || len(name) > maxMatchText || len(value) > maxMatchText {
			ms.add(prop, fmt.Sprintf("Each name in %s is 1 to %d bytes, and each value at most %d.", prop, maxMatchText, maxMatchText))
			break
		}
	}
	return pairs
}

// matchBody is a request body as faults match on it: its bytes, and its
// properties by lower-case name, values compacted, parsed once for every
// fault (nil when no fault asks, or the body is no JSON object).
type matchBody struct {
	raw   []byte
	props map[string][]json.RawMessage
}

// parseMatchBody parses body's properties for the faults, once per request
// and outside the faults' lock: each fault parsing it again, under the
// lock, made 100 such faults cost a 1 MiB create 5.5 s, and every other
// request of the namespace waited as long.
func parseMatchBody(body []byte) map[string][]json.RawMessage {
	if bodyParseHook != nil {
		bodyParseHook()
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(withoutBOM(body), &props) != nil || props == nil {
		return nil
	}
	out := make(map[string][]json.RawMessage, len(props))
	for name, v := range props {
		lower := strings.ToLower(name)
		out[lower] = append(out[lower], compactJSON(v))
	}
	return out
}

// matches reports whether r and its body (empty unless a fault needs it) have what m asks for.
func (m *faultMatch) matches(r *http.Request, body matchBody) bool {
	if m == nil {
		return true
	}
	query := r.URL.Query()
	for name, want := range m.Query {
		found := false
		for got, values := range query {
			found = found || strings.EqualFold(got, name) && slices.Contains(values, want)
		}
		if !found {
			return false
		}
	}
	for name, want := range m.Headers {
		if !slices.Contains(r.Header.Values(name), want) {
			return false
		}
	}
	switch {
	case m.bodyText != "":
		return bytes.Contains(body.raw, []byte(m.bodyText))
	case m.bodyProps != nil:
		if body.props == nil {
			return false
		}
		// Every property asked for is there, each spelling of its name
		// with the value asked for.
		for name, want := range m.bodyProps {
			got := body.props[name]
			if len(got) == 0 {
				return false
			}
			for _, v := range got {
				if !bytes.Equal(v, want) {
					return false
				}
			}
		}
		return true
	}
	return true
}

// bodyParseHook, when set (by a test), is called at each parse of a
// request body for the faults' Match.Body properties.
var bodyParseHook func()

// faultPath returns the route pattern a fault's path means; ok is false when no request could match it.
func faultPath(p string) (string, bool) {
	if p == anyAPIPath {
		return p, true
	}
	if !strings.HasPrefix(p, "/") || p != cleanPath(p) {
		return "", false
	}
	canonical := canonicalAPIPath(p)
	if canonical == "/api/v2/resource" || canonical == versionPath {
		return canonical, true
	}
	id, ok := strings.CutPrefix(canonical, "/api/v2/resource/")
	return canonical, ok && id != "" && !strings.Contains(id, "/")
}

// needsBody reports whether a fault that can still fire matches r's method
// and path and then its body, which take needs read (others are left
// alone), whether one matches on its properties, which need it parsed, and
// whether one delays or hangs, which reads the body before it waits.
func (l *faultList) needsBody(r *http.Request) (body, props, delays bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.faults {
		if f.spent() || !f.matchesRoute(r) {
			continue
		}
		if f.Match != nil && len(f.Match.Body) > 0 {
			body = true
			props = props || f.Match.bodyProps != nil
		}
		delays = delays || f.DelayMs > 0 || f.Kind == kindHang
	}
	return body, props, delays
}

// giveBack undoes take's counting of fault id's firing, for a request
// refused before the fault did anything to it.
func (l *faultList) giveBack(id int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.faults {
		if f.ID == id && f.Fired > 0 {
			f.Fired--
			return
		}
	}
}

// matchesRoute reports whether r has f's Method and Path.
func (f *fault) matchesRoute(r *http.Request) bool {
	return (f.Method == "" || f.Method == r.Method) && (f.Path == anyAPIPath || pathMatches(f.Path, r.URL.Path))
}

// take finds the first fault, in the order they were added, that matches r
// (and body, read and parsed before when a fault needs it), has let its Skip through, has firings
// left and wins its draw, and counts the firing; the zero fault when none.
func (l *faultList) take(r *http.Request, body matchBody) fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.faults {
		if f.spent() || !f.matchesRoute(r) || !f.Match.matches(r, body) {
			continue
		}
		if f.skipped < f.Skip {
			f.skipped++
			continue
		}
		if f.Chance >= 1 || f.draws.Float64() < f.Chance {
			f.Fired++
			return *f
		}
	}
	return fault{}
}

// pathMatches compares a route pattern with a path by segment; {name} matches any non-empty one.
func pathMatches(pattern, path string) bool {
	ps, qs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(qs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") && qs[i] != "" {
			continue
		}
		if p != qs[i] {
			return false
		}
	}
	return true
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') &&
			!strings.ContainsRune("!#$%&'*+-.^_`|~", c)
	})
}
