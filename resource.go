package resourcedir

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
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
	fieldContractorOrganization
	numStringFields

	// fieldStatusID is derived from Status, so it has no slot of its own.
	fieldStatusID = numStringFields
	numFields     = numStringFields + 1
)

// propSpec is one property of a resource as the API writes it. propTable
// is the one list of them: every other list of properties (names, wire
// order, limits, indexes, the OpenAPI document, import) is derived from it.
type propSpec struct {
	prop     prop   // the string field it is, propTypes, propAddress or propStatusID
	name     string // the wire (canonical) spelling
	nullable bool   // answers may write null
	maxLen   int    // characters (not bytes); 0: no limit
	update   int    // rank among the keys a PUT must carry, from 1; 0: not one
	indexed  bool   // has an exact-match index (base.go)
	scrubbed bool   // personal data, which import -scrub replaces
	column   bool   // a column of the console's list
	form     int    // place in the console's form, from 1; 0: not in it
	// kendoOnly: filters and sorts take it under -filters kendo only (the
	// real service's help does not list it).
	kendoOnly bool
}

// propTable lists the properties in the order answers write them. A new
// string field also needs its constant in the field enum (before
// numStringFields) and a value from the generator (TestGeneratorCoversPropTable).
var propTable = []propSpec{
	{prop: prop(fieldID), name: "Id", update: 1, column: true},
	{prop: prop(fieldDisplayName), name: "DisplayName", maxLen: 100, update: 2, indexed: true, scrubbed: true, column: true, form: 1},
	{prop: prop(fieldFirstName), name: "FirstName", nullable: true, maxLen: 50, update: 3, indexed: true, scrubbed: true, column: true, form: 2},
	{prop: prop(fieldSurname), name: "Surname", nullable: true, maxLen: 50, update: 4, indexed: true, scrubbed: true, column: true, form: 3},
	{prop: prop(fieldCompany), name: "Company", nullable: true, maxLen: 100, update: 5, indexed: true, column: true, form: 4},
	{prop: prop(fieldPosition), name: "Position", nullable: true, update: 6, form: 6},
	{prop: prop(fieldStatus), name: "Status", update: 13, indexed: true, column: true, form: 7},
	{prop: propStatusID, name: "StatusId"},
	// Not in the specification: the vendor's client models it since 2026.
	{prop: prop(fieldContractorOrganization), name: "ContractorOrganization", nullable: true, form: 5, kendoOnly: true},
	{prop: propTypes, name: "Types", update: 14, column: true, form: 14},
	{prop: prop(fieldExternalID), name: "ExternalID", nullable: true, update: 12, indexed: true, column: true, form: 8},
	{prop: prop(fieldPhone), name: "Phone", nullable: true, update: 7, scrubbed: true, form: 10},
	{prop: prop(fieldMobile), name: "Mobile", nullable: true, update: 8, scrubbed: true, form: 11},
	{prop: prop(fieldFax), name: "Fax", nullable: true, update: 9, scrubbed: true, form: 12},
	{prop: prop(fieldEmail), name: "Email", nullable: true, update: 10, indexed: true, scrubbed: true, column: true, form: 9},
	{prop: prop(fieldAddressComment), name: "AddressComment", nullable: true, update: 11, scrubbed: true, form: 13},
	{prop: propAddress, name: "Address", nullable: true, scrubbed: true},
}

// specOf is propTable by prop, propStatusID included.
var specOf = func() (specs [numProps + 1]*propSpec) {
	for i := range propTable {
		specs[propTable[i].prop] = &propTable[i]
	}
	return specs
}()

// Property is one property of a resource as the API writes it: what the
// import and compare subcommands need to know of a real directory's answers.
type Property struct {
	Name     string // the wire spelling
	Personal bool   // personal data, which import -scrub replaces
	Derived  bool   // written by the server only (StatusId): a seed or a write ignores it
	Field    bool   // filters and sorts take it
	Text     bool   // a string value (every Field but StatusId)
	// KendoOnly: filters and sorts take it under -filters kendo only.
	KendoOnly bool
}

// Properties returns the resource's properties in the order answers write
// them, read from the one table that the server, its document and its
// console are built from.
func Properties() []Property {
	ps := make([]Property, len(propTable))
	for i, s := range propTable {
		_, isField := lookupField(s.name)
		ps[i] = Property{Name: s.name, Personal: s.scrubbed, Derived: s.prop == propStatusID,
			Field: isField, Text: isField && s.prop < prop(numStringFields), KendoOnly: s.kendoOnly}
	}
	return ps
}

// fieldNames are the canonical (wire) spellings, indexed by field.
var fieldNames = func() (names [numFields]string) {
	for f := range numStringFields {
		names[f] = specOf[f].name
	}
	names[fieldStatusID] = specOf[propStatusID].name
	return names
}()

func (f field) String() string { return fieldNames[f] }

// kendoOnly: filters and sorts take f under -filters kendo only.
func (f field) kendoOnly() bool { return f < numStringFields && specOf[f].kendoOnly }

// lookupField finds a field by name, ignoring case as the .NET service does.
func lookupField(name string) (field, bool) {
	f := slices.IndexFunc(fieldNames[:], func(n string) bool { return strings.EqualFold(n, name) })
	return field(f), f >= 0
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

// requestorTypeNames are the table's names, in its order.
var requestorTypeNames = func() (names []string) {
	for _, t := range requestorTypeTable {
		names = append(names, t.name)
	}
	return names
}()

// name is t's name in the table; ok is false for a type not in it.
func (t requestorType) name() (string, bool) {
	for _, e := range requestorTypeTable {
		if e.id == t {
			return e.name, true
		}
	}
	return "", false
}

func (t requestorType) String() string {
	if name, ok := t.name(); ok {
		return name
	}
	return "type" + strconv.Itoa(int(t))
}

// resource is one person or company in the directory, as plain values. It
// is never changed once it is in a store: an update stores a new resource,
// so list pages and snapshots hold resources without a lock.
type resource struct {
	vals  [numStringFields]string // by field; "" when null
	null  [numStringFields]bool   // Id and Status are never null
	types []requestorType
	// address is the Address object exactly as created (compacted JSON), nil
	// when it was null or absent.
	address []byte
}

// str returns string field f's text, "" when null.
func (r *resource) str(f field) string { return r.vals[f] }

// value returns the field's text (StatusId's in decimal) and false for null.
func (r *resource) value(f field) (string, bool) {
	if f == fieldStatusID {
		return strconv.Itoa(r.statusID()), true
	}
	return r.vals[f], !r.null[f]
}

func (r *resource) isNull(f field) bool { return f < numStringFields && r.null[f] }

func (r *resource) statusID() int { return statusIDOf(r.vals[fieldStatus]) }

// statusIDOf is the StatusId of a Status, canonical or folded.
func statusIDOf(status string) int {
	if strings.EqualFold(status, statusInactive) {
		return 2
	}
	return 1
}

// id returns the resource's GUID in its canonical lower-case form.
func (r *resource) id() string { return r.vals[fieldID] }

// set stores a field value; null when ok is false.
func (r *resource) set(f field, s string, ok bool) {
	if !ok {
		s = ""
	}
	r.vals[f], r.null[f] = s, !ok
}

// prop is a property of a request body: the string fields, which share
// their numbers with field, then Types and Address.
type prop uint8

const (
	propTypes = prop(numStringFields) + iota
	propAddress
	numProps
	// propStatusID is StatusId, which answers write but a body never sets:
	// it numbers past the props of a body.
	propStatusID = numProps
)

func (p prop) String() string { return specOf[p].name }

// editableProps are the keys a PUT must carry, in the order messages list them.
var editableProps = func() []prop {
	var ps []prop
	for _, s := range propTable {
		if s.update > 0 {
			ps = append(ps, s.prop)
		}
	}
	slices.SortFunc(ps, func(a, b prop) int { return specOf[a].update - specOf[b].update })
	return ps
}()

// maxLength is string field f's limit in characters, 0 for none.
func maxLength(f field) int { return specOf[f].maxLen }

// parseGUID reads a GUID in any case and returns its canonical form.
func parseGUID(s string) (string, bool) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return id.String(), true
}

// appendResource writes r in the property order of the contract (propTable).
// links adds the _links and _embedded that update and list responses carry.
func appendResource(b []byte, r *resource, links bool) []byte {
	b = append(b, '{')
	for i := range propTable {
		p := propTable[i].prop
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, propTable[i].name), ':')
		switch {
		case p < prop(numStringFields) && r.null[p]:
			b = append(b, "null"...)
		case p < prop(numStringFields):
			b = appendJSONString(b, r.vals[p])
		case p == propStatusID:
			b = strconv.AppendInt(b, int64(r.statusID()), 10)
		case p == propTypes:
			b = appendTypes(b, r.types, links)
		case r.address == nil: // propAddress
			b = append(b, "null"...)
		default:
			b = append(b, r.address...)
		}
	}
	if links {
		b = append(b, noLinks...)
	}
	return append(b, '}')
}

// noLinks are the empty _links and _embedded of the .NET service's answers.
const noLinks = `,"_links":[],"_embedded":null`

func appendTypes(b []byte, types []requestorType, links bool) []byte {
	b = append(b, '[')
	for i, t := range types {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":`...)
		b = strconv.AppendInt(b, int64(t), 10)
		b = append(b, `,"Type":"`...)
		b = append(b, t.String()...)
		b = append(b, '"')
		if links {
			b = append(b, noLinks...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does, except that it leaves <, >
// and & alone, as the .NET service does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		switch k := strings.IndexByte("\"\\\n\r\t\b\f", c); {
		case k >= 0: // a short escape
			b = append(b, '\\', `"\nrtbf`[k])
		case r == utf8.RuneError:
			b = append(b, `\ufffd`...)
		default:
			b = append(b, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
