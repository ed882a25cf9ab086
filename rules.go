package resourcedir

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The rules for what a client may write, each in one place:
// buildResource is the whole of create (section 2), update (3) and a seed
// item (7), on top of what decodeResourceInto read. Their verdicts, and every
// handler's, are one error type, apiError, which respond.go writes.

// writeMode says which request a body came from; the rules differ slightly.
type writeMode int

const (
	modeCreate writeMode = iota
	modeUpdate
	modeSeed
)

// maxProblems bounds what an error answer lists, so that a body with a
// million faults does not make an answer a hundred times its size.
const maxProblems = 100

// modelState collects what is wrong with a request, by property, so that a
// client learns every fault at once; it keeps the first maxProblems and
// counts the rest.
type modelState struct {
	props map[string][]string
	// order is props' keys in the order they were first added, so that a
	// merge keeps the first problems of the body rather than the first
	// names in sorted order ("[1000]" sorts before "[990]").
	order    []string
	problems int
}

func (m *modelState) add(prop, msg string) {
	m.problems++
	if m.problems > maxProblems {
		return
	}
	if m.props == nil {
		m.props = make(map[string][]string)
	}
	if _, ok := m.props[prop]; !ok {
		m.order = append(m.order, prop)
	}
	m.props[prop] = append(m.props[prop], msg)
}

// merge adds other's problems with their properties prefixed, as a seed
// reports item 3's Company as "[3].Company".
func (m *modelState) merge(prefix string, other *modelState) {
	for _, prop := range other.order {
		for _, msg := range other.props[prop] {
			m.add(prefix+prop, msg)
		}
	}
	m.problems += other.problems - other.kept()
}

// kept is how many problems m lists: add keeps the first maxProblems.
func (m *modelState) kept() int { return min(m.problems, maxProblems) }

func (m *modelState) empty() bool { return m.problems == 0 }

func (m *modelState) has(prop string) bool { _, ok := m.props[prop]; return ok }

// MarshalJSON writes the kept problems and, when some were left out, one
// entry that says how many.
func (m modelState) MarshalJSON() ([]byte, error) {
	out := make(map[string][]string, len(m.props)+1)
	maps.Copy(out, m.props)
	if rest := m.problems - m.kept(); rest > 0 {
		out["…"] = []string{fmt.Sprintf("and %d more problems", rest)}
	}
	return json.Marshal(out)
}

func invalid(ms modelState) *apiError {
	return invalidAs("The request is invalid.", ms)
}

// buildResource applies the rules to a decoded body and returns the
// resource to store. pathID is the canonical GUID of an update's path.
//   - create: the body's Id and StatusId are ignored; the store generates the Id;
//   - update: every editable property must be a key, Id must equal pathID,
//     Status may not be null, and Address is ignored (the store keeps the
//     stored one: Store.Update);
//   - seed: an Id may be given and must be a GUID.
func buildResource(in *resourceInput, mode writeMode, pathID string) (*resource, error) {
	ms := in.ms
	r := in.res // a copy: in keeps the request as sent
	if r.types == nil {
		r.types = []requestorType{}
	}
	id, idGiven := r.value(fieldID)
	r.set(fieldID, "", false)
	switch mode {
	case modeUpdate:
		if in.seen[fieldID] && !ms.has("Id") {
			if canonical, ok := parseGUID(id); !ok || canonical != pathID {
				ms.add("Id", fmt.Sprintf("Id in the body (%q) must equal the id in the path (%s).", id, pathID))
			}
		}
		r.set(fieldID, pathID, true)
	case modeSeed:
		if idGiven {
			if canonical, ok := parseGUID(id); ok {
				r.set(fieldID, canonical, true)
			} else {
				ms.add("Id", fmt.Sprintf("Id %q is not a GUID.", id))
			}
		}
	}
	if mode != modeUpdate && in.address != nil {
		switch in.address[0] {
		case 'n':
		case '{':
			r.address = compactJSON(in.address)
		default:
			ms.add("Address", "Address must be a JSON object or null.")
		}
	}
	applyStatus(&r, mode, in.seen[fieldStatus], &ms)
	for f := range numStringFields {
		// applyNames checks DisplayName, which it may generate.
		if limit := maxLength(f); limit > 0 && f != fieldDisplayName {
			checkLength(&r, f, limit, &ms)
		}
	}
	applyNames(&r, &ms, in.names)
	if mode == modeUpdate {
		var missing []string // partial updates are not supported
		for _, p := range editableProps {
			if !in.seen[p] {
				missing = append(missing, p.String())
				msg := "The " + p.String() + " property is required in an update (its value may be null)."
				if p == prop(fieldStatus) {
					msg = "The Status property is required in an update, with the value 'Active' or 'Inactive'."
				}
				ms.add(p.String(), msg)
			}
		}
		if len(missing) > 0 {
			return nil, invalidAs(fmt.Sprintf(
				"Partial updates are not supported: the body lacks %s. Send these too, as null if they have no value: a PUT carries every editable property.",
				strings.Join(missing, ", ")), ms)
		}
	}
	if !ms.empty() {
		return nil, invalid(ms)
	}
	return &r, nil
}

// applyStatus: "Active" or "Inactive" in any case, stored canonical; omitted
// or null is Active on create, and not allowed in an update.
func applyStatus(r *resource, mode writeMode, seen bool, ms *modelState) {
	status, ok := r.value(fieldStatus)
	switch {
	case !ok && mode == modeUpdate:
		if seen {
			ms.add("Status", "Status must be 'Active' or 'Inactive' in an update; null is not allowed.")
		}
	case !ok || strings.EqualFold(status, statusActive):
		r.set(fieldStatus, statusActive, true)
	case strings.EqualFold(status, statusInactive):
		r.set(fieldStatus, statusInactive, true)
	default:
		ms.add("Status", fmt.Sprintf("Status must be 'Active' or 'Inactive', not %q.", status))
	}
}

// applyNames: Company is required when FirstName and Surname are both
// empty; an empty DisplayName is generated from the name parts, and either
// way it must fit the limit. sent is the name parts as sent, one space
// apart (resourceInput.names).
func applyNames(r *resource, ms *modelState, sent string) {
	first, surname, company := namePart(r, fieldFirstName), namePart(r, fieldSurname), namePart(r, fieldCompany)
	if first == "" && surname == "" && company == "" {
		ms.add("Company", "Company is required when FirstName and Surname are both empty.")
	}
	limit := maxLength(fieldDisplayName)
	if namePart(r, fieldDisplayName) != "" {
		checkLength(r, fieldDisplayName, limit, ms)
		return
	}
	generated := joinNames(sent, first, surname, company)
	if generated == "" {
		return
	}
	if n := utf8.RuneCountInString(generated); n > limit {
		ms.add("DisplayName", fmt.Sprintf(
			"DisplayName was not sent, and the one generated from FirstName, Surname and Company is %d characters long; the limit is %d. Send a DisplayName of at most %d characters.",
			n, limit, limit))
		return
	}
	r.set(fieldDisplayName, generated, true)
}

func checkLength(r *resource, f field, limit int, ms *modelState) {
	if n := utf8.RuneCountInString(r.str(f)); n > limit {
		ms.add(f.String(), fmt.Sprintf("%s is %d characters long; the limit is %d.", f, n, limit))
	}
}

// namePart is a name field as the rules see it: trimmed, "" when null.
func namePart(r *resource, f field) string { return strings.TrimSpace(r.str(f)) }

// joinNames is joinNonEmpty(parts...), but sent itself (the parts as sent,
// one space apart) when that is the join already: a create that sends all
// three name parts and no DisplayName then stores their text once.
func joinNames(sent string, parts ...string) string {
	i := 0
	for k, p := range parts {
		if k > 0 {
			if i == len(sent) || sent[i] != ' ' {
				return joinNonEmpty(parts...)
			}
			i++
		}
		if p == "" || !strings.HasPrefix(sent[i:], p) {
			return joinNonEmpty(parts...)
		}
		i += len(p)
	}
	if i != len(sent) {
		return joinNonEmpty(parts...)
	}
	return sent
}

// joinNonEmpty joins the parts that are not empty, one space apart, with
// one allocation at most (none for a single part).
func joinNonEmpty(parts ...string) string {
	nonEmpty := make([]string, 0, 3) // the three name parts, on the stack
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, " ")
}

// apiError is the one error that handlers and pipeline steps return: an
// answer in the ASP.NET Web API error shape. Message is the whole sentence a
// client (or, for a seed, the terminal) is told. ModelState names every
// fault of a body or query that breaks the rules; location is a redirect's
// Location; cause, when set, is logged and never shown to the client.
type apiError struct {
	Status     int `json:"-"`
	Message    string
	ModelState modelState `json:",omitzero"` // zero when empty: add counts every problem
	location   string
	cause      error
}

func (e *apiError) Error() string { return e.Message }

// invalidAs is the 400 for a body or query that breaks the rules, naming
// every fault in ms.
func invalidAs(message string, ms modelState) *apiError {
	e := errorf(http.StatusBadRequest, "%s", message)
	e.ModelState = ms
	return e
}

func errInternal(requestID string) *apiError {
	return errorf(http.StatusInternalServerError, "An unexpected error occurred; quote request id %s when reporting it.", requestID)
}

// errorf is how every error answer is made: its status and a one-sentence
// Message (fields the rare answer needs beside them, ModelState, a
// Location or a logged cause, are set on the value it returns).
func errorf(status int, format string, args ...any) *apiError {
	return &apiError{Status: status, Message: fmt.Sprintf(format, args...)}
}
