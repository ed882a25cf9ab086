package resourcedir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// decodeSeed reads a seed (POST /__admin/resources, the -seed file): a JSON
// array of resources in the create format where an Id may be given, all or
// nothing, each item by the rules (buildResource with modeSeed). Strict
// where the API is lenient, an unknown property is a fault, so that a
// misspelt name is not silently dropped. Faults are keyed "[i].Field", at
// most maxProblems; items are read one at a time, so that a million bad
// ones take the memory of one.
func decodeSeed(body []byte) ([]*resource, error) {
	if err := seedBody.checkStart(body); err != nil {
		return nil, err
	}
	doc := seedBody.reader(body)
	dec := doc.dec
	dec.DisallowUnknownFields()
	resources := []*resource{}
	all := modelState{}
	b := newResourceFields(resourceJSON) // one for all items
	memo := typesMemo{}
	err := eachElement(dec, doc.text, func(i int, first byte, start int) error {
		if first != '{' {
			all.add(fmt.Sprintf("[%d]", i), fmt.Sprintf("Each item must be a JSON object (a resource), not %s.", jsonKind(first)))
			resources = nil
			return dec.Decode(&ignored{})
		}
		b.v.SetZero() // what b read for the last item is in its input
		decodeErr := dec.Decode(b.target())
		if readFailed(decodeErr) {
			return decodeErr
		}
		raw := doc.text[start:dec.InputOffset()]
		if nestsTooDeep(raw) {
			return doc.pieceError()
		}
		in := &resourceInput{}
		if decodeErr != nil {
			if err := unknownProps(raw, "a resource property", resourceNames, "", &in.ms); err != nil {
				return err
			}
		}
		if err := itemInput(b, in, memo); err != nil {
			return err
		}
		res, err := buildResource(in, modeSeed, "")
		var ve *apiError
		switch {
		case errors.As(err, &ve):
			all.merge(fmt.Sprintf("[%d].", i), &ve.ModelState)
			resources = nil
		case err != nil:
			return err
		case all.empty():
			resources = append(resources, res)
		}
		return nil
	})
	if readFailed(err) {
		err = doc.pieceError()
	}
	if err != nil {
		return nil, err
	}
	if err := doc.finish(); err != nil {
		return nil, err
	}
	if all.empty() {
		checkSeedIDs(resources, &all)
	}
	if !all.empty() {
		return nil, invalidAs("The seed is invalid; nothing was seeded.", all)
	}
	return resources, nil
}

// nestsTooDeep reports whether the item raw nests as deeply as
// encoding/json allows: alone it is JSON, but not inside the seed's array,
// and encoding/json refuses the seed whole. Counting brackets rules out
// nearly every item at once.
func nestsTooDeep(raw []byte) bool {
	if bytes.Count(raw, []byte("["))+bytes.Count(raw, []byte("{")) < maxJSONDepth {
		return false
	}
	wrapped := append(append([]byte{'['}, raw...), ']')
	return !json.Valid(wrapped)
}

// checkSeedIDs reports Ids given to two items.
func checkSeedIDs(resources []*resource, ms *modelState) {
	first := map[string]int{}
	for i, r := range resources {
		k, taken := first[r.id()]
		switch {
		case r.isNull(fieldID):
		case taken:
			ms.add(fmt.Sprintf("[%d].Id", i), fmt.Sprintf("Id %s is also given to item %d.", r.id(), k))
		default:
			first[r.id()] = i
		}
	}
}

// writeSeedFile writes n items as a seed file (generate, import), one a line so that a diff reads well.
func writeSeedFile(w io.Writer, n int, item func(i int) ([]byte, error)) error {
	return streamList("[", n, func(b []byte, i int) ([]byte, error) {
		text, err := item(i)
		return append(append(b, '\n'), text...), err
	}, "\n]\n")(w)
}

// marshalText is json.Marshal without HTML escaping: & stays &, as a seed file's names have it.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// readSeedFile reads at most limit bytes of the seed file, a larger one
// being an error; pipes and devices too (-seed <(generate)), abandoned when
// ctx ends so that a FIFO no one writes to does not stall SIGTERM at boot.
func readSeedFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	tooLarge := fmt.Errorf("seed %s: larger than the -max-seed-body limit of %d bytes", path, limit)
	info, err := os.Stat(path)
	switch {
	case err == nil && info.Mode().IsRegular() && info.Size() > limit:
		return nil, tooLarge
	case err != nil || info.Mode().IsRegular():
		// A regular file does not block: read it, or say why not.
		ctx = context.WithoutCancel(ctx)
	}
	var body []byte
	read := make(chan struct{})
	go func() {
		body, err = readAtMost(path, limit+1) // left unread when ctx ends first
		close(read)
	}()
	select {
	case <-read:
	case <-ctx.Done():
		return nil, fmt.Errorf("seed %s: stopped before the file could be read: %w", path, ctx.Err())
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("seed %s: %w", path, err)
	case int64(len(body)) > limit:
		return nil, tooLarge
	}
	return body, nil
}

// readAtMost reads the first n bytes of the file at path, or all of a shorter one.
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
