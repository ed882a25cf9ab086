package resourcedir

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// The OpenAPI document is built from the tables the server itself uses
// (propTable, requestorTypeTable, the limits, the filter operators), so
// that it cannot describe a field or a limit the code does not have.

// filterOpGroups are the filter operators as the document groups them: the
// one code table the document cannot read as it is.
var filterOpGroups = func() (g struct {
	ops      []string // binary filter operators both dialects take (plus the alias)
	kendoOps []string // binary filter operators only -filters kendo takes
	unaryOps []string
}) {
	for o := range numFilterOps {
		switch {
		case o.unary():
			g.unaryOps = append(g.unaryOps, opNames[o])
		case o.kendoOnly():
			g.kendoOps = append(g.kendoOps, opNames[o])
		default:
			g.ops = append(g.ops, opNames[o])
		}
	}
	g.ops = append(g.ops, "notsubstringof")
	return g
}()

// lengthLimits are the character limits as a sentence's list, in the order
// the rules check them: buildResource checks DisplayName last (applyNames),
// as it may generate it.
func lengthLimits() string {
	var limits []string
	for f := range numStringFields {
		if n := maxLength(f); n > 0 && f != fieldDisplayName {
			limits = append(limits, fmt.Sprintf("%s %d", f, n))
		}
	}
	limits = append(limits, fmt.Sprintf("%s %d", fieldDisplayName, maxLength(fieldDisplayName)))
	return strings.Join(limits, ", ")
}

// Scopes of the document (?scope=): everything, or the emulated API alone.
const (
	scopeAll = ""
	scopeAPI = "api"
)

// handleOpenAPI serves the document for this server's limits, built once.
func (s *Server) handleOpenAPI(x *exchange, r *http.Request) (any, error) {
	limits := openAPILimitsOf(s.cfg)
	values, _ := url.ParseQuery(r.URL.RawQuery)
	ms := modelState{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		switch {
		case name != "scope":
			ms.add(name, fmt.Sprintf("Unknown parameter %q; %s %s takes only scope.", name, r.Method, r.URL.Path))
		case len(values[name]) > 1:
			ms.add(name, fmt.Sprintf("scope is given %d times; give it once.", len(values[name])))
		case values.Get(name) != scopeAPI:
			ms.add(name, fmt.Sprintf("Unknown scope %q; the one scope is %q (the emulated API alone), or no scope for the whole document.", values.Get(name), scopeAPI))
		default:
			limits.Scope = scopeAPI
		}
	}
	if !ms.empty() {
		return nil, invalidAs("The query string is invalid.", ms)
	}
	body, ok := openAPIDocs.Load(limits)
	if !ok {
		b, _ := json.Marshal(openAPIDocument(limits, s.routes, operations)) // plain maps and slices: cannot fail
		body, _ = openAPIDocs.LoadOrStore(limits, b)
	}
	x.Header().Set("Cache-Control", "no-cache")
	return jsonText(body.([]byte)), nil
}

// openAPILimits are the settings the document states; a process has one
// or a few sets, so the encoded documents are cached by them.
type openAPILimits struct {
	MaxPageSize          int
	MaxBody, MaxSeedBody int64
	JournalSize          int
	// Filters is the dialect in force (-filters), which the filter
	// parameter's description follows; "" is the default, assetic.
	Filters      filterDialect
	CreateStatus int // the create's success status (-create-status)
	// Scope is scopeAPI for the document of the emulated API alone (a
	// production client's, which must not reach a control), else scopeAll.
	Scope string
}

var openAPIDocs sync.Map // openAPILimits -> []byte

// openAPILimitsOf is what the document states of cfg.
func openAPILimitsOf(cfg Config) openAPILimits {
	return openAPILimits{MaxPageSize: cfg.MaxPageSize, MaxBody: cfg.MaxBody, MaxSeedBody: cfg.MaxSeedBody,
		JournalSize: max(cfg.JournalSize, 0), Filters: filterDialect(cfg.Filters), CreateStatus: cmp.Or(cfg.CreateStatus, http.StatusCreated)}
}

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func respRef(name string) obj { return obj{"$ref": "#/components/responses/" + name} }

// closed is an object schema with exactly these properties, all of
// required present.
func closed(props obj, required ...string) obj {
	return obj{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// counter is an answer of one count, such as {"Cleared": 3}.
func counter(name string) obj {
	return closed(obj{name: obj{"type": "integer", "minimum": 0}}, name)
}

// okAnswer is a success with a JSON body of schema. Every answer carries
// X-Request-Id, and also the headers named (of components.headers).
func okAnswer(desc string, schema obj, headers ...string) obj {
	h := obj{"X-Request-Id": obj{"$ref": "#/components/headers/X-Request-Id"}}
	for _, name := range headers {
		h[name] = obj{"$ref": "#/components/headers/" + name}
	}
	return obj{"description": desc, "headers": h, "content": obj{"application/json": obj{"schema": schema}}}
}

// errAnswer is a failure in the error shape.
func errAnswer(desc string, headers ...string) obj { return okAnswer(desc, ref("Error"), headers...) }

// jsonContent is a request body's content: the server reads text/json as
// it reads application/json (behaviour 1), so a validating proxy must
// find both declared.
func jsonContent(schema obj) obj {
	return obj{"application/json": obj{"schema": schema}, "text/json": obj{"schema": schema}}
}

func jsonBody(schema obj, desc string) obj {
	return obj{"required": true, "description": desc, "content": jsonContent(schema)}
}

func queryParam(name, desc string, schema obj) obj {
	return obj{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
}

// render is o as the document lists it on a path of the API (api) or of
// the controls, with the answers any request can get: credentials, the
// host and origin checks, the namespace limit and a server fault; on
// /api/v2 also what an injected fault answers.
func (o operation) render(api, strict bool) obj {
	tag := "Admin"
	answers := obj{
		"401": respRef("Unauthorized"),
		"403": respRef("Forbidden"),
		"405": respRef("MethodNotAllowed"),
		"429": respRef("NamespaceLimitReached"),
		"500": respRef("InternalError"),
		"503": respRef("ServiceUnavailable"),
	}
	if api {
		tag = "Resources"
		answers["429"], answers["default"] = respRef("TooManyRequests"), respRef("InjectedFault")
	}
	maps.Copy(answers, o.answers)
	if _, ok := answers["400"]; strict && !ok {
		answers["400"] = errAnswer("An unknown query parameter.")
	}
	out := obj{"operationId": o.id, "summary": o.summary, "description": o.description, "tags": []string{tag},
		"responses": answers}
	if o.params != nil {
		out["parameters"] = o.params
	}
	if o.body != nil {
		out["requestBody"] = o.body
	}
	return out
}

// openAPIDocument is the OpenAPI 3.1 description of a server with these
// limits that serves rs.
func openAPIDocument(cfg openAPILimits, rs []route, ops map[string]func(openAPILimits) operation) obj {
	if cfg.Scope == scopeAPI {
		return apiScoped(cfg, rs, ops)
	}
	responses := openAPIResponses()
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "resourcedir",
			"version": "2",
			"description": "A local test double of the Resource Directory API (/api/v2) with test-double controls under /__admin/. " +
				"Every answer is JSON in UTF-8 and carries X-Request-Id. Request bodies on /api/v2 must be declared as JSON " +
				"(application/json or text/json). " +
				fmt.Sprintf("Limits: bodies %d bytes (-max-body), seeds %d bytes (-max-seed-body), page size %d (-max-page-size), ", cfg.MaxBody, cfg.MaxSeedBody, cfg.MaxPageSize) +
				lengthLimits() + " characters.",
		},
		"servers": []any{
			obj{"url": "/", "description": "The default namespace."},
			obj{"url": strings.TrimSuffix(namespacePrefix, "/") + "/{namespace}", "description": "An isolated namespace, created on first use; its name is " + namespaceNameHelp,
				"variables": obj{"namespace": obj{"default": "test"}}},
		},
		"security": []any{obj{}, obj{"basic": []any{}}},
		"tags": []any{
			obj{"name": "Resources", "description": "The emulated Resource Directory API."},
			obj{"name": "Admin", "description": "Test-double controls; strict: an unknown property or query parameter is a 400."},
		},
		"paths": openAPIPaths(cfg, rs, ops, responses),
		"components": obj{
			"schemas": openAPISchemas(cfg),
			"securitySchemes": obj{"basic": obj{"type": "http", "scheme": "basic",
				"description": "Only when the server runs with -auth user:token."}},
			"headers": obj{
				"X-Request-Id":     obj{"description": "The request's id (the client's own X-Request-Id when it sent a short printable one).", "schema": obj{"type": "string"}},
				"Allow":            obj{"description": "The methods the path allows.", "schema": obj{"type": "string"}},
				"WWW-Authenticate": obj{"description": "Basic realm=\"resourcedir\"", "schema": obj{"type": "string"}},
				"Retry-After": obj{"description": "Only when an injected fault sets it (a fault may set any header): seconds, or an HTTP date, as the fault gives it.",
					"schema": obj{"type": "string"}},
			},
			"responses": responses,
		},
	}
}

// apiScoped is the document of the emulated API alone: its paths, without
// their /ns/{namespace} twins, the controls or their schemas, for an
// application's production client, which must not be able to call a control.
func apiScoped(cfg openAPILimits, rs []route, ops map[string]func(openAPILimits) operation) obj {
	var api []route
	for _, rt := range rs {
		if isAPIPath(rt.pattern) {
			api = append(api, rt)
		}
	}
	cfg.Scope = scopeAll
	doc := openAPIDocument(cfg, api, ops)
	paths := doc["paths"].(obj)
	for p := range paths {
		if !isAPIPath(p) {
			delete(paths, p)
		}
	}
	info := doc["info"].(obj)
	info["description"] = "The Resource Directory API (/api/v2) as resourcedir emulates it (scope=api: the test-double controls are left out). " +
		strings.TrimPrefix(info["description"].(string), "A local test double of the Resource Directory API (/api/v2) with test-double controls under /__admin/. ")
	doc["servers"] = doc["servers"].([]any)[:1]
	doc["tags"] = doc["tags"].([]any)[:1]
	pruneComponents(doc)
	return doc
}

// pruneComponents drops the components that nothing the paths use refers
// to, directly or through other components.
func pruneComponents(doc obj) {
	components := doc["components"].(obj)
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case obj:
			if r, ok := v["$ref"].(string); ok && !used[r] {
				used[r] = true
				kind, name, _ := strings.Cut(strings.TrimPrefix(r, "#/components/"), "/")
				if section, ok := components[kind].(obj); ok {
					walk(section[name])
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc["paths"])
	for kind, section := range components {
		if kind == "securitySchemes" {
			continue
		}
		for name := range section.(obj) {
			if !used["#/components/"+kind+"/"+name] {
				delete(section.(obj), name)
			}
		}
	}
}

// openAPIResponses are the answers operations name by reference. An answer
// an injected fault may give carries any headers the fault sets,
// Retry-After being the one clients act on.
func openAPIResponses() obj {
	return obj{
		"Unauthorized":          errAnswer("-auth is on and the credentials are missing or wrong.", "WWW-Authenticate"),
		"Forbidden":             errAnswer("The Host is not a loopback name (see -allowed-hosts), or a state-changing request came from a foreign Origin."),
		"MethodNotAllowed":      errAnswer("Another method on this path.", "Allow"),
		"PayloadTooLarge":       errAnswer("The body is larger than the limit."),
		"UnsupportedMediaType":  errAnswer("A body not declared as JSON: send Content-Type: application/json."),
		"NamespaceLimitReached": errAnswer("Through a /ns/{name} base URL only: creating this namespace would exceed -max-namespaces."),
		"TooManyRequests": errAnswer("Either an injected fault answering 429 (with the fault's Headers, such as Retry-After, and its Body if it has one), "+
			"or, through a /ns/{name} base URL, creating this namespace would exceed -max-namespaces.", "Retry-After"),
		"ServiceUnavailable": errAnswer("The request bodies being served hold -max-request-bytes already (Retry-After: 1); "+
			"on /api/v2 also an injected fault answering 503 (with the fault's Headers, such as Retry-After, and its Body if it has one), "+
			"or a request held by a fault's DelayMs when the server shuts down.", "Retry-After"),
		"InternalError": errAnswer("Something unexpected; the Message gives a request id, never a stack trace."),
		"InjectedFault": errAnswer("An injected fault (see /__admin/faults) answers with its own status and headers (any it sets, such as Retry-After), "+
			"in this shape unless the fault gives a Body, which is sent verbatim.", "Retry-After"),
	}
}

// openAPIPaths lists every route of rs under its path, then the paths'
// /ns/{namespace} twins, then HEAD beside every GET.
func openAPIPaths(limits openAPILimits, rs []route, ops map[string]func(openAPILimits) operation, responses obj) obj {
	paths := obj{}
	for _, rt := range rs {
		o := ops[rt.op](limits)                    // never nil: TestRoutesDocumented
		p := strings.TrimSuffix(rt.pattern, "{$}") // "/{$}" is the path "/" alone
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		item[strings.ToLower(rt.method)] = o.render(isAPIPath(p), rt.flags&strict != 0)
		if o.pathNote != "" {
			item["description"] = o.pathNote
		}
		if o.pathParams != nil {
			item["parameters"] = o.pathParams
		}
	}
	addNamespacedPaths(paths, rs)
	addHeads(paths, responses)
	return paths
}

// addNamespacedPaths lists every path but the server-wide controls under
// /ns/{namespace} too. The second server says so, but validating proxies
// (Prism) and contract testers (Dredd) do not expand a server variable, so
// each such path is also listed with its namespace as a path parameter,
// and an operationId of its own for the generators.
func addNamespacedPaths(paths obj, rs []route) {
	nsParam := obj{"name": "namespace", "in": "path", "required": true, "example": openAPIExampleNamespace,
		"description": "The namespace: " + namespaceNameHelp + ", created on first use.",
		"schema":      obj{"type": "string", "pattern": namespacePattern}}
	for p, item := range maps.Clone(paths) {
		if isServerWide(rs, p) {
			continue
		}
		nsItem := maps.Clone(item.(obj)) // the path's description as it is
		params, _ := nsItem["parameters"].([]any)
		nsItem["parameters"] = append([]any{nsParam}, params...)
		for method, v := range nsItem {
			if op, ok := v.(obj); ok {
				nsItem[method] = namespacedOperation(op)
			}
		}
		paths[strings.TrimSuffix(namespacePrefix, "/")+"/{namespace}"+p] = nsItem
	}
}

// namespacedOperation is op as served under /ns/{name}: its own
// operationId, and a 400 for a namespace name that is not valid.
func namespacedOperation(op obj) obj {
	out := maps.Clone(op)
	id := op["operationId"].(string)
	out["operationId"] = "ns" + strings.ToUpper(id[:1]) + id[1:]
	responses := maps.Clone(op["responses"].(obj))
	bad := errAnswer("The namespace name is not valid.")
	if r, ok := responses["400"].(obj); ok {
		bad = maps.Clone(r)
		bad["description"] = r["description"].(string) + " Or the namespace name is not valid."
	}
	responses["400"] = bad
	out["responses"] = responses
	return out
}

// addHeads lists HEAD beside every GET, since ServeMux serves it: the same
// status and headers, no body.
func addHeads(paths, responses obj) {
	for _, item := range paths {
		get, ok := item.(obj)["get"].(obj)
		if !ok {
			continue
		}
		id := get["operationId"].(string)
		head := maps.Clone(get) // tags and parameters; a GET reads no body
		head["operationId"] = "head" + strings.ToUpper(id[:1]) + id[1:]
		head["summary"] = get["summary"].(string) + ": headers only"
		head["description"] = "As GET, with the same status and headers and no body."
		answers := obj{}
		for code, r := range get["responses"].(obj) {
			r := r.(obj)
			if name, ok := r["$ref"].(string); ok {
				r = responses[strings.TrimPrefix(name, "#/components/responses/")].(obj)
			}
			bare := maps.Clone(r)
			delete(bare, "content")
			answers[code] = bare
		}
		head["responses"] = answers
		item.(obj)["head"] = head
	}
}

// filterDescription is the requestParams.filters description for the
// dialect in force: a client generated from the document must learn from
// it what this server accepts, not what the other dialect would.
func filterDescription(dialect filterDialect) string {
	fields := fieldList(dialect == dialectKendo)
	if only := kendoOnlyFields(); dialect != dialectKendo && only != "" {
		fields += " (" + only + " under `-filters kendo` only)"
	}
	commonEnd := "Fields (any case): " + fields + ".\n\n" +
		"String comparisons are case-insensitive. Positive operators never match null; each negative operator is the exact negation " +
		"of its positive twin. Quotes inside a value are doubled (`'O''Brien'`); a quoted value may hold any character.\n\n" +
		"May be repeated (as the vendor's client sends a list): each value is parsed on its own and they are joined with `~and~` " +
		"in the order sent; empty values are ignored; an error names the value by its position as sent, from 0 (`requestParams.filters[1]`).\n\n" +
		fmt.Sprintf("Limits, for the joined whole when repeated: %d bytes of filter text, %d conditions, nesting depth %d. ", maxFilterBytes, maxFilterConditions, maxFilterDepth) +
		"A malformed filter is a 400 whose message gives the character position (counted from 1, in Unicode characters) " +
		"and what was expected there, e.g. `filter: at character 13: ...`.\n\n" +
		"Examples: `DisplayName~eq~'Ada Lovelace'`, `FirstName~eq~'Ada'~and~Surname~eq~'Lovelace'`, `Status='Active'`, "
	if dialect == dialectKendo {
		return "A Kendo DataSourceRequest filter string. This server runs `-filters kendo`: the whole Kendo grammar below, " +
			"more than the real service documents (the default, `-filters assetic`, accepts only what it documents).\n\n" +
			"Grammar:\n\n```\n" +
			"filter    = or\n" +
			"or        = and { \"~or~\" and }\n" +
			"and       = term { \"~and~\" term }\n" +
			"term      = \"(\" or \")\" | condition\n" +
			"condition = field \"~\" op \"~\" value\n" +
			"          | field \"~\" unary [ \"~\" operand ]      (the operand is ignored, e.g. ~isnull~undefined)\n" +
			"          | field symbol value                    (no tildes: Status='Active')\n" +
			"symbol    = \"=\" | \"<\" | \"<=\" | \">\" | \">=\"\n" +
			"value     = \"'\" { any character, '' for one ' } \"'\" | integer | null\n" +
			"```\n\n" +
			"Operators (any case): " + strings.Join(slices.Concat(filterOpGroups.ops, filterOpGroups.kendoOps), ", ") + " (notsubstringof is doesnotcontain); unary: " +
			strings.Join(filterOpGroups.unaryOps, ", ") + ".\n\n" +
			"`~and~` binds tighter than `~or~`; parentheses group. `Fax~eq~null` means isnull. " + commonEnd +
			"`(Company~contains~'eng'~or~Email~endswith~'.org')~and~Status~eq~'Active'`, `Email~isnull~undefined`."
	}
	return "A filter string in Kendo's DataSourceRequest syntax, as far as the real service's help documents it. " +
		"This server runs `-filters assetic` (the default): it accepts exactly what the real service documents, " +
		"so that a client relying on more fails here first.\n\n" +
		"Grammar:\n\n```\n" +
		"filter    = term { \"~and~\" term }  |  term { \"~or~\" term }    (one kind of join in the whole filter)\n" +
		"term      = \"(\" filter \")\" | condition                         (parentheses change nothing)\n" +
		"condition = field \"~\" op \"~\" value\n" +
		"          | field symbol value                    (no tildes: Status='Active')\n" +
		"symbol    = \"=\" | \"<\" | \"<=\" | \">\" | \">=\"\n" +
		"value     = \"'\" { any character, '' for one ' } \"'\" | integer   (integers for StatusId)\n" +
		"```\n\n" +
		"Operators (any case): " + strings.Join(filterOpGroups.ops, ", ") + " (notsubstringof is doesnotcontain).\n\n" +
		"Not accepted here, each a 400 whose message names the construct and its position and says that `-filters kendo` accepts it: " +
		"the operators " + strings.Join(slices.Concat(filterOpGroups.kendoOps, filterOpGroups.unaryOps), ", ") + "; a null value; a filter that joins with both `~and~` and `~or~` " +
		"(the real service cannot combine them).\n\n" + commonEnd +
		"`Company~contains~'eng'~or~Email~endswith~'.org'`."
}

// The path parameters' examples, for tools that fill paths in (Dredd
// runs no transaction for a path it cannot fill): any GUID is an id, and
// any valid name is a namespace.
const (
	openAPIExampleID        = "0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11"
	openAPIExampleNamespace = "example"
)

// namespacePattern is validNamespaceName as a pattern.
var namespacePattern = fmt.Sprintf("^[A-Za-z0-9._-]{1,%d}$", maxNamespaceName)

// operation is a route's entry in the OpenAPI document, less what the
// document adds to every one: the answers any request can get, the tag
// (Resources on /api/v2, else Admin), HEAD beside a GET and the
// /ns/{namespace} twin.
type operation struct {
	id, summary, description string
	params                   []any // query parameters
	body                     obj   // the request body; nil when none is read
	answers                  obj   // by status
	// pathNote and pathParams belong to the path, which every method on it
	// shares: one route of the path declares them.
	pathNote   string
	pathParams []any
}
