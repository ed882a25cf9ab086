package resourcedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The fault controls: a fault as a client sends it to POST /__admin/faults,
// read strictly and bounded, and the listing and removal of the faults in
// force. What a fault does to a request is faults.go's.

// faultProps are the properties a fault may have, as the wire spells them.
var faultProps = []string{"Method", "Path", "Match", "Skip", "Times", "Chance", "Seed", "Kind", "Status", "Headers", "Body", "DelayMs", "After"}

// listFaults streams the listing: built whole, one of large fault bodies took several times their size.
func (s *Server) listFaults(x *exchange, r *http.Request) (any, error) {
	faults := x.ns.faults.list()
	return streamList(`{"Faults":[`, len(faults), func(b []byte, i int) ([]byte, error) {
		text, err := marshalText(&faults[i])
		return append(b, text...), err
	}, "]}"), nil
}

func (s *Server) addFaults(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	parsed, err := parseFaults(body)
	if err != nil {
		return nil, err
	}
	// The bound is on every namespace's faults together: one add at a
	// time checks it, so that two cannot both take the last room.
	s.faultAdds.Lock()
	defer s.faultAdds.Unlock()
	var held, adding int64
	for _, ns := range s.sortedNamespaces() {
		held += ns.faults.heldBytes()
	}
	for _, f := range parsed {
		adding += f.held()
	}
	if held+adding > s.cfg.MaxFaultBodies {
		return nil, errorf(http.StatusBadRequest, "The bodies and headers of all faults together may hold at most %d bytes (-max-fault-bodies); %d are held and this adds %d. Clear faults (DELETE /__admin/faults) to make room.",
			s.cfg.MaxFaultBodies, held, adding)
	}
	added, err := x.ns.faults.add(parsed)
	if err != nil {
		return nil, err
	}
	return struct{ Faults []fault }{added}, nil
}

func (s *Server) clearFaults(x *exchange, r *http.Request) (any, error) {
	return struct{ Cleared int }{x.ns.faults.clear()}, nil
}

func (s *Server) deleteFault(x *exchange, r *http.Request) (any, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || !x.ns.faults.remove(id) {
		return nil, errorf(http.StatusNotFound, "No fault has the id %s.", r.PathValue("id"))
	}
	return struct{ Deleted int }{id}, nil
}

// parseFaults reads one fault object or an array of them, strictly: an
// unknown property, a wrong type or an impossible value is a 400 naming it.
func parseFaults(body []byte) ([]*fault, error) {
	trimmed := bytes.TrimSpace(withoutBOM(body))
	isArray := bytes.HasPrefix(trimmed, []byte("["))
	if !isArray { // one fault: read as an array of one
		trimmed = slices.Concat([]byte("["), trimmed, []byte("]"))
	}
	var specs []map[string]json.RawMessage
	err := json.Unmarshal(trimmed, &specs)
	isNull := func(m map[string]json.RawMessage) bool { return m == nil }
	if err != nil || !isArray && len(specs) != 1 || slices.ContainsFunc(specs, isNull) {
		return nil, errorf(http.StatusBadRequest, "A fault is a JSON object (or an array of them) such as %s.",
			`{"Method": "POST", "Path": "/api/v2/resource", "Status": 503, "Headers": {"Retry-After": "2"}, "Times": 1}`)
	}
	if len(specs) > maxFaults {
		return nil, errorf(http.StatusBadRequest, "At most %d faults may exist at once; this asks for %d.", maxFaults, len(specs))
	}
	ms := modelState{}
	parsed := make([]*fault, 0, len(specs))
	for i, spec := range specs {
		prefix := ""
		if isArray {
			prefix = fmt.Sprintf("[%d].", i)
		}
		parsed = append(parsed, parseFault(spec, prefix, &ms))
	}
	if !ms.empty() {
		return nil, invalidAs("The fault is invalid; nothing was added.", ms)
	}
	return parsed, nil
}

func parseFault(spec map[string]json.RawMessage, prefix string, ms *modelState) *fault {
	// The Seed drawn when none is given is below 2^53, so that a JavaScript
	// client can copy it exactly.
	f := &fault{Chance: 1, Kind: kindResponse, Seed: rand.Int64N(1 << 53)}
	into := map[string]any{"Method": &f.Method, "Path": &f.Path, "Skip": &f.Skip, "Times": &f.Times,
		"Chance": &f.Chance, "Seed": &f.Seed, "Kind": &f.Kind, "Status": &f.Status, "Headers": &f.Headers,
		"DelayMs": &f.DelayMs, "After": &f.After}
	seen := map[string]bool{}
	props := adminProps(spec, faultProps, prefix, "A fault", ms)
	for _, name := range faultProps {
		raw, ok := props[name]
		if !ok || name == "Body" && string(raw) == "null" {
			continue // absent, or a null Body: the error shape is sent
		}
		seen[name] = true
		switch name {
		case "Match":
			f.Match = parseFaultMatch(raw, prefix+"Match", ms)
		case "Body":
			var text string
			f.Body = compactJSON(raw)
			if json.Unmarshal(raw, &text) == nil {
				f.body, f.contentType = []byte(text), "text/plain; charset=utf-8"
			} else {
				f.body, f.contentType = f.Body, jsonMediaType // one copy: nothing writes to either
			}
		case "Headers":
			f.Headers = parseFaultHeaders(raw, prefix+name, ms)
		default:
			if json.Unmarshal(raw, into[name]) != nil {
				ms.add(prefix+name, fmt.Sprintf("%s has the wrong JSON type.", name))
			}
		}
	}
	f.draws = rand.New(rand.NewPCG(uint64(f.Seed), uint64(f.Seed)^0x9e3779b97f4a7c15))
	f.check(seen, prefix, ms)
	return f
}

// check adds to ms what is wrong with a fault as read (seen: the properties
// given), and spells its Method, Path and header names canonically.
func (f *fault) check(seen map[string]bool, prefix string, ms *modelState) {
	f.Method = strings.ToUpper(f.Method)
	if f.Method == "*" {
		f.Method = ""
	}
	if f.Method != "" && strings.ContainsFunc(f.Method, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		ms.add(prefix+"Method", fmt.Sprintf("Method %q is not an HTTP method; use GET, POST, PUT, ... or * for any.", f.Method))
	}
	switch canonical, ok := faultPath(f.Path); {
	case !seen["Path"]:
		ms.add(prefix+"Path", `Path is required: an /api/v2 route (/api/v2/resource, or /api/v2/resource/{id}, where an {name} segment matches any id), or "*" for every /api/v2 path.`)
	case ok:
		f.Path = canonical
	default:
		ms.add(prefix+"Path", fmt.Sprintf(`Path %q can never match: it must be an /api/v2 route, /api/v2/resource or /api/v2/resource/{id} (an {name} segment matches any id), or "*" for every /api/v2 path.`, f.Path))
	}
	if f.Skip < 0 || f.Skip > maxSkip {
		ms.add(prefix+"Skip", fmt.Sprintf("Skip must be from 0 to %d: how many matching requests go through before the fault fires.", maxSkip))
	}
	if f.Times < 0 {
		ms.add(prefix+"Times", "Times must be 0 (until cleared) or more.")
	}
	if !(f.Chance > 0 && f.Chance <= 1) {
		ms.add(prefix+"Chance", "Chance must be more than 0 and at most 1.")
	}
	if !slices.Contains(faultKinds, f.Kind) {
		ms.add(prefix+"Kind", fmt.Sprintf("Kind %q is unknown; it is one of %s.", f.Kind, strings.Join(faultKinds, ", ")))
	}
	if f.DelayMs < 0 || int64(f.DelayMs) > maxFaultDelay.Milliseconds() {
		ms.add(prefix+"DelayMs", fmt.Sprintf("DelayMs must be from 0 to %d.", maxFaultDelay.Milliseconds()))
	}
	if f.Kind == kindResponse {
		switch {
		case seen["Status"] && (f.Status < 100 || f.Status > 599):
			ms.add(prefix+"Status", "Status must be an HTTP status code from 100 to 599.")
		case !seen["Status"] && (seen["Headers"] || seen["Body"]):
			ms.add(prefix+"Status", "Headers and Body need a Status to be sent with.")
		case !seen["Status"] && f.DelayMs == 0:
			ms.add(prefix+"Status", "A response fault needs a Status, a DelayMs, or both.")
		case !seen["Status"] && f.After:
			ms.add(prefix+"After", "After replaces the real answer, so it needs a Status or another Kind.")
		}
	} else if slices.Contains(faultKinds, f.Kind) {
		for _, p := range []string{"Status", "Headers", "Body"} {
			if seen[p] {
				ms.add(prefix+p, fmt.Sprintf("%s goes with Kind %q only; a %q fault writes no HTTP answer.", p, kindResponse, f.Kind))
			}
		}
	}
	f.Headers = canonicalHeaders(f.Headers, prefix, ms)
}

// canonicalHeaders checks a fault's headers and spells their names as they
// are sent (Retry-After), so that GET /__admin/faults shows what goes out.
func canonicalHeaders(in map[string]string, prefix string, ms *modelState) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		value := in[name]
		canonical := http.CanonicalHeaderKey(name)
		_, twice := out[canonical]
		switch {
		case !validHeaderName(name) || strings.ContainsFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			ms.add(prefix+"Headers", fmt.Sprintf("The header %q is not a valid header name and value.", name))
		case twice:
			ms.add(prefix+"Headers", fmt.Sprintf("The header %s is given twice.", canonical))
		}
		out[canonical] = value
	}
	return out
}

// parseFaultHeaders reads a fault's Headers. A value that is not a string
// is named with its header: "the wrong JSON type" alone left a user to
// guess which header, and that a number must be quoted.
func parseFaultHeaders(raw json.RawMessage, prop string, ms *modelState) map[string]string {
	var values map[string]json.RawMessage
	if json.Unmarshal(raw, &values) != nil {
		ms.add(prop, `Headers has the wrong JSON type: it is an object of header names to string values, such as {"Retry-After": "2"}.`)
		return nil
	}
	if values == nil {
		return nil // null: none
	}
	headers := make(map[string]string, len(values))
	for _, name := range slices.Sorted(maps.Keys(values)) {
		var v string
		if json.Unmarshal(values[name], &v) != nil {
			ms.add(prop, fmt.Sprintf("Headers has the wrong JSON type for %q: header values are strings, such as %q: %q.",
				name, name, strings.Trim(string(values[name]), `"`)))
			continue
		}
		headers[name] = v
	}
	return headers
}
