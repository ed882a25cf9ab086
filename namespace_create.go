package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
)

// POST /__admin/namespaces: a namespace under a new name,
// for a test that wants a fresh directory. Apart from namespace.go, whose
// imports it would otherwise grow.

// namespaceSuffixLen is the hex length of the random part of a created
// namespace's name: 64 bits, so that runs repeated with -count=2, or two
// test packages sharing one server, never draw the same name.
const namespaceSuffixLen = 16

// maxNamespacePrefix leaves room in a name for "-" and the random part.
const maxNamespacePrefix = maxNamespaceName - 1 - namespaceSuffixLen

// createNamespace makes a namespace under a name nobody has used, for a
// test that wants a fresh directory without inventing a unique name. It
// starts from the seed, with its own journal and faults, as any new one.
func (s *Server) createNamespace(x *exchange, r *http.Request) (any, error) {
	body, err := adminBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	prefix, err := parseNamespaceRequest(body)
	if err != nil {
		return nil, err
	}
	// A name already taken (by chance, or by a client that chose it) is
	// drawn again rather than shared.
	for range 8 {
		name := prefix + "-" + randomHex(namespaceSuffixLen/2)
		if s.lookupNamespace(name) != nil {
			continue
		}
		if _, err := s.namespace(name); err != nil {
			return nil, err
		}
		return created{struct{ Name, BaseURL string }{name, "http://" + requestHost(r) + namespacePrefix + name}}, nil
	}
	return nil, fmt.Errorf("create a namespace: every name drawn with the prefix %q was taken", prefix)
}

// parseNamespaceRequest reads the optional {"Prefix": "..."} of POST
// /__admin/namespaces; an empty body or {} gives the prefix "ns". The
// admin API is strict: an unknown property is a 400 naming it.
func parseNamespaceRequest(body []byte) (string, error) {
	prefix := "ns"
	props, ok := adminObject(body)
	if !ok {
		return "", badRequest("The body is a JSON object such as %s, or empty.", `{"Prefix": "TestCreate"}`)
	}
	ms := modelState{}
	for _, key := range slices.Sorted(maps.Keys(props)) {
		if !strings.EqualFold(key, "Prefix") {
			ms.add(key, fmt.Sprintf("Unknown property %q; a namespace request has Prefix alone.", key))
			continue
		}
		if string(props[key]) == "null" {
			continue
		}
		var p string
		if json.Unmarshal(props[key], &p) != nil {
			ms.add(key, "Prefix must be a string.")
			continue
		}
		if len(p) > maxNamespacePrefix || !validNamespaceName(p) {
			ms.add(key, fmt.Sprintf("The Prefix %q is not 1 to %d characters of A-Z a-z 0-9 . _ - (the name adds a dash and %d more).",
				p, maxNamespacePrefix, namespaceSuffixLen))
			continue
		}
		prefix = p
	}
	if !ms.empty() {
		return "", invalid(ms)
	}
	return prefix, nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// requestHost is the host:port the client reached the server by, so that
// a BaseURL works from where it asked; an HTTP/1.0 request may carry no
// Host, and then the address it arrived on stands in.
func requestHost(r *http.Request) string {
	if r.Host != "" {
		return r.Host
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return addr.String()
	}
	return "127.0.0.1"
}
