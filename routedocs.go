package resourcedir

// The OpenAPI operations of the routes (routes.go), by operation id: what
// the document says of each, some of it computed from the server's limits.

import (
	"fmt"
	"net/http"
	"strconv"
)

// operations documents every route, keyed by the operation id its line in
// routes names (TestRoutesAndOperations ties the two).
var operations = map[string]func(openAPILimits) operation{
	"listResources": func(l openAPILimits) operation {
		return operation{id: "listResources", summary: "List resources",
			description: "A page of resources, filtered and sorted. Query parameter names match in any case; others are ignored.",
			pathNote:    "The directory. Fixed path segments match in any case and one trailing slash is tolerated. Other methods: 405 with Allow.",
			params: []any{
				queryParam(paramFilters, filterDescription(l.Filters), obj{"type": "string", "maxLength": maxFilterBytes}),
				queryParam(paramPage, "Page number, from 1 (default 1). Plain decimal digits. A page past the last answers an empty ResourceList with the true totals. Sent twice, a 400.",
					obj{"type": "integer", "minimum": 1, "default": 1}),
				queryParam(paramPageSize, fmt.Sprintf("Page size, from 1 (default %d); larger values are clamped to %d (the -max-page-size flag). Sent twice, a 400.", defaultPageSize, l.MaxPageSize),
					obj{"type": "integer", "minimum": 1, "default": defaultPageSize}),
				queryParam(paramSorts, "`Field-asc~Field-desc…`; the direction is optional (asc by default) and field names are matched in any case. "+
					"Fields: "+fieldList(true)+" ("+kendoOnlyFields()+" under `-filters kendo` only). Strings compare lower-cased by code point; null sorts first; ties keep creation order, as does no sort. An unknown field is a 400. "+
					"May be repeated (as the vendor's client sends a list): the sorts apply in the order sent.",
					obj{"type": "string"}),
			},
			answers: obj{"200": okAnswer("A page.", ref("ResourcePage")),
				"400": errAnswer("A filter, sort, page or pageSize that is not valid; ModelState names the parameter.")}}
	},
	"createResource": func(l openAPILimits) operation {
		return operation{id: "createResource", summary: "Create a resource",
			description: fmt.Sprintf("Creates one resource. The body must be declared as JSON and be at most %d bytes.", l.MaxBody),
			body:        jsonBody(ref("CreateRequest"), "The new resource."),
			answers: obj{strconv.Itoa(l.CreateStatus): okAnswer(createdNote(l.CreateStatus), ref("CreateResponse")),
				"400": errAnswer("The body is not a JSON object, or breaks a rule; ModelState names every offending property."),
				"413": respRef("PayloadTooLarge"), "415": respRef("UnsupportedMediaType")}}
	},
	"getVersion": fixed(operation{
		id: "getVersion", summary: "The service's version",
		description: "A .NET System.Version: the version of the service (-service-version here). The vendor's client asks for it first.",
		pathNote:    "The service's version. Fixed path segments match in any case and one trailing slash is tolerated. Other methods: 405 with Allow.",
		answers:     obj{"200": okAnswer("The version.", ref("ServiceVersion"))}}),
	"updateResource": fixed(operation{
		id: "updateResource", summary: "Replace a resource",
		description: "A full replacement: the body carries every editable property.",
		pathNote:    "One resource. Other methods: 405 with Allow.",
		pathParams: []any{obj{"name": "id", "in": "path", "required": true, "description": "The resource's GUID, in any case.",
			"schema": obj{"type": "string"}, "example": openAPIExampleID}},
		body: jsonBody(ref("UpdateRequest"), "Every editable property."),
		answers: obj{"200": okAnswer("The updated resource itself, not wrapped.", ref("Resource")),
			"400": errAnswer("The id is not a GUID, the body lacks an editable key, the body Id differs from the path, or a rule is broken."),
			"404": errAnswer("No resource has this id."),
			"413": respRef("PayloadTooLarge"), "415": respRef("UnsupportedMediaType")}}),
	"health": fixed(operation{
		id: "health", summary: "Health", description: "Answers without credentials too under -auth, then with Status alone.",
		answers: obj{"200": okAnswer("Healthy.", ref("Health"))}}),
	"adminListResources": fixed(operation{
		id: "adminListResources", summary: "Every resource", description: "Every resource, in creation order.",
		answers: obj{"200": okAnswer("Every resource.", ref("ResourceSet"))}}),
	"seedResources": func(l openAPILimits) operation {
		return operation{id: "seedResources", summary: "Seed resources",
			description: fmt.Sprintf("Adds an array of resources under the create rules, all or nothing; an Id may be given and must be a unique GUID. At most %d bytes (-max-seed-body).", l.MaxSeedBody),
			body:        jsonBody(obj{"type": "array", "items": ref("SeedResource")}, "The resources, in order."),
			answers: obj{"200": okAnswer("Seeded.", ref("SeedResponse")),
				"400": errAnswer("Not an array of objects, or an item breaks a rule; ModelState keys are \"[i].Property\"."), "413": respRef("PayloadTooLarge")}}
	},
	"generateResources": fixed(operation{
		id: "generateResources", summary: "Add generated resources",
		description: "Adds Count realistic resources (names, companies, unique emails and external ids), the same ones for the same Seed. The console's \"Add sample data\" uses it.",
		body:        jsonBody(ref("GenerateRequest"), "How many, and the seed."),
		answers: obj{"200": okAnswer("Added, as a seed answers.", ref("SeedResponse")),
			"400": errAnswer("A Count out of range, or an unknown property.")}}),
	"deleteResources": fixed(operation{
		id: "deleteResources", summary: "Remove every resource",
		answers: obj{"200": okAnswer("Removed; Deleted is how many there were.", counter("Deleted"))}}),
	"listRequests": func(l openAPILimits) operation {
		return operation{id: "listRequests", summary: "The request journal",
			description: fmt.Sprintf("Every /api/v2 request, newest last, up to -journal-size (%d here). Filters combine.", l.JournalSize),
			params: []any{
				queryParam("method", "Only entries with this method.", obj{"type": "string"}),
				queryParam("path", "Only entries with this path: exact, or a pattern with {name} segments as in faults.", obj{"type": "string"}),
				queryParam("status", "Only entries with this status.", obj{"type": "integer", "minimum": 100, "maximum": 599}),
				queryParam("since", "Only entries with a larger Seq.", obj{"type": "integer", "minimum": 0}),
				queryParam("limit", "Keep only the newest N matching entries.", obj{"type": "integer", "minimum": 1}),
				queryParam("count", "With wait: answer as soon as at least N entries match.", obj{"type": "integer", "minimum": 1}),
				queryParam("wait", fmt.Sprintf("How long to wait for count entries, a Go duration such as 5s or 500ms; at most %ds.", int(maxJournalWait.Seconds())),
					obj{"type": "string", "pattern": "^[0-9.]+(ns|us|µs|ms|s|m)$"}),
			},
			answers: obj{"200": okAnswer("Matching entries, oldest first.", ref("Journal")),
				"400": errAnswer("An unknown or malformed query parameter.")}}
	},
	"clearRequests": fixed(operation{
		id: "clearRequests", summary: "Clear the journal", description: "Seq numbers are not reused afterwards.",
		answers: obj{"200": okAnswer("Cleared; Cleared is how many entries there were.", counter("Cleared"))}}),
	"listFaults": fixed(operation{
		id: "listFaults", summary: "Faults in force", description: "In the order they are tried, each with how often it Fired.",
		answers: obj{"200": okAnswer("The faults.", ref("FaultList"))}}),
	"addFaults": fixed(operation{id: "addFaults", summary: "Add faults",
		description: fmt.Sprintf("One fault or an array of them; at most %d that can still fire exist at once (spent ones are dropped, oldest first, to make room), "+
			"and the bodies and headers of every namespace's faults together hold at most -max-fault-bodies bytes (%d MiB by default). ", maxFaults, DefaultConfig().MaxFaultBodies>>20) +
			"A fault's answer carries any headers the fault sets (Headers), so the /api/v2 operations declare Retry-After on their 429, 503 and default answers.",
		body: jsonBody(obj{"oneOf": []any{ref("FaultSpec"), obj{"type": "array", "items": ref("FaultSpec")}}}, "A fault, or an array of faults."),
		answers: obj{"200": okAnswer("The faults added, with their Ids.", ref("FaultList")),
			"400": errAnswer("A fault breaks a rule (ModelState names the property, prefixed [i]. in an array), too many faults, or bodies over -max-fault-bodies."),
			"413": respRef("PayloadTooLarge")}}),
	"clearFaults": fixed(operation{
		id: "clearFaults", summary: "Clear every fault",
		answers: obj{"200": okAnswer("Cleared; Cleared is how many faults there were.", counter("Cleared"))}}),
	"removeFault": fixed(operation{
		id: "removeFault", summary: "Remove one fault",
		pathParams: []any{obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "integer", "minimum": 1}, "example": 1}},
		answers: obj{"200": okAnswer("Removed; Deleted is the fault's Id.", counter("Deleted")),
			"400": errAnswer("The id is not a number."), "404": errAnswer("No fault has this id.")}}),
	"writeSnapshot": fixed(operation{
		id: "writeSnapshot", summary: "Write the snapshot now",
		answers: obj{"200": okAnswer("Written.", ref("SnapshotResult")), "400": errAnswer("An unknown query parameter."),
			"409": errAnswer("Snapshots are off (-snapshot \"\")."),
			"500": errAnswer("The snapshot could not be written; the Message gives the request id and a reason.")}}),
	"reset": fixed(operation{
		id: "reset", summary: "Reset", description: "Resources, journal and faults back to empty, then the current seed (the -seed file, or the last PUT /__admin/seed) loaded again.",
		answers: obj{"200": okAnswer("Reset; Resources is how many the directory holds now (the current seed's).", closed(obj{
			"Status": obj{"type": "string", "enum": []string{"reset"}}, "Resources": obj{"type": "integer", "minimum": 0}}, "Status", "Resources")),
			"400": errAnswer("An unknown query parameter.")}}),
	"putSeed": func(l openAPILimits) operation {
		return operation{id: "putSeed", summary: "Make the current seed",
			description: fmt.Sprintf("Server-wide (not under /ns/{namespace}). The array becomes the current seed, as -seed is at start: namespaces made or reset after it start from it; "+
				"the others, default included, keep what they have until reset. Create rules apply; an Id may be given, the others are derived from the content, the same for the same seed. "+
				"At most %d distinct seeds are held at once (the current one and those namespaces are on). At most %d bytes (-max-seed-body).", maxHeldSeeds, l.MaxSeedBody),
			body: jsonBody(obj{"type": "array", "items": ref("SeedResource")}, "The resources, in order."),
			answers: obj{"200": okAnswer("The current seed now; Ids are its resources' Ids, in order.", ref("SeedResponse")),
				"400": errAnswer("Not an array of objects, or an item breaks a rule; ModelState keys are \"[i].Property\"."), "413": respRef("PayloadTooLarge"),
				"409": errAnswer(fmt.Sprintf("%d distinct seeds are held already; the Message names the namespaces on the oldest, which a reset or removal lets go.", maxHeldSeeds))}}
	},
	"getSeed": fixed(operation{
		id: "getSeed", summary: "The current seed", description: "Server-wide. The current seed (the -seed file, or the last PUT /__admin/seed), with the Ids its resources get.",
		answers: obj{"200": okAnswer("The current seed.", ref("ResourceSet"))}}),
	"listNamespaces": fixed(operation{
		id: "listNamespaces", summary: "Namespaces",
		description: "Every namespace with its resource count, when it was created, when a client last sent it a request (the console's own requests aside) and when it last had any request (health probes aside).",
		answers: obj{"200": okAnswer("The namespaces, by name.", closed(obj{
			"Namespaces": obj{"type": "array", "items": closed(obj{
				"Name":        obj{"type": "string", "pattern": namespacePattern},
				"Resources":   obj{"type": "integer", "minimum": 0},
				"Created":     obj{"type": "string", "format": "date-time"},
				"LastRequest": obj{"type": []string{"string", "null"}, "format": "date-time", "description": "null until a client's first request."},
				"LastActivity": obj{"type": []string{"string", "null"}, "format": "date-time",
					"description": "The last request of any kind, the console's included, health probes excepted: what -namespace-idle reads. null until the first."}},
				"Name", "Resources", "Created", "LastRequest", "LastActivity")},
			"Total": obj{"type": "integer", "minimum": 1}}, "Namespaces", "Total")),
			"400": errAnswer("An unknown query parameter.")}}),
	"createNamespace": fixed(operation{
		id: "createNamespace", summary: "Create a namespace",
		description: "A new, empty namespace with a fresh name, for one test to use alone; its base URL is what the test's client is pointed at.",
		body: obj{"required": false, "description": "Optional: what the name starts with.", "content": jsonContent(closed(obj{
			"Prefix": obj{"type": "string", "description": "The new name starts with it; a name is " + namespaceNameHelp}}))},
		answers: obj{"201": okAnswer("Created.", closed(obj{
			"Name":    obj{"type": "string", "pattern": namespacePattern},
			"BaseURL": obj{"type": "string", "description": "The namespace's base URL: /api/v2 and /__admin paths go after it."}}, "Name", "BaseURL")),
			"400": errAnswer("A Prefix that cannot start a name, or an unknown property."),
			"429": errAnswer("There are -max-namespaces namespaces already.")}}),
	"deleteNamespace": fixed(operation{
		id: "deleteNamespace", summary: "Remove a namespace", description: "The default namespace cannot be removed, only reset.",
		pathParams: []any{obj{"name": "name", "in": "path", "required": true,
			"schema": obj{"type": "string", "pattern": namespacePattern}, "example": openAPIExampleNamespace}},
		answers: obj{"200": okAnswer("Removed; Resources is how many it held.", closed(obj{
			"Deleted": obj{"type": "string", "pattern": namespacePattern}, "Resources": obj{"type": "integer", "minimum": 0}}, "Deleted", "Resources")),
			"400": errAnswer("A name that is not valid, or default."), "404": errAnswer("No such namespace.")}}),
	"console": fixed(operation{id: "console", summary: "The console",
		description: "The console: one HTML page (its script and style sheet are under /__admin/console/) for watching and driving the directory in a browser.",
		answers:     obj{"200": obj{"description": "The page.", "content": obj{"text/html": obj{"schema": obj{"type": "string"}}}}}}),
	"consoleAsset": fixed(operation{
		id: "consoleAsset", summary: "The console's script and style sheet",
		description: "Served with ?v=<content hash> by the page, and then cacheable for good.",
		params: []any{queryParam("v", "The file's content hash, as the page links it; with it the answer may be cached for good.",
			obj{"type": "string"})},
		pathParams: []any{obj{"name": "file", "in": "path", "required": true, "schema": obj{"type": "string", "enum": consoleAssetNames()},
			"example": consoleAssetNames()[0]}},
		answers: obj{"200": obj{"description": "The file.", "content": obj{
			"text/javascript": obj{"schema": obj{"type": "string"}}, "text/css": obj{"schema": obj{"type": "string"}}}},
			"404": errAnswer("No such file.")}}),
	"openapi": fixed(operation{
		id: "openapi", summary: "This document",
		params: []any{queryParam("scope", "api: the document of the emulated API alone (/api/v2, without the /ns/{namespace} twins or the controls), "+
			"for an application's production client. Absent: the whole document. Another value is a 400.", obj{"type": "string", "enum": []string{scopeAPI}})},
		answers: obj{"200": okAnswer("The OpenAPI document.", obj{"type": "object", "additionalProperties": true}),
			"400": errAnswer("An unknown scope or query parameter.")}}),
}

// fixed is the documentation of a route that the server's limits do not
// change: one value serves every document, which only copies from it.
func fixed(o operation) func(openAPILimits) operation {
	return func(openAPILimits) operation { return o }
}

// createdNote describes a create's success for the status in force.
func createdNote(status int) string {
	if status == http.StatusOK {
		return "Created; this server answers 200 (-create-status 200), as some tenants do, where the real service answers 201."
	}
	return "Created."
}
