package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Reading a resource from a checked body: the properties as sent, before
// the rules of rules.go.

// resourceInput is a create, update or seed body as sent, before the rules
// of rules.go are applied.
type resourceInput struct {
	res     Resource // string fields as sent; unset ones are null
	seen    [numProps]bool
	address []byte // Address as sent, nil when absent; the rules decide what it may be
	ms      modelState
}

// member is a known property of a body and its value exactly as sent.
type member struct {
	p   prop
	raw []byte
}

// decodeResource reads a body that must be one JSON object. A body that is
// not is a *jsonError; a property of the wrong JSON type is recorded in the
// input's ModelState with the other faults.
func decodeResource(body []byte) (*resourceInput, error) {
	s := scanner{body}
	i, err := objectBody.start(s)
	if err != nil {
		return nil, err
	}
	in, end, err := decodeResourceAt(s, i)
	if err != nil {
		return nil, err
	}
	if err := objectBody.finish(s, end); err != nil {
		return nil, err
	}
	return in, nil
}

// decodeResourceAt reads the object at s.b[i] == '{' and returns where it
// ends; errors name offsets in the whole of s.b, so that a seed's item
// points into the seed.
func decodeResourceAt(s scanner, i int) (*resourceInput, int, error) {
	body := s.b
	var buf [numProps + 1]member
	members := buf[:0]
	end, err := s.object(i, 1, func(key []byte, escaped bool, start, end int) {
		name := key[1 : len(key)-1]
		if escaped {
			name = []byte(unquote(key))
		}
		if p, ok := lookupPropBytes(name); ok {
			members = append(members, member{p: p, raw: body[start:end]})
		}
	})
	if err != nil {
		return nil, 0, err
	}
	in := &resourceInput{}
	// The string values are gathered here and copied into the resource's
	// one string at the end. A plain value is read in place: the body
	// outlives this function's use of it.
	var vals [numStringFields]string
	nulls := uint16(1<<numStringFields - 1)
	for _, m := range members {
		in.seen[m.p] = true
		if m.p < prop(numStringFields) && m.raw[0] == '"' {
			if inner := m.raw[1 : len(m.raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				vals[m.p] = unsafe.String(unsafe.SliceData(inner), len(inner))
				nulls &^= 1 << m.p
				continue
			}
		}
		in.decodeProp(m.p, m.raw, &vals, &nulls)
	}
	for f := range numStringFields {
		in.res.set(f, strings.Clone(vals[f]), nulls&(1<<f) == 0) // vals may point into the body
	}
	return in, end, nil
}

// decodeProp reads property p's checked value; the last of duplicate keys
// wins, as in ASP.NET's model binding.
func (in *resourceInput) decodeProp(p prop, raw []byte, vals *[numStringFields]string, nulls *uint16) {
	isNull := raw[0] == 'n'
	switch p {
	case propAddress:
		in.address = raw
	case propTypes:
		in.res.types = nil
		if isNull {
			return
		}
		if raw[0] != '[' {
			in.ms.add("Types", "Types must be an array of objects such as {\"Type\": \"Employee\"}, or null.")
			return
		}
		var found [8]requestorType // each type once: at most the table's five
		types := found[:0]
		n := 0
		elements(raw, func(_ []byte, start, end int) {
			t, msg := decodeRequestorType(raw[start:end])
			switch {
			case msg != "":
				in.ms.add(fmt.Sprintf("Types[%d].Type", n), msg)
			case !slices.Contains(types, t):
				types = append(types, t)
			}
			n++
		})
		in.res.types = slices.Clone(types)
	default:
		f := field(p)
		if isNull {
			vals[f] = ""
			*nulls |= 1 << f
			return
		}
		if raw[0] != '"' {
			in.ms.add(f.String(), f.String()+" must be a string or null.")
			return
		}
		vals[f] = unquote(raw)
		*nulls &^= 1 << f
	}
}

var typeNamesList = func() string {
	names := make([]string, len(requestorTypeTable))
	for i, t := range requestorTypeTable {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}()

// decodeRequestorType reads one checked Types entry; only its Type names
// the type, and the last of its spellings wins.
func decodeRequestorType(raw []byte) (requestorType, string) {
	if raw[0] != '{' {
		return 0, "Each Types entry must be an object such as {\"Type\": \"Employee\"}."
	}
	var typeRaw []byte
	elements(raw, func(key []byte, start, end int) {
		if name := key[1 : len(key)-1]; bytes.EqualFold(name, []byte("Type")) ||
			bytes.IndexByte(name, '\\') >= 0 && strings.EqualFold(unquote(key), "Type") {
			typeRaw = raw[start:end]
		}
	})
	if typeRaw == nil || typeRaw[0] == 'n' {
		return 0, "Type is required; it must be one of " + typeNamesList + "."
	}
	if typeRaw[0] != '"' {
		return 0, "Type must be a string, one of " + typeNamesList + "."
	}
	name := typeRaw[1 : len(typeRaw)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		name = []byte(unquote(typeRaw))
	}
	if t, ok := lookupRequestorType(string(name)); ok {
		return t, ""
	}
	return 0, fmt.Sprintf("Unknown requestor type %q; it must be one of %s.", unquote(typeRaw), typeNamesList)
}
