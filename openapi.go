package resourcedir

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// The OpenAPI document is built from the tables the server itself uses
// (property names, the requestor types, limits, filter operators), so that
// it cannot describe a field or a limit the code does not have.

// openAPITables gathers every code table the document is made from: the
// one place to change when those tables move.
type openAPITables struct {
	fields        []string       // filterable and sortable fields, wire spelling
	stringProps   []string       // string properties of a resource in wire order (fields minus StatusId)
	maxLen        map[string]int // character limits by property
	types         []requestorTypeInfo
	statuses      []string
	editable      []string // keys a PUT must carry
	ops           []string // binary filter operators both dialects take (plus the alias)
	kendoOps      []string // binary filter operators only -filters kendo takes
	unaryOps      []string
	maxFilter     [3]int // bytes, conditions, depth
	maxFaultDelay int    // milliseconds
	maxFaults     int
	defaultPage   int
}

type requestorTypeInfo struct {
	ID   int
	Name string
}

func currentOpenAPITables() openAPITables {
	t := openAPITables{
		maxLen: map[string]int{
			fieldNames[fieldFirstName]: maxFirstName, fieldNames[fieldSurname]: maxSurname,
			fieldNames[fieldCompany]: maxCompany, fieldNames[fieldDisplayName]: maxDisplayName,
		},
		statuses:      []string{statusActive, statusInactive},
		maxFilter:     [3]int{maxFilterBytes, maxFilterConditions, maxFilterDepth},
		maxFaultDelay: int(maxFaultDelay.Milliseconds()),
		maxFaults:     maxFaults,
		defaultPage:   defaultPageSize,
	}
	t.fields = append(t.fields, fieldNames[:]...)
	for f := range numStringFields {
		t.stringProps = append(t.stringProps, fieldNames[f])
	}
	for _, e := range requestorTypeTable {
		t.types = append(t.types, requestorTypeInfo{int(e.id), e.name})
	}
	for _, p := range editableProps {
		t.editable = append(t.editable, p.String())
	}
	for o := range numFilterOps {
		switch {
		case o.unary():
			t.unaryOps = append(t.unaryOps, opNames[o])
		case o.kendoOnly():
			t.kendoOps = append(t.kendoOps, opNames[o])
		default:
			t.ops = append(t.ops, opNames[o])
		}
	}
	t.ops = append(t.ops, "notsubstringof")
	return t
}

// handleOpenAPI serves the document for this server's limits (page size,
// body sizes), built once.
func (s *Server) handleOpenAPI(x *exchange, r *http.Request) (any, error) {
	if err := noQuery(r); err != nil { // the admin API is strict
		return nil, err
	}
	limits := openAPILimits{MaxPageSize: s.cfg.MaxPageSize, MaxBody: s.cfg.MaxBody, MaxSeedBody: s.cfg.MaxSeedBody, JournalSize: s.cfg.JournalSize, Filters: filterDialect(s.cfg.Filters)}
	body, ok := openAPIDocs.Load(limits)
	if !ok {
		b, _ := json.Marshal(openAPIDocument(limits, currentOpenAPITables())) // plain maps and slices: cannot fail
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
	// Filters is the filter dialect in force (-filters): the filter
	// parameter's description says what it accepts. "" is the default,
	// assetic.
	Filters filterDialect
}

var openAPIDocs sync.Map // openAPILimits -> []byte

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

// openAPIDocument is the OpenAPI 3.1 description of a server with these
// limits.
func openAPIDocument(cfg openAPILimits, t openAPITables) obj {
	typeNames := make([]string, len(t.types))
	typeIDs := make([]any, len(t.types))
	for i, rt := range t.types {
		typeNames[i], typeIDs[i] = rt.Name, rt.ID
	}
	// links and embedded are HAL's _links and _embedded as the real service
	// writes them: always [] and null. _embedded is declared a nullable open
	// object, not {"type": "null"}: generated TypeScript types drop a key
	// whose only value is null (openapi-fetch's Readable), and then a listed
	// resource would not be a Resource.
	links := func() obj {
		return obj{"type": "array", "maxItems": 0, "items": obj{"type": "object", "additionalProperties": true},
			"description": "HAL links: always empty here."}
	}
	embedded := func() obj {
		return obj{"type": []string{"object", "null"}, "additionalProperties": true,
			"description": "HAL embedded resources: always null here."}
	}
	// One object for the type, whichever answer carries it, so that
	// generators make one struct with enums, not a union of five constants.
	requestorType := obj{"type": "object", "additionalProperties": false,
		"description": "A requestor type of the fixed table: " + typeTable(t.types) + ". The Id always goes with its Type. " +
			"Update and list answers also carry _links ([]) and _embedded (null); create answers and the admin listing do not.",
		"required": []string{"Id", "Type"},
		"properties": obj{
			"Id":        obj{"type": "integer", "enum": typeIDs, "description": "The table's Id of Type."},
			"Type":      obj{"type": "string", "enum": typeNames},
			"_links":    links(),
			"_embedded": embedded(),
		}}
	requestorTypeInput := obj{"type": "object", "required": []string{"Type"},
		"description": "A requestor type in a request: only Type is read; unknown properties are ignored.",
		"properties": obj{
			"Type": obj{"type": "string", "enum": typeNames,
				"description": "One of " + strings.Join(typeNames, ", ") + ". Matched case-insensitively on the wire (\"team\" is Team) and stored canonical."},
			"Id": obj{"type": []string{"integer", "null"}, "description": "Ignored: the table's Id of Type is used."},
		}}
	stringSchema := func(prop string, nullable bool) obj {
		s := obj{"type": "string"}
		if nullable {
			s["type"] = []string{"string", "null"}
		}
		if n, ok := t.maxLen[prop]; ok {
			s["maxLength"] = n
			s["description"] = fmt.Sprintf("At most %d characters (Unicode characters, not bytes).", n)
		}
		return s
	}
	address := func(desc string) obj {
		return obj{"type": []string{"object", "null"}, "additionalProperties": true, "description": desc}
	}
	resource := func(hal bool) obj {
		props := obj{}
		var required []string
		for _, p := range t.stringProps {
			switch p {
			case "Id":
				props[p] = obj{"type": "string", "format": "uuid", "pattern": openAPIGUIDPattern,
					"description": "A GUID, lower case and hyphenated: a random version-4 one generated on create, or the one a seed gave (any GUID)."}
			case "Status":
				props[p] = obj{"type": "string", "enum": t.statuses}
			case "DisplayName":
				s := stringSchema(p, false)
				s["minLength"] = 1
				s["description"] = s["description"].(string) + " Generated from FirstName, Surname and Company when sent empty."
				props[p] = s
			default:
				props[p] = stringSchema(p, true)
			}
			required = append(required, p)
		}
		props["StatusId"] = obj{"type": "integer", "enum": []int{1, 2}, "description": "Derived from Status: 1 Active, 2 Inactive."}
		props["Types"] = obj{"type": "array", "items": ref("RequestorType")}
		props["Address"] = address("As given on create; never changed by an update.")
		required = append(required, "StatusId", "Types", "Address")
		desc := "A resource as create responses and the admin listing write it (no _links/_embedded)."
		if hal {
			props["_links"] = links()
			props["_embedded"] = embedded()
			required = append(required, "_links", "_embedded")
			desc = "A resource as update and list responses write it."
		}
		desc += " Properties are written in the order Id, DisplayName, FirstName, Surname, Company, Position, Status, " +
			"StatusId, Types, ExternalID, Phone, Mobile, Fax, Email, AddressComment, Address."
		return obj{"type": "object", "description": desc, "properties": props,
			"required": required, "additionalProperties": false}
	}
	// writeSchema is a create (or seed, or update) body; property names are
	// matched case-insensitively and unknown ones ignored, so it stays open.
	writeSchema := func(kind string) obj {
		props := obj{}
		for _, p := range t.stringProps {
			switch p {
			case "Id":
				switch kind {
				case "update":
					props[p] = obj{"type": "string", "format": "uuid", "description": "Must equal the id in the path (compared case-insensitively)."}
				case "seed":
					props[p] = obj{"type": []string{"string", "null"}, "format": "uuid", "description": "Optional; a unique GUID (any version, any case). Generated when absent."}
				default:
					props[p] = obj{"type": []string{"string", "null"}, "description": "Ignored: the server generates the Id."}
				}
			case "Status":
				// The enum lists the canonical spellings, which is what a
				// generated client sends; the server also takes any case. Null
				// (Active) is said in words: a null in the enum becomes a
				// "<nil>" constant in Go clients.
				s := obj{"type": "string", "enum": t.statuses,
					"description": "Active or Inactive, matched case-insensitively on the wire (\"inactive\" is Inactive) and stored canonical. Omitted (or null) means Active."}
				if kind == "update" {
					s = obj{"type": "string", "enum": t.statuses,
						"description": "Active or Inactive, matched case-insensitively on the wire and stored canonical; required and not null in an update."}
				}
				props[p] = s
			default:
				props[p] = stringSchema(p, true)
			}
		}
		props["StatusId"] = obj{"type": []string{"integer", "null"}, "description": "Ignored: derived from Status."}
		props["Types"] = obj{"type": []string{"array", "null"}, "description": "Omitted or null means none. Duplicates are collapsed, keeping the first.",
			"items": ref("RequestorTypeInput")}
		props["Address"] = address("Stored and returned as given.")
		s := obj{"type": "object", "properties": props,
			"description": "Property names are matched case-insensitively; unknown properties are ignored. " +
				"Empty or white-space-only name parts count as empty. Company is required when FirstName and Surname are both empty."}
		if kind == "update" {
			props["Address"] = address("Ignored on update: the stored Address is kept.")
			s["required"] = t.editable
			s["description"] = "A full replacement: every one of " + strings.Join(t.editable, ", ") +
				" must be present as a key (its value may be null); a body that lacks any is a 400 listing them. " + s["description"].(string)
		}
		return s
	}
	fieldList := strings.Join(t.fields, ", ")
	// jsonContent is a request body's content: the server reads text/json as
	// it reads application/json (behaviour 1), so a validating proxy must
	// find both declared.
	jsonContent := func(schema obj) obj {
		return obj{"application/json": obj{"schema": schema}, "text/json": obj{"schema": schema}}
	}
	jsonBody := func(schema obj, desc string) obj {
		return obj{"required": true, "description": desc, "content": jsonContent(schema)}
	}
	ok := func(desc string, schema obj) obj {
		return obj{"description": desc, "headers": obj{"X-Request-Id": obj{"$ref": "#/components/headers/X-Request-Id"}},
			"content": obj{"application/json": obj{"schema": schema}}}
	}
	// common are the answers any request can get: credentials, the host and
	// origin checks, the namespace limit, and a server fault; on /api/v2 also
	// what an injected fault answers.
	common := func(extra obj, api bool) obj {
		out := obj{
			"401": respRef("Unauthorized"),
			"403": respRef("Forbidden"),
			"405": respRef("MethodNotAllowed"),
			"429": respRef("NamespaceLimitReached"),
			"500": respRef("InternalError"),
			"503": respRef("ServiceUnavailable"),
		}
		if api {
			out["429"] = respRef("TooManyRequests")
			out["503"] = respRef("ServiceUnavailable")
			out["default"] = respRef("InjectedFault")
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	op := func(id, summary, desc string, tags string, responses obj) obj {
		return obj{"operationId": id, "summary": summary, "description": desc, "tags": []string{tags}, "responses": responses}
	}
	queryParam := func(name, desc string, schema obj) obj {
		return obj{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
	}
	requestID := obj{"$ref": "#/components/headers/X-Request-Id"}
	errorResp := func(desc string) obj {
		return obj{"description": desc, "headers": obj{"X-Request-Id": requestID},
			"content": obj{"application/json": obj{"schema": ref("Error")}}}
	}
	// faultResp is an answer an injected fault may give: a fault sets any
	// headers it likes, Retry-After being the one clients act on.
	faultResp := func(desc string) obj {
		r := errorResp(desc)
		r["headers"] = obj{"X-Request-Id": requestID, "Retry-After": obj{"$ref": "#/components/headers/Retry-After"}}
		return r
	}
	responses := obj{
		"Unauthorized": obj{"description": "-auth is on and the credentials are missing or wrong.",
			"headers": obj{"WWW-Authenticate": obj{"$ref": "#/components/headers/WWW-Authenticate"}, "X-Request-Id": requestID},
			"content": obj{"application/json": obj{"schema": ref("Error")}}},
		"Forbidden": errorResp("The Host is not a loopback name (see -allowed-hosts), or a state-changing request came from a foreign Origin."),
		"MethodNotAllowed": obj{"description": "Another method on this path.",
			"headers": obj{"Allow": obj{"$ref": "#/components/headers/Allow"}, "X-Request-Id": requestID},
			"content": obj{"application/json": obj{"schema": ref("Error")}}},
		"PayloadTooLarge":       errorResp("The body is larger than the limit."),
		"UnsupportedMediaType":  errorResp("A body not declared as JSON: send Content-Type: application/json."),
		"NamespaceLimitReached": errorResp("Through a /ns/{name} base URL only: creating this namespace would exceed -max-namespaces."),
		"TooManyRequests": faultResp("Either an injected fault answering 429 (with the fault's Headers, such as Retry-After, and its Body if it has one), " +
			"or, through a /ns/{name} base URL, creating this namespace would exceed -max-namespaces."),
		"ServiceUnavailable": faultResp("The request bodies being served hold -max-request-bytes already (Retry-After: 1); " +
			"on /api/v2 also an injected fault answering 503 (with the fault's Headers, such as Retry-After, and its Body if it has one), " +
			"or a request held by a fault's DelayMs when the server shuts down."),
		"InternalError": errorResp("Something unexpected; the Message gives a request id, never a stack trace."),
		"InjectedFault": faultResp("An injected fault (see /__admin/faults) answers with its own status and headers (any it sets, such as Retry-After), " +
			"in this shape unless the fault gives a Body, which is sent verbatim."),
	}

	listParams := []any{
		queryParam("requestParams.filters", filterDescription(cfg.Filters, t), obj{"type": "string", "maxLength": t.maxFilter[0]}),
		queryParam("requestParams.page", "Page number, from 1 (default 1). Plain decimal digits. A page past the last answers an empty ResourceList with the true totals.",
			obj{"type": "integer", "minimum": 1, "default": 1}),
		queryParam("requestParams.pageSize", fmt.Sprintf("Page size, from 1 (default %d); larger values are clamped to %d (the -max-page-size flag).", t.defaultPage, cfg.MaxPageSize),
			obj{"type": "integer", "minimum": 1, "default": t.defaultPage}),
		queryParam("requestParams.sorts", "`Field-asc~Field-desc…`; the direction is optional (asc by default) and field names are matched in any case. "+
			"Fields: "+fieldList+". Strings compare lower-cased by code point; null sorts first; ties keep creation order, as does no sort. An unknown field is a 400.",
			obj{"type": "string"}),
	}
	journalParams := []any{
		queryParam("method", "Only entries with this method.", obj{"type": "string"}),
		queryParam("path", "Only entries with this path: exact, or a pattern with {name} segments as in faults.", obj{"type": "string"}),
		queryParam("status", "Only entries with this status.", obj{"type": "integer", "minimum": 100, "maximum": 599}),
		queryParam("since", "Only entries with a larger Seq.", obj{"type": "integer", "minimum": 0}),
		queryParam("limit", "Keep only the newest N matching entries.", obj{"type": "integer", "minimum": 1}),
		queryParam("count", "With wait: answer as soon as at least N entries match.", obj{"type": "integer", "minimum": 1}),
		queryParam("wait", "How long to wait for count entries, a Go duration such as 5s or 500ms; at most 60s.", obj{"type": "string", "pattern": "^[0-9.]+(ns|us|µs|ms|s|m)$"}),
	}

	paths := obj{
		"/api/v2/resource": obj{
			"description": "The directory. Fixed path segments match in any case and one trailing slash is tolerated. Other methods: 405 with Allow.",
			"get": op("listResources", "List resources", "A page of resources, filtered and sorted. Query parameter names match in any case; others are ignored.", "Resources",
				common(obj{"200": ok("A page.", ref("ResourcePage")), "400": errorResp("A filter, sort, page or pageSize that is not valid; ModelState names the parameter.")}, true)),
			"post": op("createResource", "Create a resource", fmt.Sprintf("Creates one resource. The body must be declared as JSON and be at most %d bytes.", cfg.MaxBody), "Resources",
				common(obj{"200": ok("Created.", ref("CreateResponse")), "400": errorResp("The body is not a JSON object, or breaks a rule; ModelState names every offending property."),
					"413": respRef("PayloadTooLarge"), "415": respRef("UnsupportedMediaType")}, true)),
		},
		"/api/v2/resource/{id}": obj{
			"description": "One resource. Other methods: 405 with Allow.",
			"parameters": []any{obj{"name": "id", "in": "path", "required": true, "description": "The resource's GUID, in any case.", "schema": obj{"type": "string"},
				"example": openAPIExampleID}},
			"put": op("updateResource", "Replace a resource", "A full replacement: the body carries every editable property.", "Resources",
				common(obj{"200": ok("The updated resource itself, not wrapped.", ref("Resource")),
					"400": errorResp("The id is not a GUID, the body lacks an editable key, the body Id differs from the path, or a rule is broken."),
					"404": errorResp("No resource has this id."),
					"413": respRef("PayloadTooLarge"), "415": respRef("UnsupportedMediaType")}, true)),
		},
		"/__admin/health": obj{"get": op("health", "Health", "Answers without credentials too under -auth, then with Status alone.", "Admin",
			common(obj{"200": ok("Healthy.", ref("Health")), "400": errorResp("An unknown query parameter.")}, false))},
		"/__admin/resources": obj{
			"get": op("adminListResources", "Every resource", "Every resource, in creation order.", "Admin",
				common(obj{"200": ok("Every resource.", ref("ResourceSet")), "400": errorResp("An unknown query parameter.")}, false)),
			"post": obj{"operationId": "seedResources", "summary": "Seed resources", "tags": []string{"Admin"},
				"description": fmt.Sprintf("Adds an array of resources under the create rules, all or nothing; an Id may be given and must be a unique GUID. At most %d bytes (-max-seed-body).", cfg.MaxSeedBody),
				"requestBody": jsonBody(obj{"type": "array", "items": ref("SeedResource")}, "The resources, in order."),
				"responses": common(obj{"200": ok("Seeded.", ref("SeedResponse")),
					"400": errorResp("Not an array of objects, or an item breaks a rule; ModelState keys are \"[i].Property\"."), "413": respRef("PayloadTooLarge")}, false)},
			"delete": op("deleteResources", "Remove every resource", "", "Admin",
				common(obj{"200": ok("Removed; Deleted is how many there were.", counter("Deleted")), "400": errorResp("An unknown query parameter.")}, false)),
		},
		"/__admin/requests": obj{
			"get": obj{"operationId": "listRequests", "summary": "The request journal", "tags": []string{"Admin"},
				"description": fmt.Sprintf("Every /api/v2 request, newest last, up to -journal-size (%d here). Filters combine.", cfg.JournalSize),
				"parameters":  journalParams,
				"responses":   common(obj{"200": ok("Matching entries, oldest first.", ref("Journal")), "400": errorResp("An unknown or malformed query parameter.")}, false)},
			"delete": op("clearRequests", "Clear the journal", "Seq numbers are not reused afterwards.", "Admin",
				common(obj{"200": ok("Cleared; Cleared is how many entries there were.", counter("Cleared")), "400": errorResp("An unknown query parameter.")}, false)),
		},
		"/__admin/faults": obj{
			"get": op("listFaults", "Faults in force", "In the order they are tried, each with how often it Fired.", "Admin",
				common(obj{"200": ok("The faults.", ref("FaultList")), "400": errorResp("An unknown query parameter.")}, false)),
			"post": obj{"operationId": "addFaults", "summary": "Add faults", "tags": []string{"Admin"},
				"description": fmt.Sprintf("One fault or an array of them; at most %d that can still fire exist at once (spent ones are dropped, oldest first, to make room), and the bodies and headers of every namespace's faults together hold at most -max-fault-bodies bytes (64 MiB by default). ", t.maxFaults) +
					"A fault's answer carries any headers the fault sets (Headers), so the /api/v2 operations declare Retry-After on their 429, 503 and default answers.",
				"requestBody": jsonBody(obj{"oneOf": []any{ref("FaultSpec"), obj{"type": "array", "items": ref("FaultSpec")}}}, "A fault, or an array of faults."),
				"responses": common(obj{"200": ok("The faults added, with their Ids.", ref("FaultList")),
					"400": errorResp("A fault breaks a rule (ModelState names the property, prefixed [i]. in an array), too many faults, or bodies over -max-fault-bodies."), "413": respRef("PayloadTooLarge")}, false)},
			"delete": op("clearFaults", "Clear every fault", "", "Admin",
				common(obj{"200": ok("Cleared; Cleared is how many faults there were.", counter("Cleared")), "400": errorResp("An unknown query parameter.")}, false)),
		},
		"/__admin/faults/{id}": obj{
			"parameters": []any{obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "integer", "minimum": 1}, "example": 1}},
			"delete": op("removeFault", "Remove one fault", "", "Admin",
				common(obj{"200": ok("Removed; Deleted is the fault's Id.", counter("Deleted")), "400": errorResp("The id is not a number."), "404": errorResp("No fault has this id.")}, false)),
		},
		"/__admin/snapshot": obj{"post": op("writeSnapshot", "Write the snapshot now", "", "Admin",
			common(obj{"200": ok("Written.", ref("SnapshotResult")), "400": errorResp("An unknown query parameter."),
				"409": errorResp("Snapshots are off (-snapshot \"\")."),
				"500": errorResp("The snapshot could not be written; the Message gives the request id and a reason.")}, false))},
		"/__admin/reset": obj{"post": op("reset", "Reset", "Resources, journal and faults back to empty; the -seed file is loaded again when one was given.", "Admin",
			common(obj{"200": ok("Reset; Resources is how many the directory holds now (the -seed file's).", closed(obj{
				"Status": obj{"type": "string", "enum": []string{"reset"}}, "Resources": obj{"type": "integer", "minimum": 0}}, "Status", "Resources")),
				"400": errorResp("An unknown query parameter.")}, false))},
		"/__admin/namespaces": obj{
			"get": op("listNamespaces", "Namespaces", "Every namespace with its resource count, when it was created and when a client last sent it a request (the console's own requests aside).", "Admin",
				common(obj{"200": ok("The namespaces, by name.", closed(obj{
					"Namespaces": obj{"type": "array", "items": closed(obj{
						"Name":        obj{"type": "string", "pattern": namespacePattern},
						"Resources":   obj{"type": "integer", "minimum": 0},
						"Created":     obj{"type": "string", "format": "date-time"},
						"LastRequest": obj{"type": []string{"string", "null"}, "format": "date-time", "description": "null until a client's first request."}}, "Name", "Resources", "Created", "LastRequest")},
					"Total": obj{"type": "integer", "minimum": 1}}, "Namespaces", "Total")),
					"400": errorResp("An unknown query parameter.")}, false)),
			"post": obj{"operationId": "createNamespace", "summary": "Create a namespace", "tags": []string{"Admin"},
				"description": "A new, empty namespace with a fresh name, for one test to use alone; its base URL is what the test's client is pointed at.",
				"requestBody": obj{"required": false, "description": "Optional: what the name starts with.", "content": jsonContent(closed(obj{
					"Prefix": obj{"type": "string", "description": "The new name starts with it; a name is 1 to 64 of A-Z a-z 0-9 . _ -"}}))},
				"responses": common(obj{"201": ok("Created.", closed(obj{
					"Name":    obj{"type": "string", "pattern": namespacePattern},
					"BaseURL": obj{"type": "string", "description": "The namespace's base URL: /api/v2 and /__admin paths go after it."}}, "Name", "BaseURL")),
					"400": errorResp("A Prefix that cannot start a name, or an unknown property."),
					"429": errorResp("There are -max-namespaces namespaces already.")}, false)},
		},
		"/__admin/generate": obj{"post": obj{"operationId": "generateResources", "summary": "Add generated resources", "tags": []string{"Admin"},
			"description": "Adds Count realistic resources (names, companies, unique emails and external ids), the same ones for the same Seed. The console's \"Add sample data\" uses it.",
			"requestBody": jsonBody(ref("GenerateRequest"), "How many, and the seed."),
			"responses": common(obj{"200": ok("Added, as a seed answers.", ref("SeedResponse")),
				"400": errorResp("A Count out of range, or an unknown property.")}, false)}},
		"/__admin/namespaces/{name}": obj{
			"parameters": []any{obj{"name": "name", "in": "path", "required": true,
				"schema": obj{"type": "string", "pattern": namespacePattern}, "example": openAPIExampleNamespace}},
			"delete": op("deleteNamespace", "Remove a namespace", "The default namespace cannot be removed, only reset.", "Admin",
				common(obj{"200": ok("Removed; Resources is how many it held.", closed(obj{
					"Deleted": obj{"type": "string", "pattern": namespacePattern}, "Resources": obj{"type": "integer", "minimum": 0}}, "Deleted", "Resources")),
					"400": errorResp("A name that is not valid, or default."), "404": errorResp("No such namespace.")}, false)),
		},
		"/": obj{"get": obj{"operationId": "console", "summary": "The console", "tags": []string{"Admin"},
			"description": "The console: one HTML page (its script and style sheet are under /__admin/console/) for watching and driving the directory in a browser.",
			"responses":   common(obj{"200": obj{"description": "The page.", "content": obj{"text/html": obj{"schema": obj{"type": "string"}}}}}, false)}},
		consoleAssetPrefix + "{file}": obj{
			"parameters": []any{obj{"name": "file", "in": "path", "required": true, "schema": obj{"type": "string", "enum": consoleAssetNames()},
				"example": consoleAssetNames()[0]}},
			"get": obj{"operationId": "consoleAsset", "summary": "The console's script and style sheet", "tags": []string{"Admin"},
				"description": "Served with ?v=<content hash> by the page, and then cacheable for good.",
				"responses": common(obj{
					"200": obj{"description": "The file.", "content": obj{
						"text/javascript": obj{"schema": obj{"type": "string"}}, "text/css": obj{"schema": obj{"type": "string"}}}},
					"404": errorResp("No such file.")}, false)}},
		"/__admin/openapi.json": obj{"get": op("openapi", "This document", "", "Admin",
			common(obj{"200": ok("The OpenAPI document.", obj{"type": "object", "additionalProperties": true}), "400": errorResp("An unknown query parameter.")}, false))},
	}

	fault := obj{
		"Method": obj{"type": "string", "description": "HTTP method to match; empty or * matches any."},
		"Path":   obj{"type": "string", "pattern": "^(/|\\*$)", "description": "An /api/v2 path, exact or with {name} segments, matched as routes are; \"*\" matches every /api/v2 path. Required."},
		"Match": obj{"type": "object", "additionalProperties": false, "description": "Narrows which requests match; every part given must hold.",
			"properties": obj{
				"Query": obj{"type": "object", "additionalProperties": obj{"type": "string", "maxLength": maxMatchText}, "minProperties": 1, "maxProperties": maxMatchEntries,
					"description": "Query parameters that must be present with these values (names in any case)."},
				"Headers": obj{"type": "object", "additionalProperties": obj{"type": "string", "maxLength": maxMatchText}, "minProperties": 1, "maxProperties": maxMatchEntries,
					"description": "Request headers that must be present with these values (names in any case)."},
				"Body": obj{"oneOf": []any{obj{"type": "string", "minLength": 1}, obj{"type": "object", "additionalProperties": true, "minProperties": 1, "maxProperties": maxMatchEntries}},
					"description": "A string the request body must contain, or an object of JSON properties (names in any case) it must have with these values."},
			}},
		"Skip":   obj{"type": "integer", "minimum": 0, "maximum": maxSkip, "description": "Let the first Skip matching requests through untouched, then fire (Times counts from there)."},
		"Times":  obj{"type": "integer", "minimum": 0, "description": "How many matching requests it answers; 0 means until cleared."},
		"Chance": obj{"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "Probability that a matching request is answered by the fault (default 1)."},
		"Seed":   obj{"type": "integer", "description": "Seeds the Chance draws, so that a run repeats exactly."},
		"Kind":   obj{"type": "string", "enum": []string{"response", "reset", "empty", "garbage", "hang"}, "default": "response"},
		"Status": obj{"type": "integer", "minimum": 100, "maximum": 599, "description": "For Kind response: the status; without it, the real answer comes after DelayMs."},
		"Headers": obj{"type": "object", "additionalProperties": obj{"type": "string"},
			"description": "For Kind response: extra headers the answer carries, any name, such as {\"Retry-After\": \"2\"}: an answer a fault gives may carry any header."},
		"Body":    obj{"description": "Sent verbatim; without it the body is the error shape for Status."},
		"DelayMs": obj{"type": "integer", "minimum": 0, "maximum": t.maxFaultDelay},
		"After":   obj{"type": "boolean", "description": "Serve the request for real first, then replace the answer."},
	}
	faultOut := obj{"Id": obj{"type": "integer", "minimum": 1}, "Fired": obj{"type": "integer", "minimum": 0}}
	for k, v := range fault {
		faultOut[k] = v
	}

	errorSchema := obj{"type": "object", "required": []string{"Message"}, "additionalProperties": false,
		"description": "Every error, as ASP.NET Web API services answer. ModelState is present only where properties are at fault; " +
			"it holds at most 100 problems plus one \"…\" entry saying how many more there were.",
		"properties": obj{
			"Message":    obj{"type": "string"},
			"ModelState": obj{"type": "object", "additionalProperties": obj{"type": "array", "items": obj{"type": "string"}}},
		}}

	schemas := obj{
		"Error":              errorSchema,
		"RequestorType":      requestorType,
		"RequestorTypeInput": requestorTypeInput,
		"StringOrList": obj{"description": "One value, or a list when the name was repeated.",
			"oneOf": []any{obj{"type": "string"}, obj{"type": "array", "items": obj{"type": "string"}}}},
		"ResourceCreated": resource(false),
		"Resource":        resource(true),
		"CreateRequest":   writeSchema("create"),
		"UpdateRequest":   writeSchema("update"),
		"SeedResource":    writeSchema("seed"),
		"CreateResponse": obj{"type": "object", "required": []string{"Data", "Total"}, "additionalProperties": false, "properties": obj{
			"Data":  obj{"type": "array", "items": ref("ResourceCreated"), "minItems": 1, "maxItems": 1},
			"Total": obj{"type": "integer", "enum": []int{1}},
		}},
		"ResourcePage": obj{"type": "object", "additionalProperties": false,
			"required": []string{"TotalResults", "TotalPages", "Page", "ResourceList", "_links", "_embedded"},
			"properties": obj{
				"TotalResults": obj{"type": "integer", "minimum": 0},
				"TotalPages":   obj{"type": "integer", "minimum": 0, "description": "ceil(TotalResults / pageSize); 0 when nothing matches."},
				"Page":         obj{"type": "integer", "minimum": 1},
				"ResourceList": obj{"type": "array", "items": ref("Resource"), "maxItems": cfg.MaxPageSize},
				"_links":       links(),
				"_embedded":    embedded(),
			}},
		"Health": obj{"type": "object", "required": []string{"Status"}, "additionalProperties": false, "properties": obj{
			"Status":          obj{"type": "string", "enum": []string{"ok"}},
			"Resources":       obj{"type": "integer", "minimum": 0, "description": "Absent when -auth is on and no credentials were sent."},
			"DroppedLogLines": obj{"type": "integer", "minimum": 0, "description": "Present once a log line was dropped."},
			"Snapshot": obj{"type": "object", "required": []string{"LastWrite"}, "additionalProperties": false,
				"description": "Present when a snapshot file is written (not with -snapshot off).",
				"properties": obj{
					"LastWrite":           obj{"type": []string{"string", "null"}, "format": "date-time", "description": "The last successful write (the loaded file's when this run has not written yet); null when there is none."},
					"LastWriteDurationMs": obj{"type": "number", "minimum": 0, "description": "Present once this run has written: how long its last successful write took, in milliseconds. A crash loses at most what changed in -snapshot-interval plus that."},
					"LastError":           obj{"type": "string", "description": "Present while writes fail: why the last one failed (the server log has the whole error)."},
					"LastErrorTime":       obj{"type": "string", "format": "date-time", "description": "Present while writes fail: when the last one failed."},
					"FailedWrites":        obj{"type": "integer", "minimum": 1, "description": "Present while writes fail: how many failed since the last good one."},
				}},
		}},
		"ResourceSet": obj{"type": "object", "required": []string{"Data", "Total"}, "additionalProperties": false, "properties": obj{
			"Data": obj{"type": "array", "items": ref("ResourceCreated")}, "Total": obj{"type": "integer", "minimum": 0}}},
		"GenerateRequest": closed(obj{
			"Count": obj{"type": "integer", "minimum": 1, "maximum": maxGenerateCount},
			"Seed":  obj{"type": "integer", "description": "The same Seed gives the same resources."}}, "Count"),
		"SeedResponse": obj{"type": "object", "required": []string{"Total", "Ids"}, "additionalProperties": false, "properties": obj{
			"Total": obj{"type": "integer", "minimum": 0},
			"Ids":   obj{"type": "array", "items": obj{"type": "string", "format": "uuid"}, "description": "The new Ids, in the order given."}}},
		"JournalEntry": obj{"type": "object", "additionalProperties": false,
			"required": []string{"Seq", "Time", "RequestId", "Method", "Path", "Query", "Params", "Headers", "HeadersTruncated", "Body", "BodyTruncated", "Status", "DurationMs", "Fault", "Delivered", "Response", "ResponseTruncated"},
			"properties": obj{
				"Seq":       obj{"type": "integer", "minimum": 1, "description": "Only grows; never reused, even after a clear."},
				"Time":      obj{"type": "string", "format": "date-time"},
				"RequestId": obj{"type": "string"},
				"Method":    obj{"type": "string"},
				"Path":      obj{"type": "string"},
				"Query":     obj{"type": "string", "description": "The raw query string; the values of secret parameters (token, api_key, password, ...) masked as ***."},
				"Params": obj{"type": "object", "description": "The decoded query, each name to its value or to a list when repeated; secrets masked as in Query.",
					"additionalProperties": ref("StringOrList")},
				"Headers": obj{"type": "object", "description": "As received, canonical names, each to its value or to a list when repeated; secrets masked: credentials keep their scheme (Basic svc:***, Bearer ***), Cookie, X-Api-Key, X-Auth-Token and the like are ***.",
					"additionalProperties": ref("StringOrList")},
				"HeadersTruncated": obj{"type": "boolean", "description": "Headers were left out: they came to more than 8 KiB, or the request was refused for its credentials (401), of which only the request line and status are kept."},
				"Body":             obj{"description": "The body as JSON when it was JSON, else a string; null when empty."},
				"BodyTruncated":    obj{"type": "boolean", "description": "The body was cut at 64 KiB, or left out of a request refused for its credentials (401)."},
				"Status":           obj{"type": "integer", "description": "What the server did: with an After fault, the status of the real answer."},
				"DurationMs":       obj{"type": "number", "minimum": 0},
				"Fault":            obj{"type": []string{"integer", "null"}, "description": "The Id of the fault that answered."},
				"Delivered": obj{"type": "integer", "minimum": 0,
					"description": "What the client received: the status of the answer sent; 0 when the connection ended without one (reset, empty, garbage, hang)."},
				"Response": obj{"type": []string{"object", "null"}, "additionalProperties": false, "required": []string{"Headers", "Body"},
					"description": "The answer: sent, or with After and nothing sent, the one lost; null when there was none.",
					"properties": obj{
						"Headers": obj{"type": "object", "description": "The answer's headers, canonical names, each to its value or to a list when repeated; Set-Cookie and other secrets masked as ***.",
							"additionalProperties": ref("StringOrList")},
						"Body": obj{"description": "The answer's body as JSON when it was JSON, else a string; null when empty."},
					}},
				"ResponseTruncated": obj{"type": "boolean", "description": "The answer's body was cut at 16 KiB or its headers at 8 KiB, or the answer to a request refused for its credentials (401) was left out."},
			}},
		"Journal": obj{"type": "object", "required": []string{"Requests", "Count", "Journal"}, "additionalProperties": false, "properties": obj{
			"Requests": obj{"type": "array", "items": ref("JournalEntry")},
			"Count":    obj{"type": "integer", "minimum": 0},
			"Journal":  obj{"type": "string", "enum": []string{"on", "off"}},
		}},
		"FaultSpec": obj{"type": "object", "required": []string{"Path"}, "properties": fault, "additionalProperties": false,
			"description": "Property names match in any case; an unknown property is a 400."},
		"Fault": obj{"type": "object", "properties": faultOut, "additionalProperties": false,
			"required":    []string{"Id", "Method", "Path", "Times", "Chance", "Seed", "Kind", "DelayMs", "After", "Fired"},
			"description": "A fault as listed: Status, Headers and Body appear when the fault has them."},
		"FaultList": obj{"type": "object", "required": []string{"Faults"}, "properties": obj{
			"Faults": obj{"type": "array", "items": ref("Fault")}}},
		"SnapshotResult": obj{"type": "object", "required": []string{"Path", "Resources", "Bytes", "DurationMs"}, "additionalProperties": false, "properties": obj{
			"Path": obj{"type": "string"}, "Resources": obj{"type": "integer", "minimum": 0},
			"Bytes": obj{"type": "integer", "minimum": 0}, "DurationMs": obj{"type": "number", "minimum": 0}}},
	}
	// Request bodies of the API, named in the operations.
	createOp := paths["/api/v2/resource"].(obj)["post"].(obj)
	createOp["requestBody"] = jsonBody(ref("CreateRequest"), "The new resource.")
	updateOp := paths["/api/v2/resource/{id}"].(obj)["put"].(obj)
	updateOp["requestBody"] = jsonBody(ref("UpdateRequest"), "Every editable property.")
	listOp := paths["/api/v2/resource"].(obj)["get"].(obj)
	listOp["parameters"] = listParams
	// Every path but the server-wide controls is served under /ns/{name}
	// too. The second server says so, but validating proxies (Prism) and
	// contract testers (Dredd) do not expand a server variable, so each
	// such path is also listed with its namespace as a path parameter, and
	// an operationId of its own for the generators.
	nsParam := obj{"name": "namespace", "in": "path", "required": true, "example": openAPIExampleNamespace,
		"description": "The namespace: " + namespaceNameHelp + ", created on first use.",
		"schema":      obj{"type": "string", "pattern": namespacePattern}}
	for p, item := range maps.Clone(paths) {
		if slices.ContainsFunc(serverWide, func(c string) bool { return p == c || strings.HasPrefix(p, c+"/") }) {
			continue
		}
		nsItem := obj{}
		for k, v := range item.(obj) {
			switch k {
			case "description":
				nsItem[k] = v
			case "parameters":
				nsItem[k] = append([]any{nsParam}, v.([]any)...)
			default:
				nsItem[k] = namespacedOperation(v.(obj), errorResp("The namespace name is not valid."))
			}
		}
		if _, ok := nsItem["parameters"]; !ok {
			nsItem["parameters"] = []any{nsParam}
		}
		paths[strings.TrimSuffix(namespacePrefix, "/")+"/{namespace}"+p] = nsItem
	}

	// Every GET is served for HEAD too (ServeMux does it): the same status
	// and headers, no body.
	for _, item := range paths {
		get, ok := item.(obj)["get"].(obj)
		if !ok {
			continue
		}
		id := get["operationId"].(string)
		head := obj{"operationId": "head" + strings.ToUpper(id[:1]) + id[1:], "summary": get["summary"].(string) + ": headers only",
			"description": "As GET, with the same status and headers and no body.", "tags": get["tags"]}
		if p, ok := get["parameters"]; ok {
			head["parameters"] = p
		}
		answers := obj{}
		for code, r := range get["responses"].(obj) {
			r := r.(obj)
			if name, ok := r["$ref"].(string); ok {
				r = responses[strings.TrimPrefix(name, "#/components/responses/")].(obj)
			}
			bare := obj{}
			for k, v := range r {
				if k != "content" {
					bare[k] = v
				}
			}
			answers[code] = bare
		}
		head["responses"] = answers
		item.(obj)["head"] = head
	}

	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "resourcedir",
			"version": "2",
			"description": "A local test double of the Resource Directory API (/api/v2) with test-double controls under /__admin/. " +
				"Every answer is JSON in UTF-8 and carries X-Request-Id. Request bodies on /api/v2 must be declared as JSON " +
				"(application/json or text/json). " +
				fmt.Sprintf("Limits: bodies %d bytes (-max-body), seeds %d bytes (-max-seed-body), page size %d (-max-page-size), ", cfg.MaxBody, cfg.MaxSeedBody, cfg.MaxPageSize) +
				fmt.Sprintf("FirstName %d, Surname %d, Company %d, DisplayName %d characters.", t.maxLen["FirstName"], t.maxLen["Surname"], t.maxLen["Company"], t.maxLen["DisplayName"]),
		},
		"servers": []any{
			obj{"url": "/", "description": "The default namespace."},
			obj{"url": "/ns/{namespace}", "description": "An isolated namespace, created on first use; its name is 1 to 64 of A-Z a-z 0-9 . _ -",
				"variables": obj{"namespace": obj{"default": "test"}}},
		},
		"security": []any{obj{}, obj{"basic": []any{}}},
		"tags": []any{
			obj{"name": "Resources", "description": "The emulated Resource Directory API."},
			obj{"name": "Admin", "description": "Test-double controls; strict: an unknown property or query parameter is a 400."},
		},
		"paths": paths,
		"components": obj{
			"schemas": schemas,
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

// namespacedOperation is op as served under /ns/{name}: its own
// operationId, and a 400 for a namespace name that is not valid.
func namespacedOperation(op obj, badName obj) obj {
	out := maps.Clone(op)
	id := op["operationId"].(string)
	out["operationId"] = "ns" + strings.ToUpper(id[:1]) + id[1:]
	responses := maps.Clone(op["responses"].(obj))
	if r, ok := responses["400"].(obj); ok {
		r = maps.Clone(r)
		r["description"] = r["description"].(string) + " Or the namespace name is not valid."
		responses["400"] = r
	} else {
		responses["400"] = badName
	}
	out["responses"] = responses
	return out
}

// filterDescription is the requestParams.filters description for the
// dialect in force: a client generated from the document must learn from
// it what this server accepts, not what the other dialect would.
func filterDescription(dialect filterDialect, t openAPITables) string {
	fieldList := strings.Join(t.fields, ", ")
	kendoOnly := slices.Concat(t.kendoOps, t.unaryOps) // what only -filters kendo accepts
	common := "Fields (any case): " + fieldList + ".\n\n" +
		"String comparisons are case-insensitive. Positive operators never match null; each negative operator is the exact negation " +
		"of its positive twin. Quotes inside a value are doubled (`'O''Brien'`); a quoted value may hold any character.\n\n" +
		fmt.Sprintf("Limits: %d bytes of filter text, %d conditions, nesting depth %d. ", t.maxFilter[0], t.maxFilter[1], t.maxFilter[2]) +
		"A malformed filter is a 400 whose message gives the character position (counted from 1, in Unicode characters) " +
		"and what was expected there, e.g. `filter: at character 13: ...`.\n\n"
	if dialect == dialectKendo {
		return "A Kendo DataSourceRequest filter string. This server runs `-filters kendo`: the whole Kendo grammar below, " +
			"more than the real service documents (the default, `-filters assetic`, accepts only what it documents).\n\n" +
			"Grammar:\n\n" +
			"```\n" +
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
			"Operators (any case): " + strings.Join(slices.Concat(t.ops, t.kendoOps), ", ") + " (notsubstringof is doesnotcontain); unary: " +
			strings.Join(t.unaryOps, ", ") + ".\n\n" +
			"`~and~` binds tighter than `~or~`; parentheses group. `Fax~eq~null` means isnull. " + common +
			"Examples: `DisplayName~eq~'Ada Lovelace'`, `FirstName~eq~'Ada'~and~Surname~eq~'Lovelace'`, `Status='Active'`, " +
			"`(Company~contains~'eng'~or~Email~endswith~'.org')~and~Status~eq~'Active'`, `Email~isnull~undefined`."
	}
	return "A filter string in Kendo's DataSourceRequest syntax, as far as the real service's help documents it. " +
		"This server runs `-filters assetic` (the default): it accepts exactly what the real service documents, " +
		"so that a client relying on more fails here first.\n\n" +
		"Grammar:\n\n" +
		"```\n" +
		"filter    = term { \"~and~\" term }  |  term { \"~or~\" term }    (one kind of join in the whole filter)\n" +
		"term      = \"(\" filter \")\" | condition                         (parentheses change nothing)\n" +
		"condition = field \"~\" op \"~\" value\n" +
		"          | field symbol value                    (no tildes: Status='Active')\n" +
		"symbol    = \"=\" | \"<\" | \"<=\" | \">\" | \">=\"\n" +
		"value     = \"'\" { any character, '' for one ' } \"'\" | integer   (integers for StatusId)\n" +
		"```\n\n" +
		"Operators (any case): " + strings.Join(t.ops, ", ") + " (notsubstringof is doesnotcontain).\n\n" +
		"Not accepted here, each a 400 whose message names the construct and its position and says that `-filters kendo` accepts it: " +
		"the operators " + strings.Join(kendoOnly, ", ") + "; a null value; a filter that joins with both `~and~` and `~or~` " +
		"(the real service cannot combine them).\n\n" + common +
		"Examples: `DisplayName~eq~'Ada Lovelace'`, `FirstName~eq~'Ada'~and~Surname~eq~'Lovelace'`, `Status='Active'`, " +
		"`Company~contains~'eng'~or~Email~endswith~'.org'`."
}

// openAPIGUIDPattern admits every GUID the server writes: canonical, lower case,
// hyphenated, of any version (a seed may give any GUID).
const openAPIGUIDPattern = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"

// The path parameters' examples, for tools that fill paths in (Dredd
// runs no transaction for a path it cannot fill): any GUID is an id, and
// any valid name is a namespace.
const (
	openAPIExampleID        = "0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11"
	openAPIExampleNamespace = "example"
)

// namespacePattern is validNamespaceName as a pattern.
var namespacePattern = fmt.Sprintf("^[A-Za-z0-9._-]{1,%d}$", maxNamespaceName)

func typeTable(types []requestorTypeInfo) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%d %s", t.ID, t.Name)
	}
	return strings.Join(parts, ", ")
}
