package resourcedir

import (
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP is the request pipeline, in this order:
//
//  1. request id: every answer carries X-Request-Id;
//  2. recovery, journal and log, when the answer is done (finish);
//  3. routing: /ns/{name} picks the namespace, and the rest of the path is
//     matched as ASP.NET matches routes;
//  4. local access: a web page may not reach in (Host, Origin and Fetch
//     Metadata checks);
//  5. CORS: preflights answered, headers added;
//  6. authentication, when -auth is set; the journal of an existing
//     namespace starts recording an /api/v2 request before it, so that a
//     request refused for its credentials is recorded too;
//  7. a new namespace is created (after auth, so that strangers cannot fill
//     the server with namespaces; not for an anonymous health probe; not
//     for OPTIONS, which only CORS answers; and only for a path some route
//     answers, so that a mistyped URL leaves nothing behind), and its
//     journal starts recording an /api/v2 request;
//  8. injected faults: a fault answers instead of the handler, or after
//     it (After: the handler's answer is made, journaled and not sent);
//  9. the route's handler, whose value or error one adapter writes.
//
// The console's own requests (consoleHeader) skip the journal and the
// faults: a test's faults, counts and waits must not depend on whether a
// console is open. They are activity all the same (-namespace-idle), and
// their reads create no namespace.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := s.begin(w, r)
	defer s.finish(x, r)
	r, nsName, err := s.routedRequest(x, r)
	if err != nil {
		s.writeError(x, err)
		return
	}
	// The namespace first: a page refused by checkLocal is journaled in it.
	x.ns = s.enterNamespace(x, nsName)
	if afterLookupHook != nil {
		afterLookupHook()
	}
	if !s.checkLocal(x, r) {
		return
	}
	if len(s.cfg.CORSOrigins) > 0 && s.cors(x, r) {
		return
	}
	if x.ns != nil {
		s.startJournal(x, r) // requests refused for their credentials are journaled too
	}
	if s.cfg.Auth != "" && !s.authenticate(x, r) {
		return
	}
	// The console's reads observe, and a health probe asks whether the
	// server is up: a namespace that does not exist is answered as a fresh
	// one, not created, and never refused for -max-namespaces.
	if x.ns == nil && (isHealthProbe(r) || x.observer && (r.Method == http.MethodGet || r.Method == http.MethodHead)) {
		x.ns = s.transientNamespace(nsName)
	}
	// An anonymous health probe answers Status alone, which needs no
	// namespace: without credentials nothing is created.
	if x.ns == nil && !x.anonymous {
		if !s.routed(r) {
			s.writeError(x, errNoRoute(x.path))
			return
		}
		// No route answers OPTIONS but with a 405, and a preflight that
		// CORS did not answer comes from a page it does not admit: neither
		// may leave a namespace behind.
		if r.Method == http.MethodOptions {
			s.mux.ServeHTTP(x, r)
			return
		}
		if x.ns, _, err = s.addNamespace(nsName, x); err != nil {
			s.writeError(x, err)
			return
		}
		s.startJournal(x, r)
	}
	if x.using != nil && !x.observer {
		x.client = true
		x.ns.lastRequest.Store(x.start.UnixNano()) // a clock read costs 0.1 µs here
	}
	f, err := s.takeFault(x, r)
	if err != nil {
		s.writeError(x, err)
		return
	}
	if f.ID != 0 && !f.After && s.applyFault(x, r, f) {
		return
	}
	if f.After {
		x.silence() // served for real, the write applied; the client never learns of it
	}
	s.mux.ServeHTTP(x, r)
	if f.After {
		x.unsilence()
		s.applyFault(x, r, f)
	}
}

// begin gives the request its id: the caller's when it is safe to echo.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) *exchange {
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		var buf [64]byte
		b := append(buf[:0], s.requestIDPrefix...)
		b = append(b, '-')
		id = string(strconv.AppendUint(b, s.requestSeq.Add(1), 10))
	}
	_, observer := r.Header[consoleHeader]
	x := &exchange{ResponseWriter: w, requestID: id, start: time.Now(), path: maskPath(r.URL.Path), observer: observer, srv: s, req: r}
	// The header's value lives in the exchange, which is made anyway; the
	// name is canonical already: Set would check it again.
	x.idHeader[0] = id
	w.Header()["X-Request-Id"] = x.idHeader[:]
	return x
}

// afterLookupHook, when set (by a test), runs right after a request has
// found its namespace and counts in it.
var afterLookupHook func()

// consoleHeader marks the console's own requests (any value; the console
// sends 1).
const consoleHeader = "X-Resourcedir-Console"

// routed reports whether some route answers r's path (with any method): a
// new namespace is created only for such a request.
func (s *Server) routed(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	return pattern != "/"
}

// routedRequest returns the request the routes see (r itself, or a copy
// with its path as the routes spell it, inside the namespace it names) and
// that namespace's name ("" for the default), and notes both forms of the
// path in x. A path that no route may match is a 404: an unclean one
// (ServeMux would answer it with an HTML redirect), OPTIONS * (net/http's
// own plain answer otherwise), or a server-wide control under a namespace.
// GET /ns/{name} is redirected to /ns/{name}/, where its console is.
//
// The routes see the path with its secrets masked (maskPath): a path that
// holds one is no route's, and every message that repeats it (a 400 naming
// an id or a namespace, a 404, a 405) must not repeat the secret.
func (s *Server) routedRequest(x *exchange, r *http.Request) (*http.Request, string, error) {
	p := x.path
	if !strings.HasPrefix(p, "/") || p != cleanPath(p) {
		return nil, "", errNoRoute(p)
	}
	name, rest, prefixed := splitNamespace(p)
	if prefixed {
		// An encoded slash (sl%2Fash) is part of the name the client meant,
		// not a segment break: name it rather than answer 404 for "sl".
		if rawName, _, ok := splitNamespace(r.URL.RawPath); ok {
			if decoded, err := url.PathUnescape(rawName); err == nil {
				name = maskPath(decoded)
			}
		}
		if !validNamespaceName(name) {
			return nil, "", errorf(http.StatusBadRequest, "The namespace name %q is not %s.", name, namespaceNameHelp)
		}
		if rest == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			to := p + "/"
			if r.URL.RawQuery != "" {
				to += "?" + r.URL.RawQuery
			}
			e := errorf(http.StatusPermanentRedirect, "The console of the namespace %s is at %s/.", name, p)
			e.location = to
			return nil, "", e
		}
		if rest == "" || isServerWide(s.routes, rest) {
			return nil, "", errNoRoute(p)
		}
	}
	canonical := canonicalAPIPath(rest)
	x.apiPath, x.route = rest, canonical
	if canonical == r.URL.Path && r.Body == http.NoBody {
		return r, name, nil
	}
	// A shallow copy: the journal and faults replace its Body, and after
	// the handler net/http looks at the original's Body to decide whether
	// to read the unread rest, which would wait for a body held back for a
	// 100 Continue. Without a body, nothing is replaced.
	r2 := new(*r)
	if canonical != r.URL.Path {
		r2.URL = new(*r.URL)
		r2.URL.Path, r2.URL.RawPath = canonical, ""
	}
	return r2, name, nil
}

// versionPath is the service's version, the API's one route beside the
// resource routes.
const versionPath = "/api/v2/version"

// apiSegments are the fixed segments of the API's routes.
var apiSegments = [3]string{"api", "v2", "resource"}

// canonicalAPIPath spells an /api/v2 path as the routes do: ASP.NET matches
// the fixed segments in any case and tolerates one trailing slash. Other
// paths, and the id segment, stay exactly as sent. A path spelled as the
// routes spell it comes back as it is, without an allocation.
func canonicalAPIPath(p string) string {
	const collection = "/api/v2/resource"
	trimmed := p
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		trimmed = p[:len(p)-1]
	}
	if len(trimmed) == len(versionPath) && strings.EqualFold(trimmed, versionPath) {
		if p == versionPath {
			return p
		}
		return versionPath
	}
	rest := trimmed[1:]
	for i, want := range apiSegments {
		seg, after, more := strings.Cut(rest, "/")
		if !strings.EqualFold(seg, want) || (!more && i < len(apiSegments)-1) {
			return p
		}
		if !more {
			return collection
		}
		rest = after
	}
	// rest is what follows /api/v2/resource/: one id segment, or no route.
	if rest == "" || strings.Contains(rest, "/") {
		return p
	}
	if trimmed == p && strings.HasPrefix(p, collection+"/") {
		return p
	}
	return collection + "/" + rest
}

// cleanPath is the path ServeMux would redirect p to.
func cleanPath(p string) string {
	cleaned := path.Clean(p)
	if strings.HasSuffix(p, "/") && cleaned != "/" {
		cleaned += "/"
	}
	return cleaned
}

// validRequestID accepts a caller's request id only when it is short and
// printable, so that it is safe to echo and log.
func validRequestID(id string) bool {
	// A byte past ASCII is part of a rune past '~', or of utf8.RuneError.
	return id != "" && len(id) <= 128 &&
		!strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' })
}
