package main

import (
	"fmt"
	"runtime"
	"sync"
)

// Seeds: POST /__admin/resources and the -seed file, a JSON array of
// resources in the create format where an Id may be given, all or nothing.

// minSeedItemsPerPart keeps small seeds on the calling goroutine.
const minSeedItemsPerPart = 256

// decodeSeed reads a seed and applies the rules to each item (buildResource
// with modeSeed). Every fault is reported keyed "[i].Field", at most
// maxProblems of them: the memory a seed of a million bad items needs is
// that of the items being read, not of their faults.
func decodeSeed(body []byte) ([]*Resource, error) {
	s := scanner{body}
	i, err := seedBody.start(s)
	if err != nil {
		return nil, err
	}
	if first := s.space(i + 1); first < len(body) && body[first] == ']' {
		if err := seedBody.finish(s, first+1); err != nil {
			return nil, err
		}
		return []*Resource{}, nil
	}
	parts := seedParts(body, i)
	results := make([]seedPart, len(parts))
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() { results[k] = decodeSeedPart(s, parts[k]) })
	}
	wg.Wait()

	all := modelState{}
	var resources []*Resource
	for _, part := range results {
		if part.err != nil {
			return nil, part.err // the earliest part's error is the first in the body
		}
		all.merge("", &part.ms)
		if all.empty() {
			resources = append(resources, part.resources...)
		}
	}
	if err := seedBody.finish(s, results[len(results)-1].end); err != nil {
		return nil, err
	}
	if all.empty() {
		checkSeedIDs(resources, &all)
	}
	if !all.empty() {
		return nil, &validationError{Message: "The seed is invalid; nothing was seeded.", ModelState: all}
	}
	return resources, nil
}

// checkSeedIDs reports Ids given to two items.
func checkSeedIDs(resources []*Resource, ms *modelState) {
	first := map[string]int{}
	for i, r := range resources {
		if r.isNull(fieldID) {
			continue
		}
		if k, taken := first[r.ID()]; taken {
			ms.add(fmt.Sprintf("[%d].Id", i), fmt.Sprintf("Id %s is also given to item %d.", r.ID(), k))
			continue
		}
		first[r.ID()] = i
	}
}

// seedPartBounds is a run of items: from the item that starts at start, up
// to the one that starts at end (or the array's closing bracket).
type seedPartBounds struct {
	start, end int
	firstItem  int
	last       bool // the part ends the array
}

type seedPart struct {
	resources []*Resource
	ms        modelState
	err       error
	end       int // past the array's closing bracket, for the last part
}

// seedParts cuts the array that starts at body[open] into one run of items
// per CPU, of about equal size in bytes, by a quick pass over its brackets,
// up to the last cut, that keeps only the cut points. Anything it cannot
// follow (malformed JSON) leaves one part, whose careful reading says what
// is wrong.
func seedParts(body []byte, open int) []seedPartBounds {
	whole := []seedPartBounds{{start: open + 1, end: len(body), last: true}}
	workers := runtime.GOMAXPROCS(0)
	if workers == 1 || len(body) < minSeedItemsPerPart*64 {
		return whole
	}
	parts := []seedPartBounds{{start: open + 1}}
	s := scanner{body}
	i := s.space(open + 1)
	for item := 0; i < len(body) && body[i] != ']'; item++ {
		if len(parts) < workers && i >= len(parts)*len(body)/workers && item-parts[len(parts)-1].firstItem >= minSeedItemsPerPart {
			parts[len(parts)-1].end = i
			parts = append(parts, seedPartBounds{start: i, firstItem: item})
			if len(parts) == workers {
				// The last part's reading checks the rest: following it
				// here too made a serial pass over the whole seed.
				break
			}
		}
		end := skipValue(body, i)
		if end < 0 {
			return whole
		}
		if i = s.space(end); i < len(body) && body[i] == ',' {
			i = s.space(i + 1)
		} else if i >= len(body) || body[i] != ']' {
			return whole
		}
	}
	parts[len(parts)-1].end = len(body)
	parts[len(parts)-1].last = true
	return parts
}

// skipValue returns the end of the value at b[i] without checking it, or
// -1 when it does not end.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
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
				if depth++; depth > maxJSONDepth {
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
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// decodeSeedPart reads and checks the items of one part. Once an item is
// at fault nothing will be seeded, so from then on it only counts faults.
func decodeSeedPart(s scanner, bounds seedPartBounds) seedPart {
	var out seedPart
	i := s.space(bounds.start)
	for item := bounds.firstItem; ; item++ {
		if i >= len(s.b) {
			out.err = endsEarly(len(s.b))
			return out
		}
		if !bounds.last && i >= bounds.end {
			return out
		}
		var end int
		if s.b[i] == '{' {
			in, objEnd, err := decodeResourceAt(s, i)
			if err != nil {
				out.err = err
				return out
			}
			end = objEnd
			res, err := buildResource(in, modeSeed, "")
			switch ve := err.(type) {
			case nil:
				if out.ms.empty() {
					out.resources = append(out.resources, res)
				}
			case *validationError:
				out.resources = nil
				if out.ms.problems >= maxProblems {
					out.ms.problems += ve.ModelState.problems // the list is full: count only
				} else {
					out.ms.merge(fmt.Sprintf("[%d].", item), &ve.ModelState)
				}
			}
		} else {
			valueEnd, err := s.value(i, 1)
			if err != nil {
				out.err = err
				return out
			}
			end = valueEnd
			out.resources = nil
			if out.ms.problems >= maxProblems {
				out.ms.problems++
			} else {
				out.ms.add(fmt.Sprintf("[%d]", item), fmt.Sprintf("Each item must be a JSON object (a resource), not %s.", jsonKind(s.b[i])))
			}
		}
		if i = s.space(end); i >= len(s.b) {
			out.err = endsEarly(len(s.b))
			return out
		}
		switch s.b[i] {
		case ',':
			i = s.space(i + 1)
		case ']':
			out.end = i + 1
			return out
		default:
			out.err = syntaxErrorAt(i, "invalid character %s after array element", quoteChar(s.b[i]))
			return out
		}
	}
}
