package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// field names a property of a resource that filters and sorts can address.
// The string fields come first so that they index Resource.vals directly.
type field uint8

const (
	fieldID field = iota
	fieldDisplayName
	fieldFirstName
	fieldSurname
	fieldCompany
	fieldPosition
	fieldStatus
	fieldExternalID
	fieldPhone
	fieldMobile
	fieldFax
	fieldEmail
	fieldAddressComment
	numStringFields

	// fieldStatusID is derived from Status, so it has no slot of its own.
	fieldStatusID = numStringFields
	numFields     = numStringFields + 1
)

// fieldNames are the canonical (wire) spellings, indexed by field.
var fieldNames = [numFields]string{
	fieldID:             "Id",
	fieldDisplayName:    "DisplayName",
	fieldFirstName:      "FirstName",
	fieldSurname:        "Surname",
	fieldCompany:        "Company",
	fieldPosition:       "Position",
	fieldStatus:         "Status",
	fieldExternalID:     "ExternalID",
	fieldPhone:          "Phone",
	fieldMobile:         "Mobile",
	fieldFax:            "Fax",
	fieldEmail:          "Email",
	fieldAddressComment: "AddressComment",
	fieldStatusID:       "StatusId",
}

func (f field) String() string { return fieldNames[f] }

// lookupField finds a field by name, ignoring case as the .NET service does.
func lookupField(name string) (field, bool) {
	for f, n := range fieldNames {
		if strings.EqualFold(n, name) {
			return field(f), true
		}
	}
	return 0, false
}

// Status values and their ids.
const (
	statusActive   = "Active"
	statusInactive = "Inactive"
)

// requestorType is a requestor type by its Id in the fixed table.
type requestorType uint8

var requestorTypeTable = []struct {
	id   requestorType
	name string
}{
	{2, "Team"},
	{4, "Customer"},
	{8, "Contractor"},
	{16, "Employee"},
	{32, "Company"},
}

func lookupRequestorType(name string) (requestorType, bool) {
	for _, t := range requestorTypeTable {
		if strings.EqualFold(t.name, name) {
			return t.id, true
		}
	}
	return 0, false
}

func (t requestorType) String() string {
	for _, e := range requestorTypeTable {
		if e.id == t {
			return e.name
		}
	}
	return "type" + strconv.Itoa(int(t))
}

// Resource is one person or company in the directory. A Resource is never
// mutated once it is in the store: an update stores a new value, so readers
// (list pages, snapshots) can hold pointers without locks.
type Resource struct {
	vals  [numStringFields]string // Id and Status are never null
	nulls uint16                  // bit f set: string field f is null
	types []requestorType
	// address is the Address object exactly as created (compacted JSON), nil
	// when it was null or absent.
	address []byte
}

// value returns the field's text and whether it is non-null. StatusId is
// given as its decimal text.
func (r *Resource) value(f field) (string, bool) {
	if f == fieldStatusID {
		return strconv.Itoa(r.statusID()), true
	}
	if r.nulls&(1<<f) != 0 {
		return "", false
	}
	return r.vals[f], true
}

func (r *Resource) isNull(f field) bool {
	return f < numStringFields && r.nulls&(1<<f) != 0
}

func (r *Resource) statusID() int {
	if r.vals[fieldStatus] == statusInactive {
		return 2
	}
	return 1
}

// ID returns the resource's GUID in its canonical lower-case form.
func (r *Resource) ID() string { return r.vals[fieldID] }

// set stores a field value; null when ok is false.
func (r *Resource) set(f field, s string, ok bool) {
	if !ok {
		r.nulls |= 1 << f
		r.vals[f] = ""
		return
	}
	r.nulls &^= 1 << f
	r.vals[f] = s
}

// Limits of the specification, counted in characters.
const (
	maxFirstName   = 50
	maxSurname     = 50
	maxCompany     = 100
	maxDisplayName = 100
)

// Request properties beyond the string fields, which share the field numbering.
const (
	propTypes = int(numStringFields) + iota
	propAddress
	numProps
)

func propName(p int) string {
	switch p {
	case propTypes:
		return "Types"
	case propAddress:
		return "Address"
	}
	return fieldNames[p]
}

// lookupProp matches a request property name case-insensitively, as the .NET
// service's model binder does; -1 means the property is ignored.
func lookupProp(name string) int {
	for p := 0; p < numProps; p++ {
		if strings.EqualFold(propName(p), name) {
			return p
		}
	}
	return -1
}

// editableProps are the keys a full-replacement PUT must carry.
var editableProps = []int{
	int(fieldID), int(fieldDisplayName), int(fieldFirstName), int(fieldSurname), int(fieldCompany),
	int(fieldPosition), int(fieldPhone), int(fieldMobile), int(fieldFax), int(fieldEmail),
	int(fieldAddressComment), int(fieldExternalID), int(fieldStatus), propTypes,
}

// modelState collects what is wrong with a request, by property, so that a
// client learns every fault at once.
type modelState map[string][]string

func (m modelState) add(prop, msg string) { m[prop] = append(m[prop], msg) }

// resourceInput is a decoded request body before the rules are applied.
type resourceInput struct {
	res  Resource // string fields as sent; unset ones are null
	seen [numProps]bool
}

// decodeResource reads a create, update or seed body. A body that is not a
// JSON object is an *apiError; wrongly typed properties go to ms.
func decodeResource(body []byte, ms modelState) (*resourceInput, error) {
	in := &resourceInput{}
	if in.decodeFast(body, ms) {
		return in, nil
	}
	// Not a plain object (or not JSON at all): read it token by token, which
	// says where and why it broke.
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := expectObjectStart(dec, body); err != nil {
		return nil, err
	}
	in.res.nulls = 1<<numStringFields - 1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err, dec.InputOffset())
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err, dec.InputOffset())
		}
		p := lookupProp(key)
		if p < 0 {
			continue
		}
		in.seen[p] = true
		in.decodeProp(p, raw, ms)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err, dec.InputOffset())
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := body[end:]
		return nil, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
			"The request body has data after the JSON object, at byte %d.",
			end+int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))))}
	}
	return in, nil
}

// expectObjectStart consumes the opening brace, or explains what came instead.
func expectObjectStart(dec *json.Decoder, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &apiError{Status: http.StatusBadRequest, Message: "The request body is empty; expected a JSON object."}
	}
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err, dec.InputOffset())
	}
	if d, ok := tok.(json.Delim); ok && d == '{' {
		return nil
	}
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
		"The request body must be a JSON object, not %s.", jsonKind(tok))}
}

func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "that"
}

func syntaxError(err error, offset int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
			"The request body is not valid JSON: it ends early, at byte %d.", offset)}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errBodyTooLarge(mbe.Limit)
	}
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(
		"The request body is not valid JSON: %s (at byte %d).", strings.TrimPrefix(err.Error(), "json: "), offset)}
}

// The fast path. Nearly every body is one plain JSON object; decodeFast reads
// it in a single pass over the bytes and hands each known property to
// decodeProp in the order sent, as the token-by-token reading does, so that
// duplicates and their faults come out the same. Whatever it cannot vouch
// for (not JSON, not an object, data after it, an escaped key, deep nesting)
// it leaves untouched to that reading, which explains what is wrong.

// maxFastDepth bounds the nesting the fast path reads; deeper bodies take
// the token-by-token path, where encoding/json applies its own limit.
const maxFastDepth = 64

// member is a known property of a body and its value exactly as sent.
type member struct {
	p     int
	raw   []byte
	plain bool // a string property's string value without escapes, in UTF-8
}

// decodeFast decodes body into in when body is one JSON object that it can
// check completely; otherwise it returns false and leaves in and ms as they
// were.
func (in *resourceInput) decodeFast(body []byte, ms modelState) bool {
	var buf [numProps + 1]member
	members := buf[:0]
	i := skipJSONSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		return false
	}
	i = skipJSONSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			if i == len(body) || body[i] != '"' {
				return false
			}
			end, escaped := scanString(body, i)
			if end < 0 || escaped {
				return false
			}
			key := body[i+1 : end-1]
			if i = skipJSONSpace(body, end); i == len(body) || body[i] != ':' {
				return false
			}
			start := skipJSONSpace(body, i+1)
			if i = scanValue(body, start); i < 0 {
				return false
			}
			if p := lookupPropBytes(key); p >= 0 {
				members = append(members, member{p: p, raw: body[start:i]})
			}
			var more bool
			if i, more = nextMember(body, i, '}'); more {
				continue
			}
			if i < 0 {
				return false
			}
			break
		}
	}
	if skipJSONSpace(body, i) != len(body) {
		return false
	}
	// Plain string values share one allocation rather than taking one each;
	// decodeProp reads the other values.
	size := 0
	for k, m := range members {
		if m.p >= int(numStringFields) || m.raw[0] != '"' {
			continue
		}
		if inner := m.raw[1 : len(m.raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			members[k].plain = true
			size += len(inner)
		}
	}
	var arena strings.Builder
	arena.Grow(size)
	for _, m := range members {
		if m.plain {
			arena.Write(m.raw[1 : len(m.raw)-1])
		}
	}
	text := arena.String()
	in.res.nulls = 1<<numStringFields - 1
	for _, m := range members {
		in.seen[m.p] = true
		if !m.plain {
			in.decodeProp(m.p, m.raw, ms)
			continue
		}
		n := len(m.raw) - 2
		in.res.set(field(m.p), text[:n], true)
		text = text[n:]
	}
	return true
}

// nextMember reads what follows a member of an object or an element of an
// array: it returns the index of the next one and true after a comma, the
// index just past closer and false at the end, or -1 and false otherwise.
func nextMember(b []byte, i int, closer byte) (next int, more bool) {
	if i = skipJSONSpace(b, i); i < len(b) && b[i] == ',' {
		return skipJSONSpace(b, i+1), true
	}
	if i < len(b) && b[i] == closer {
		return i + 1, false
	}
	return -1, false
}

// skipJSONSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return i
		}
	}
	return i
}

// scanString returns the end (just past the closing quote) of the string
// that starts at b[i], and whether it holds escapes, which it does not
// check; end is -1 when the string is unterminated or holds a control
// character.
func scanString(b []byte, i int) (end int, escaped bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		if plainStringByte[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			i++
		default:
			return -1, false
		}
	}
	return -1, false
}

// plainStringByte tells the bytes that stand for themselves in a JSON string.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < len(t); c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// stringEnd returns the end (just past the closing quote) of the string that
// starts at b[i], or -1, without checking what it holds.
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1
		}
		i += k
		backslashes := 0
		for b[i-1-backslashes] == '\\' {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i + 1
		}
	}
}

// scanNested returns the end of the object or array that starts at b[i],
// matching brackets without checking anything else, or -1 when it is
// unterminated or nested deeper than limit.
func scanNested(b []byte, i, limit int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return -1
			}
			i = end - 1
		case '{', '[':
			if depth++; depth > limit {
				return -1
			}
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// scanScalar returns the end of the number or literal that starts at b[i]:
// the next delimiter or white space.
func scanScalar(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// scanValue returns the end of the JSON value that starts at b[i], once it
// has checked that the value is valid JSON, or -1.
func scanValue(b []byte, i int) int {
	if i == len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, escaped := scanString(b, i)
		if end < 0 || escaped && !json.Valid(b[i:end]) {
			return -1
		}
		return end
	case '{', '[':
		if end := scanNested(b, i, maxFastDepth); end >= 0 && json.Valid(b[i:end]) {
			return end
		}
		return -1
	}
	end := scanScalar(b, i)
	if s := string(b[i:end]); s == "null" || s == "true" || s == "false" || json.Valid(b[i:end]) {
		return end
	}
	return -1
}

// valueEnd returns the end of the value that starts at b[i] in valid JSON.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		return scanNested(b, i, maxNestingDepth)
	}
	return scanScalar(b, i)
}

// maxNestingDepth is encoding/json's limit: no valid JSON is nested deeper.
const maxNestingDepth = 10000

// propsByLen lists the properties by the length of their names.
var propsByLen = func() (t [16][]int) {
	for p := range numProps {
		t[len(propName(p))] = append(t[len(propName(p))], p)
	}
	return t
}()

// lookupPropBytes is lookupProp for a key as it appears in the body, without
// escapes.
func lookupPropBytes(key []byte) int {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return lookupProp(string(key)) // e.g. "ſtatus", which EqualFold matches
		}
	}
	if len(key) >= len(propsByLen) {
		return -1
	}
next:
	for _, p := range propsByLen[len(key)] {
		// The names are letters only, so c|0x20 folds exactly the case.
		for i, c := range []byte(propName(p)) {
			if key[i]|0x20 != c|0x20 {
				continue next
			}
		}
		return p
	}
	return -1
}

// unquote reads a JSON string value as encoding/json does (invalid UTF-8
// becomes U+FFFD); ok is false when raw is not a string.
func unquote(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// decodeProp reads property p's value; raw is one valid JSON value, as both
// readings of a body give it.
func (in *resourceInput) decodeProp(p int, raw json.RawMessage, ms modelState) {
	name := propName(p)
	isNull := string(raw) == "null"
	switch p {
	case propAddress:
		if isNull {
			in.res.address = nil
			return
		}
		if raw[0] != '{' {
			ms.add(name, "Address must be a JSON object or null.")
			return
		}
		buf := bytes.NewBuffer(make([]byte, 0, len(raw))) // compacting only shortens
		if err := json.Compact(buf, raw); err != nil {
			ms.add(name, "Address is not valid JSON.")
			return
		}
		// Invalid UTF-8 can only be inside strings; replace it as string
		// properties do, so that responses stay UTF-8.
		address := buf.Bytes()
		if !utf8.Valid(address) {
			address = bytes.ToValidUTF8(address, []byte("\uFFFD"))
		}
		in.res.address = address
	case propTypes:
		in.res.types = nil
		if isNull {
			return
		}
		if raw[0] != '[' {
			ms.add(name, "Types must be an array of objects such as {\"Type\": \"Employee\"}, or null.")
			return
		}
		var found [8]requestorType // each type once: at most the table's five
		types := found[:0]
		// raw is valid JSON here, so nextMember finds a comma or the end.
		for i, n := skipJSONSpace(raw, 1), 0; i >= 0 && i < len(raw) && raw[i] != ']'; n++ {
			end := valueEnd(raw, i)
			t, msg := decodeRequestorType(raw[i:end])
			switch {
			case msg != "":
				ms.add(fmt.Sprintf("Types[%d].Type", n), msg)
			case !slices.Contains(types, t):
				types = append(types, t)
			}
			i, _ = nextMember(raw, end, ']')
		}
		in.res.types = append(make([]requestorType, 0, len(types)), types...)
	default:
		f := field(p)
		if isNull {
			in.res.set(f, "", false)
			return
		}
		s, ok := unquote(raw)
		if !ok {
			ms.add(name, name+" must be a string or null.")
			return
		}
		in.res.set(f, s, true)
	}
}

var typeNamesList = func() string {
	names := make([]string, len(requestorTypeTable))
	for i, t := range requestorTypeTable {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}()

// decodeRequestorType reads one Types entry; only its Type names the type.
func decodeRequestorType(raw json.RawMessage) (requestorType, string) {
	if raw[0] != '{' {
		return 0, "Each Types entry must be an object such as {\"Type\": \"Employee\"}."
	}
	// The last of the spellings of Type wins, as for the body's own
	// properties.
	var typeRaw []byte
	for i := skipJSONSpace(raw, 1); i < len(raw) && raw[i] == '"'; {
		keyEnd, escaped := scanString(raw, i)
		start := skipJSONSpace(raw, skipJSONSpace(raw, keyEnd)+1) // past the colon
		end := valueEnd(raw, start)
		if isTypeKey(raw[i:keyEnd], escaped) {
			typeRaw = raw[start:end]
		}
		if i = skipJSONSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipJSONSpace(raw, i+1)
		}
	}
	if typeRaw == nil || string(typeRaw) == "null" {
		return 0, "Type is required; it must be one of " + typeNamesList + "."
	}
	if typeRaw[0] == '"' && bytes.IndexByte(typeRaw, '\\') < 0 {
		if t, ok := lookupRequestorType(string(typeRaw[1 : len(typeRaw)-1])); ok {
			return t, "" // without allocating the name
		}
	}
	name, ok := unquote(typeRaw)
	if !ok {
		return 0, "Type must be a string, one of " + typeNamesList + "."
	}
	t, ok := lookupRequestorType(name)
	if !ok {
		return 0, fmt.Sprintf("Unknown requestor type %q; it must be one of %s.", name, typeNamesList)
	}
	return t, ""
}

// isTypeKey reports whether a key of a Types entry, quoted as sent, is
// Type in any case.
func isTypeKey(quoted []byte, escaped bool) bool {
	if !escaped {
		return bytes.EqualFold(quoted[1:len(quoted)-1], []byte("Type"))
	}
	key, _ := unquote(quoted)
	return strings.EqualFold(key, "Type")
}

// missingEditable lists the editable properties an update body lacks:
// partial updates are not supported.
func (in *resourceInput) missingEditable() []string {
	var missing []string
	for _, p := range editableProps {
		if !in.seen[p] {
			missing = append(missing, propName(p))
		}
	}
	return missing
}

// writeMode says which request a body came from; the rules differ slightly.
type writeMode int

const (
	modeCreate writeMode = iota
	modeUpdate
	modeSeed
)

// build applies the create and update rules and returns the resource to
// store, without its Id unless the mode takes one from the body. Every broken
// rule is added to ms; the result is meaningful only when ms stays empty.
func (in *resourceInput) build(mode writeMode, ms modelState) *Resource {
	r := in.res // a copy: in keeps the request as sent
	r.types = in.res.types
	if r.types == nil {
		r.types = []requestorType{}
	}
	if mode == modeUpdate {
		// Address is accepted on create only: an update keeps the stored
		// one and ignores whatever the body holds, wrong types included.
		r.address = nil
		delete(ms, propName(propAddress))
	}

	status, ok := r.value(fieldStatus)
	switch {
	case !ok && mode == modeUpdate:
		if in.seen[fieldStatus] {
			ms.add("Status", "Status must be 'Active' or 'Inactive' in an update; null is not allowed.")
		}
	case !ok:
		r.set(fieldStatus, statusActive, true)
	case strings.EqualFold(status, statusActive):
		r.set(fieldStatus, statusActive, true)
	case strings.EqualFold(status, statusInactive):
		r.set(fieldStatus, statusInactive, true)
	default:
		ms.add("Status", fmt.Sprintf("Status must be 'Active' or 'Inactive', not %q.", status))
	}

	checkLength(&r, fieldFirstName, maxFirstName, ms)
	checkLength(&r, fieldSurname, maxSurname, ms)
	checkLength(&r, fieldCompany, maxCompany, ms)

	first, surname, company := namePart(&r, fieldFirstName), namePart(&r, fieldSurname), namePart(&r, fieldCompany)
	if first == "" && surname == "" && company == "" {
		ms.add("Company", "Company is required when FirstName and Surname are both empty.")
	}
	if namePart(&r, fieldDisplayName) != "" {
		checkLength(&r, fieldDisplayName, maxDisplayName, ms)
	} else if generated := joinNonEmpty(first, surname, company); generated != "" {
		if n := utf8.RuneCountInString(generated); n > maxDisplayName {
			ms.add("DisplayName", fmt.Sprintf(
				"DisplayName was not sent, and the one generated from FirstName, Surname and Company is %d characters long; the limit is %d. Send a DisplayName of at most %d characters.",
				n, maxDisplayName, maxDisplayName))
		} else {
			r.set(fieldDisplayName, generated, true)
		}
	}
	return &r
}

func checkLength(r *Resource, f field, limit int, ms modelState) {
	if n := utf8.RuneCountInString(r.vals[f]); n > limit {
		ms.add(f.String(), fmt.Sprintf("%s is %d characters long; the limit is %d.", f, n, limit))
	}
}

// namePart is a name field as the rules see it: trimmed, "" when null.
func namePart(r *Resource, f field) string { return strings.TrimSpace(r.vals[f]) }

func joinNonEmpty(parts ...string) string {
	var b strings.Builder
	n := 0
	for _, p := range parts {
		if p != "" {
			n += len(p) + 1
		}
	}
	b.Grow(max(n-1, 0)) // one allocation at most
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

// appendResource writes r in the property order of the contract. links adds
// the _links and _embedded that update and list responses carry.
func appendResource(b []byte, r *Resource, links bool) []byte {
	b = append(b, `{"Id":`...)
	b = appendJSONString(b, r.vals[fieldID])
	for f := fieldDisplayName; f <= fieldStatus; f++ {
		b = appendStringProp(b, r, f)
	}
	b = append(b, `,"StatusId":`...)
	b = strconv.AppendInt(b, int64(r.statusID()), 10)
	b = append(b, `,"Types":[`...)
	for i, t := range r.types {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":`...)
		b = strconv.AppendInt(b, int64(t), 10)
		b = append(b, `,"Type":"`...)
		b = append(b, t.String()...)
		b = append(b, '"')
		if links {
			b = append(b, `,"_links":[],"_embedded":null`...)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	for f := fieldExternalID; f < numStringFields; f++ {
		b = appendStringProp(b, r, f)
	}
	b = append(b, `,"Address":`...)
	if r.address == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, r.address...)
	}
	if links {
		b = append(b, `,"_links":[],"_embedded":null`...)
	}
	return append(b, '}')
}

func appendStringProp(b []byte, r *Resource, f field) []byte {
	b = append(b, ',', '"')
	b = append(b, fieldNames[f]...)
	b = append(b, '"', ':')
	if r.isNull(f) {
		return append(b, "null"...)
	}
	return appendJSONString(b, r.vals[f])
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does, except that it leaves <, >
// and & alone, as the .NET service does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case utf8.RuneError:
				b = append(b, `\ufffd`...)
			default:
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
