package resourcedir

import (
	"encoding/gob"
	"errors"
	"fmt"
)

// Snapshot formats 2 and 3, which still load: every namespace a full copy
// of its resources, in chunks stored column by column. Format 3's header
// lists the namespaces with their counts; format 2 is one directory, read
// into "default". They load as namespaces with no base.

// v3StringFields is the number of string fields of formats 2 and 3, in the
// order of field as it was then (Id, DisplayName, ..., AddressComment).
const v3StringFields = 13

func decodeV3(dec *gob.Decoder, header snapshotHeader, payload int) ([]snapshotSpace, error) {
	// Every resource takes bytes of the payload, so a count beyond its
	// length is a lie, and must not size an allocation.
	if header.Count < 0 || header.Count > payload {
		return nil, fmt.Errorf("bad resource count %d", header.Count)
	}
	resources := make([]*resource, header.Count)
	for decoded := 0; decoded < header.Count; {
		var chunk snapshotChunk
		err := dec.Decode(&chunk)
		if err == nil && (chunk.Count <= 0 || chunk.Count > header.Count-decoded) {
			err = fmt.Errorf("a chunk of %d resources", chunk.Count)
		}
		if err == nil {
			err = chunk.resources(resources[decoded : decoded+chunk.Count])
		}
		if err != nil {
			return nil, fmt.Errorf("decode resources after %d of %d: %w", decoded, header.Count, err)
		}
		decoded += chunk.Count
	}
	spaces, err := splitSpaces(header, resources)
	for i := range spaces {
		spaces[i].reseed = len(spaces[i].Own) == 0
	}
	return spaces, err
}

// splitSpaces cuts the resources into the namespaces the header lists; a
// file from before namespaces is the default namespace.
func splitSpaces(header snapshotHeader, resources []*resource) ([]snapshotSpace, error) {
	if header.Namespaces == nil {
		return []snapshotSpace{{Name: defaultNamespace, Own: resources}}, nil
	}
	spaces := make([]snapshotSpace, len(header.Namespaces))
	seen := map[string]bool{}
	rest := resources
	for i, ns := range header.Namespaces {
		if !validNamespaceName(ns.Name) || seen[ns.Name] || ns.Count < 0 || ns.Count > len(rest) {
			return nil, fmt.Errorf("bad namespace %q of %d resources in the header", ns.Name, ns.Count)
		}
		seen[ns.Name] = true
		spaces[i] = snapshotSpace{Name: ns.Name, Own: rest[:ns.Count:ns.Count]}
		rest = rest[ns.Count:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("the namespaces hold %d resources fewer than the header's count", len(rest))
	}
	return spaces, nil
}

// snapshotChunk holds up to snapshotChunkSize resources, column by column,
// so that gob handles a few long slices rather than a value per string.
// gob drops zero values, so null and "" are told apart by Nulls.
type snapshotChunk struct {
	Count int
	// Text is every string field of every resource, back to back; Lens has
	// numStringFields byte lengths per resource (0 for null).
	Text []byte
	Lens []uint32
	// Nulls has a bit per string field per resource, set for null.
	Nulls []uint16
	// NTypes is each resource's number of Types, Types all of them in order.
	NTypes []uint8
	Types  []uint8
	// AddressLens is each resource's Address length, -1 for null; Address
	// is all of them back to back.
	AddressLens []int32
	Address     []byte
}

// resources rebuilds the chunk's resources into dst, which must have room
// for c.Count. The chunk must be freshly decoded and not reused: Addresses
// and Types point into its slices.
func (c *snapshotChunk) resources(dst []*resource) error {
	n := c.Count
	if n < 0 || n > len(dst) || len(c.Lens) != n*v3StringFields || len(c.Nulls) != n ||
		len(c.NTypes) != n || len(c.AddressLens) != n {
		return fmt.Errorf("a chunk of %d resources has columns of the wrong length", n)
	}
	types := make([]requestorType, len(c.Types))
	for i, t := range c.Types {
		types[i] = requestorType(t)
		if !knownRequestorType(types[i]) {
			return fmt.Errorf("unknown requestor type id %d", t)
		}
	}
	text, typesAt, addressAt := c.Text, 0, 0
	for i := range n {
		r := &resource{}
		lens := c.Lens[i*v3StringFields : (i+1)*v3StringFields]
		for f, l := range lens {
			if l > uint32(len(text)) {
				return errors.New("a chunk's text is shorter than its lengths say")
			}
			null := c.Nulls[i]&(1<<f) != 0
			if null && l != 0 {
				return errors.New("a null field has a value")
			}
			r.set(field(f), string(text[:l]), !null)
			text = text[l:]
		}

		nt := int(c.NTypes[i])
		if nt > len(types)-typesAt {
			return errors.New("a chunk has fewer Types than its counts say")
		}
		r.types = types[typesAt : typesAt+nt : typesAt+nt]
		typesAt += nt
		if l := c.AddressLens[i]; l >= 0 {
			if int(l) > len(c.Address)-addressAt {
				return errors.New("a chunk has less Address text than its lengths say")
			}
			r.address = c.Address[addressAt : addressAt+int(l) : addressAt+int(l)]
			addressAt += int(l)
		} else if l != -1 {
			return fmt.Errorf("bad Address length %d", l)
		}
		if err := checkLoaded(r); err != nil {
			return err
		}
		dst[i] = r
	}
	if len(text) != 0 || typesAt != len(types) || addressAt != len(c.Address) {
		return errors.New("a chunk holds more data than its resources")
	}
	return nil
}
