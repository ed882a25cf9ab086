package resourcedir

import (
	"net/http"
	"strings"
)

// routes is every endpoint the server answers, one a line: the emulated API,
// which must do only what the real service does, then the test-double
// controls under /__admin/. Each names its OpenAPI operation (operations, in
// routedocs.go), from which the document's paths are built, and says with
// its flags where it answers and whether it reads a query. A new control is
// one line here, one handler and one operation.
var routes = []route{
	{http.MethodGet, "/api/v2/resource", (*Server).list, "listResources", 0},
	{http.MethodPost, "/api/v2/resource", (*Server).create, "createResource", 0},
	{http.MethodGet, versionPath, (*Server).serviceVersion, "getVersion", 0},
	{http.MethodPut, "/api/v2/resource/{id}", (*Server).update, "updateResource", 0},

	{http.MethodGet, "/__admin/health", (*Server).health, "health", strict},
	{http.MethodGet, "/__admin/resources", (*Server).adminResources, "adminListResources", strict},
	{http.MethodPost, "/__admin/resources", (*Server).seedResources, "seedResources", strict},
	{http.MethodPost, "/__admin/generate", (*Server).generateResources, "generateResources", strict},
	{http.MethodDelete, "/__admin/resources", (*Server).deleteResources, "deleteResources", strict},
	{http.MethodGet, "/__admin/requests", (*Server).readJournal, "listRequests", 0},
	{http.MethodDelete, "/__admin/requests", (*Server).clearJournal, "clearRequests", strict},
	{http.MethodGet, "/__admin/faults", (*Server).listFaults, "listFaults", strict},
	{http.MethodPost, "/__admin/faults", (*Server).addFaults, "addFaults", strict},
	{http.MethodDelete, "/__admin/faults", (*Server).clearFaults, "clearFaults", strict},
	{http.MethodDelete, "/__admin/faults/{id}", (*Server).deleteFault, "removeFault", strict},
	{http.MethodPost, "/__admin/snapshot", (*Server).writeSnapshot, "writeSnapshot", strict | serverWide},
	{http.MethodPost, "/__admin/reset", (*Server).reset, "reset", strict},
	{http.MethodPut, "/__admin/seed", (*Server).putSeed, "putSeed", strict | serverWide},
	{http.MethodGet, "/__admin/seed", (*Server).getSeed, "getSeed", strict | serverWide},
	{http.MethodGet, "/__admin/namespaces", (*Server).listNamespaces, "listNamespaces", strict | serverWide},
	{http.MethodPost, "/__admin/namespaces", (*Server).createNamespace, "createNamespace", strict | serverWide},
	{http.MethodDelete, "/__admin/namespaces/{name}", (*Server).deleteNamespace, "deleteNamespace", strict | serverWide},
	{http.MethodGet, "/{$}", (*Server).handleConsolePage, "console", 0},
	{http.MethodGet, consoleAssetPrefix + "{file}", (*Server).handleConsoleAsset, "consoleAsset", 0},
	{http.MethodGet, "/__admin/openapi.json", (*Server).handleOpenAPI, "openapi", 0},
}

// A route's handler answers with a value that writeValue writes (JSON text,
// a pooled buffer, a stream, or anything encoding/json encodes), or with an
// error that writeError maps to a status and the error shape.
type route struct {
	method, pattern string
	handle          func(s *Server, x *exchange, r *http.Request) (any, error)
	op              string // its entry in operations
	flags           routeFlags
}

// routeFlags say where a route answers and what it reads of a query.
type routeFlags uint8

const (
	// strict: the route reads no query parameter and refuses any with a
	// 400, as the admin API does (it is ours: a typo must not pass). The API
	// ignores unknown ones, as the real service does.
	strict routeFlags = 1 << iota
	// serverWide: a control of the whole server, answered on the unprefixed
	// path alone, not under /ns/{name}.
	serverWide
)

// isServerWide reports whether path (without a namespace prefix) belongs to
// a serverWide route of rs: its pattern up to the first wildcard, or below it.
func isServerWide(rs []route, path string) bool {
	for _, rt := range rs {
		fixed, _, _ := strings.Cut(rt.pattern, "/{")
		if rt.flags&serverWide != 0 && (path == fixed || strings.HasPrefix(path, fixed+"/")) {
			return true
		}
	}
	return false
}
