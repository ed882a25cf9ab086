package resourcedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON of request bodies, read with encoding/json: a create or update
// body is one resource object (decodeResourceInto, into the struct
// resourceStruct makes from propTable), a seed an array of them
// (decodeSeed), a control's body one strict object (adminProps). A body that encoding/json refuses is a 400 without a
// ModelState that says where it broke; a property of the wrong JSON type is
// a fault in the ModelState, beside those of the rules (rules.go).

// maxJSONDepth is how deeply encoding/json lets a document nest.
const maxJSONDepth = 10000

// jsonDocument is what a whole body must be, for messages that say it is not.
type jsonDocument struct {
	open     byte   // '{' or '['
	subject  string // "The request body"
	expected string // "a JSON object"
	value    string // "JSON object", as in "data after the JSON object"
}

var (
	objectBody = jsonDocument{'{', "The request body", "a JSON object", "JSON object"}
	seedBody   = jsonDocument{'[', "The seed", "a JSON array of resources", "JSON array"}
)

// document is a body being read: a decoder over its JSON text, which
// starts at base, past a byte-order mark.
type document struct {
	jsonDocument
	body []byte // as sent: positions in messages are positions in it
	base int
	text []byte // body[base:], what dec reads
	dec  *json.Decoder
}

// reader starts reading body as a document of kind d, past a byte-order mark.
func (d jsonDocument) reader(body []byte) *document {
	base := afterBOM(body)
	doc := &document{jsonDocument: d, body: body, base: base, text: body[base:]}
	doc.dec = json.NewDecoder(bytes.NewReader(doc.text))
	return doc
}

// checkStart refuses a body that is empty or holds a value of another kind
// than d: what is not JSON at all is told as such.
func (d jsonDocument) checkStart(body []byte) error {
	i := skipJSONSpace(body, afterBOM(body))
	if i == len(body) {
		return errorf(http.StatusBadRequest, "%s is empty; expected %s.", d.subject, d.expected)
	}
	if body[i] != d.open {
		if err := d.reader(body).readValue(); err != nil {
			return err
		}
		return errorf(http.StatusBadRequest, "%s must be %s, not %s.", d.subject, d.expected, jsonKind(body[i]))
	}
	return nil
}

// readValue reads the document's first value, and says where it is not
// JSON: where a body stops being JSON shows only in decoding its value whole
// from the start.
func (d *document) readValue() error {
	err := d.dec.Decode(&ignored{})
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "%s is not valid JSON: it ends early, at byte %d.", d.subject, len(d.body))
	case errors.As(err, &se):
		// Offset counts the bytes read up to and including the one at fault.
		return errorf(http.StatusBadRequest, "%s is not valid JSON: %s (at byte %d).", d.subject, se.Error(), d.base+int(se.Offset)-1)
	}
	return err
}

// readError says where body, which json.Unmarshal refused, stops being one
// JSON value followed by white space. Only a body refused pays for reading
// it again with a Decoder, which tells where the value breaks or ends.
func (d jsonDocument) readError(body []byte) error {
	doc := d.reader(body)
	if err := doc.readValue(); err != nil {
		return err
	}
	if err := doc.finish(); err != nil {
		return err
	}
	return errorf(http.StatusBadRequest, "%s is not valid JSON.", d.subject)
}

// finish checks that only white space follows the value read.
func (d *document) finish() error {
	if rest := skipJSONSpace(d.body, d.base+int(d.dec.InputOffset())); rest != len(d.body) {
		return errorf(http.StatusBadRequest, "%s has data after the %s, at byte %d.", d.subject, d.value, rest)
	}
	return nil
}

// pieceError is readError for a value read element by element (Token,
// More, Decode), whose decoder's positions leave out the separators it
// read: on this error path only, the body is read again whole.
func (d *document) pieceError() error { return d.readError(d.body) }

// readFailed tells an error of reading JSON text (it breaks off, or is not
// JSON) from one of decoding what was read (an unknown property).
func readFailed(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// eachElement reads the array that is dec's next value one element at a
// time, so that a large array is never held whole. read gets the element's
// index, the byte it starts with and where it starts in text (what dec
// reads), and must Decode the element.
func eachElement(dec *json.Decoder, text []byte, read func(i int, first byte, start int) error) error {
	if _, err := dec.Token(); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		// More looked past the white space; the comma may still be there.
		start := skipJSONSpace(text, int(dec.InputOffset()))
		if start < len(text) && text[start] == ',' {
			start = skipJSONSpace(text, start+1)
		}
		var first byte
		if start < len(text) {
			first = text[start]
		}
		if err := read(i, first, start); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

func skipJSONSpace(b []byte, i int) int { return len(b) - len(bytes.TrimLeft(b[i:], " \t\r\n")) }

// ignored reads and drops a value: what GET /__admin/resources writes
// besides the properties, or an element that is not what it should be.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }

// stringProp is a string property as sent: absent, null, a string (raw, in
// the bytes being read, quotes and escapes included), or a value of another
// JSON type (kind: its first byte). Of duplicate keys the last string or
// null is the value, and a wrong type among them is a fault.
type stringProp struct {
	sent, valued bool
	raw          []byte // when valued
	kind         byte
}

func (p *stringProp) UnmarshalJSON(raw []byte) error {
	p.sent = true
	switch raw[0] {
	case 'n':
		p.valued, p.raw = false, nil
	case '"':
		p.valued, p.raw = true, raw
	default:
		p.kind = raw[0]
	}
	return nil
}

// rawValue is a value as sent, in the bytes being read: json.RawMessage
// without its copy, used while those bytes are (a create's body, a seed's
// Decoder buffer until its next item).
type rawValue []byte

func (v *rawValue) UnmarshalJSON(raw []byte) error {
	*v = raw
	return nil
}

// stringText is the text of the checked JSON string raw as encoding/json
// reads it (escapes decoded, invalid UTF-8 and lone surrogates as U+FFFD);
// for most strings, which hold none of them, their bytes in raw.
func stringText(raw []byte) []byte {
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	_ = json.Unmarshal(raw, &s) // cannot fail: encoding/json checked raw
	return []byte(s)
}

// resourceJSON is a seed item, its Types as sent for decodeTypes to read strictly.
var resourceJSON = resourceStruct(reflect.TypeFor[rawValue]())

// bodyJSON is a create or update body, Types included: the one pass of
// json.Unmarshal reads it all when every Types entry names a type.
var bodyJSON = resourceStruct(reflect.TypeFor[typesJSON]())

// resourceNames are the names resourceJSON reads, for a strict seed, in the
// order of its fields: each prop at its index, then those read and ignored.
var resourceNames = func() []string {
	var names []string
	for p := range numProps {
		names = append(names, p.String())
	}
	return append(names, propStatusID.String(), "_links", "_embedded")
}()

// typeJSON is a Types entry; its Type names the type.
type typeJSON struct {
	Type     stringProp
	ID       ignored `json:"Id"`
	Links    ignored `json:"_links"`
	Embedded ignored `json:"_embedded"`
}

var typeEntryNames = []string{"Id", "Type", "_links", "_embedded"}

// typesJSON is Types as the body's pass reads it: of each entry, the type
// its Type names (0 for none; an entry that is not an object is an error of
// json.Unmarshal). Either way decodeTypes reads Types again to say why.
type typesJSON []typeEntry

type typeEntry struct{ Type typeName }

// typeName is an entry's Type: the type it names, 0 for null or an unknown
// name, and wrongType once a value of another JSON type was among its keys,
// as stringProp keeps its kind. One byte: an array of half a million bad
// entries is read whole in this pass.
type typeName requestorType

const wrongType typeName = 0xff

func (n *typeName) UnmarshalJSON(raw []byte) error {
	switch {
	case *n == wrongType:
	case raw[0] == '"':
		t, _ := lookupRequestorType(string(stringText(raw)))
		*n = typeName(t)
	case raw[0] == 'n':
		*n = 0
	default:
		*n = wrongType
	}
	return nil
}

// types returns the types ts names, each once in the order given; ok is
// false when an entry names none.
func (ts typesJSON) types() (types []requestorType, ok bool) {
	for _, e := range ts {
		t := requestorType(e.Type)
		if e.Type == wrongType || t == 0 {
			return nil, false
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types, true
}

// resourceInput is a create, update or seed body as sent, before the rules.
type resourceInput struct {
	res     resource // string fields as sent; unset ones are null
	seen    [numProps]bool
	address []byte // Address as sent, nil when absent; the rules decide what it may be
	ms      modelState
	// names is FirstName, Surname and Company as sent, one space apart, in
	// the string that holds the values: often the DisplayName to generate.
	names string
}

// decodeResourceInto reads a create or update body, one JSON object, into
// in, ignoring properties it does not know as the real service does. One
// json.Unmarshal reads it; in's strings are one copy of it.
func decodeResourceInto(body []byte, in *resourceInput) error {
	if err := objectBody.checkStart(body); err != nil {
		return err
	}
	text := withoutBOM(body)
	b := newResourceFields(bodyJSON)
	err := json.Unmarshal(text, b.target())
	if err != nil && !errors.As(err, new(*json.UnmarshalTypeError)) {
		return objectBody.readError(body) // not JSON
	}
	b.fields(in)
	// Only Types may be of the wrong JSON type: each other property reads any.
	sentTypes := *propOf[typesJSON](b, propTypes)
	if types, ok := sentTypes.types(); err == nil && ok && sentTypes != nil {
		in.seen[propTypes] = true
		in.res.types = types
		return nil
	}
	// Types is absent, null, not an array, or holds an entry that names no
	// type: read as sent, to tell absent from null and to say what is wrong.
	var sent struct{ Types rawValue }
	_ = json.Unmarshal(text, &sent) // cannot fail: text is a JSON object, and a rawValue takes any value
	in.seen[propTypes] = sent.Types != nil
	in.res.types, err = decodeTypes(sent.Types, false, &in.ms)
	return err
}

// fields fills in with what b read but Types, its strings in one copy.
func (b resourceFields) fields(in *resourceInput) {
	var buf [512]byte
	text := buf[:0]
	var starts, ends [numStringFields]int
	for f := range numStringFields {
		p := propOf[stringProp](b, prop(f))
		in.seen[f] = p.sent
		in.res.null[f] = !p.valued
		if p.kind != 0 {
			in.ms.add(f.String(), f.String()+" must be a string or null.")
		}
		if f == fieldSurname || f == fieldCompany {
			text = append(text, ' ')
		}
		starts[f] = len(text)
		if p.valued {
			text = append(text, stringText(p.raw)...)
		}
		ends[f] = len(text)
	}
	all := string(text)
	for f := range numStringFields {
		in.res.vals[f] = all[starts[f]:ends[f]] // "" when null
	}
	in.names = all[starts[fieldFirstName]:ends[fieldCompany]]
	in.address = *propOf[rawValue](b, propAddress)
	in.seen[propAddress] = in.address != nil
}

// itemInput fills in with what the seed item b read, strictly: a property
// a Types entry does not have is a fault. memo keeps the Types values read
// without fault, for the next items of the seed.
func itemInput(b resourceFields, in *resourceInput, memo typesMemo) error {
	b.fields(in)
	sent := *propOf[rawValue](b, propTypes)
	in.seen[propTypes] = sent != nil
	if types, ok := memo[string(sent)]; ok {
		in.res.types = slices.Clone(types)
		return nil
	}
	problems := in.ms.problems
	types, err := decodeTypes(sent, true, &in.ms)
	if err == nil && in.ms.problems == problems && len(memo) < maxTypesMemo {
		memo[string(sent)] = types
	}
	in.res.types = slices.Clone(types)
	return err
}

// typesMemo maps a Types value as sent to its types: a seed repeats a few,
// and reading one costs more than the rest of a resource.
type typesMemo map[string][]requestorType

const maxTypesMemo = 64

// decodeTypes reads the checked Types value raw: each type once, in the
// order given; a bad entry is a fault keyed by its index. strict refuses
// properties a Types entry does not have.
func decodeTypes(raw []byte, strict bool, ms *modelState) ([]requestorType, error) {
	if raw == nil || raw[0] == 'n' {
		return nil, nil
	}
	if raw[0] != '[' {
		ms.add("Types", "Types must be an array of objects such as {\"Type\": \"Employee\"}, or null.")
		return nil, nil
	}
	var types []requestorType
	// One entry at a time: an array of a million bad entries takes the
	// memory of one.
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := eachElement(dec, raw, func(k int, first byte, start int) error {
		if first != '{' {
			ms.add(fmt.Sprintf("Types[%d].Type", k), "Each Types entry must be an object such as {\"Type\": \"Employee\"}.")
			return dec.Decode(&ignored{})
		}
		var e typeJSON
		if err := dec.Decode(&e); err != nil {
			if readFailed(err) {
				return err
			}
			prefix := fmt.Sprintf("Types[%d].", k)
			if err := unknownProps(raw[start:dec.InputOffset()], "a property of a Types entry", typeEntryNames, prefix, ms); err != nil {
				return err
			}
		}
		t, msg := e.requestorType()
		switch {
		case msg != "":
			ms.add(fmt.Sprintf("Types[%d].Type", k), msg)
		case !slices.Contains(types, t):
			types = append(types, t)
		}
		return nil
	})
	return types, err
}

func (e *typeJSON) requestorType() (requestorType, string) {
	switch {
	case e.Type.kind != 0:
		return 0, "Type must be a string, one of " + strings.Join(requestorTypeNames, ", ") + "."
	case !e.Type.valued:
		return 0, "Type is required; it must be one of " + strings.Join(requestorTypeNames, ", ") + "."
	}
	name := string(stringText(e.Type.raw))
	if t, ok := lookupRequestorType(name); ok {
		return t, ""
	}
	return 0, fmt.Sprintf("Unknown requestor type %q; it must be one of %s.", name, strings.Join(requestorTypeNames, ", "))
}

// unknownProps adds a fault, keyed prefix+key, for each key of the checked
// object obj that is none of known (in any case, as encoding/json matches
// them), with the closest known name when one is close.
func unknownProps(obj []byte, what string, known []string, prefix string, ms *modelState) error {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		if err := dec.Decode(&ignored{}); err != nil {
			return err
		}
		if slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, key) }) {
			continue
		}
		msg := fmt.Sprintf("%s is not %s; they are %s.", key, what, strings.Join(known, ", "))
		if closest, best := ClosestName(key, known); best <= max(2, len(closest)/3) {
			msg = fmt.Sprintf("%s is not %s; did you mean %s?", key, what, closest)
		}
		ms.add(prefix+key, msg)
	}
	return nil
}

// jsonKind names what a value that starts with c is, for messages.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	}
	return "a number"
}

// compactJSON returns the JSON value raw (nil when it is not JSON) without
// insignificant white space, as sent otherwise except that in strings
// invalid UTF-8 and lone surrogate escapes become U+FFFD, so that what is
// stored can always be read back by a strict JSON reader.
func compactJSON(raw []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil
	}
	out := buf.Bytes()
	if utf8.Valid(out) && !bytes.Contains(out, []byte(`\ud`)) && !bytes.Contains(out, []byte(`\uD`)) {
		return out
	}
	return cleanStrings(out)
}

// cleanStrings repairs the strings of the compact JSON b: invalid UTF-8
// becomes U+FFFD, and so does a surrogate escape that is not half of a pair.
// Outside its strings compact JSON is ASCII without escapes, which the
// loop copies as it is.
func cleanStrings(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && b[i+1] == 'u' && utf16.IsSurrogate(hex4(b[i+2:i+6])):
			if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' &&
				utf16.DecodeRune(hex4(b[i+2:i+6]), hex4(b[i+8:i+12])) != utf8.RuneError {
				out = append(out, b[i:i+12]...)
				i += 12
			} else {
				out = append(out, `\ufffd`...)
				i += 6
			}
		case c == '\\': // another escape: its hexadecimal digits, if any, are ASCII
			out = append(out, b[i:i+2]...)
			i += 2
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, r)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// hex4 reads the four hexadecimal digits of a checked \u escape.
func hex4(b []byte) rune {
	r, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(r)
}

// adminObject reads an admin request's body as one JSON object; ok is false when it is not one,
// and the map nil when the body is empty (a byte-order mark and white space aside).
func adminObject(body []byte) (props map[string]json.RawMessage, ok bool) {
	body = bytes.TrimSpace(withoutBOM(body))
	if len(body) == 0 {
		return nil, true
	}
	if json.Unmarshal(body, &props) != nil || props == nil {
		return nil, false
	}
	return props, true
}

// adminProps keys an admin request's object by the canonical spelling of
// the props it may have, matched in any case. An unknown one is a problem
// in ms naming the closest, as for a flag (prefix places it, what names the
// object: "A fault").
func adminProps(spec map[string]json.RawMessage, props []string, prefix, what string, ms *modelState) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(spec))
	for _, key := range slices.Sorted(maps.Keys(spec)) {
		i := slices.IndexFunc(props, func(p string) bool { return strings.EqualFold(p, key) })
		if i < 0 {
			closest, _ := ClosestName(key, props)
			ms.add(prefix+key, fmt.Sprintf("Unknown property %q; did you mean %s? %s has %s.", key, closest, what, strings.Join(props, ", ")))
			continue
		}
		out[props[i]] = spec[key]
	}
	return out
}

// resourceFields is a resource as encoding/json reads it: a struct made
// from propTable (resourceStruct), a field per property at the index of its
// prop, matched by name in any case, the last of duplicate keys winning, as
// ASP.NET's model binding reads them. StatusId, _links and _embedded, which
// GET /__admin/resources writes too, are read and ignored, so that its
// output is a seed as it is.
type resourceFields struct{ v reflect.Value } // the struct, addressable

func resourceStruct(types reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for p, name := range resourceNames {
		typ := reflect.TypeFor[ignored]() // past the props of a body
		switch {
		case prop(p) < prop(numStringFields):
			typ = reflect.TypeFor[stringProp]()
		case prop(p) == propTypes:
			typ = types
		case prop(p) == propAddress:
			typ = reflect.TypeFor[rawValue]()
		}
		tag := reflect.StructTag(`json:"` + name + `"`)
		fields = append(fields, reflect.StructField{Name: "X" + name, Type: typ, Tag: tag})
	}
	return reflect.StructOf(fields)
}

// newResourceFields returns an empty value of a struct resourceStruct made.
func newResourceFields(t reflect.Type) resourceFields { return resourceFields{reflect.New(t).Elem()} }

// target is what json.Unmarshal reads into.
func (b resourceFields) target() any { return b.v.Addr().Interface() }

// propOf is the field that reads property p; T is its type.
func propOf[T any](b resourceFields, p prop) *T { return b.v.Field(int(p)).Addr().Interface().(*T) }
