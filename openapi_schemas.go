package resourcedir

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// openAPISchemas are the document's named schemas (components.schemas).
func openAPISchemas(cfg openAPILimits) obj {
	requestorType, requestorTypeInput := requestorTypeSchemas()
	fault := faultProperties()
	faultOut := obj{"Id": obj{"type": "integer", "minimum": 1}, "Fired": obj{"type": "integer", "minimum": 0}}
	maps.Copy(faultOut, fault)
	schemas := obj{
		"Error": obj{"type": "object", "required": []string{"Message"}, "additionalProperties": false,
			"description": "Every error, as ASP.NET Web API services answer. ModelState is present only where properties are at fault; " +
				fmt.Sprintf("it holds at most %d problems plus one \"…\" entry saying how many more there were.", maxProblems),
			"properties": obj{
				"Message":    obj{"type": "string"},
				"ModelState": obj{"type": "object", "additionalProperties": obj{"type": "array", "items": obj{"type": "string"}}},
			}},
		"RequestorType":      requestorType,
		"RequestorTypeInput": requestorTypeInput,
		"StringOrList": obj{"description": "One value, or a list when the name was repeated.",
			"oneOf": []any{obj{"type": "string"}, obj{"type": "array", "items": obj{"type": "string"}}}},
		"ResourceCreated": resourceSchema(false),
		"Resource":        resourceSchema(true),
		"CreateRequest":   writeSchema("create"),
		"UpdateRequest":   writeSchema("update"),
		"SeedResource":    writeSchema("seed"),
		"CreateResponse": closed(obj{
			"Data":  obj{"type": "array", "items": ref("ResourceCreated"), "minItems": 1, "maxItems": 1},
			"Total": obj{"type": "integer", "enum": []int{1}},
		}, "Data", "Total"),
		"ResourcePage": closed(obj{
			"TotalResults": obj{"type": "integer", "minimum": 0},
			"TotalPages":   obj{"type": "integer", "minimum": 0, "description": "ceil(TotalResults / pageSize); 0 when nothing matches."},
			"Page":         obj{"type": "integer", "minimum": 1},
			"ResourceList": obj{"type": "array", "items": ref("Resource"), "maxItems": cfg.MaxPageSize},
			"_links":       halLinks,
			"_embedded":    halEmbedded,
		}, "TotalResults", "TotalPages", "Page", "ResourceList", "_links", "_embedded"),
	}
	maps.Copy(schemas, controlSchemas(fault, faultOut))
	return schemas
}

// controlSchemas are the schemas of the /__admin controls' bodies and
// answers; fault and faultOut are a fault's properties as given and as
// listed.
func controlSchemas(fault, faultOut obj) obj {
	return obj{
		"Health": closed(obj{
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
		}, "Status"),
		"ServiceVersion": closed(obj{
			"Major":         obj{"type": "integer", "minimum": 0, "maximum": math.MaxInt32},
			"Minor":         obj{"type": "integer", "minimum": 0, "maximum": math.MaxInt32},
			"Build":         obj{"type": "integer", "minimum": 0, "maximum": math.MaxInt32},
			"Revision":      obj{"type": "integer", "minimum": 0, "maximum": math.MaxInt32},
			"MajorRevision": obj{"type": "integer", "minimum": 0, "maximum": math.MaxUint16, "description": "The high 16 bits of Revision."},
			"MinorRevision": obj{"type": "integer", "minimum": 0, "maximum": math.MaxUint16, "description": "The low 16 bits of Revision."},
		}, "Major", "Minor", "Build", "Revision", "MajorRevision", "MinorRevision"),
		"ResourceSet": closed(obj{
			"Data": obj{"type": "array", "items": ref("ResourceCreated")}, "Total": obj{"type": "integer", "minimum": 0}}, "Data", "Total"),
		"GenerateRequest": closed(obj{
			"Count": obj{"type": "integer", "minimum": 1, "maximum": maxGenerateCount},
			"Seed":  obj{"type": "integer", "description": "The same Seed gives the same resources."}}, "Count"),
		"SeedResponse": closed(obj{
			"Total": obj{"type": "integer", "minimum": 0},
			"Ids":   obj{"type": "array", "items": obj{"type": "string", "format": "uuid"}, "description": "The new Ids, in the order given."}}, "Total", "Ids"),
		"JournalEntry": journalEntrySchema(),
		"Journal": closed(obj{
			"Requests": obj{"type": "array", "items": ref("JournalEntry")},
			"Count":    obj{"type": "integer", "minimum": 0},
			"Journal":  obj{"type": "string", "enum": []string{"on", "off"}},
		}, "Requests", "Count", "Journal"),
		"FaultSpec": obj{"type": "object", "required": []string{"Path"}, "properties": fault, "additionalProperties": false,
			"description": "Property names match in any case; an unknown property is a 400."},
		"Fault": obj{"type": "object", "properties": faultOut, "additionalProperties": false,
			"required":    []string{"Id", "Method", "Path", "Times", "Chance", "Seed", "Kind", "DelayMs", "After", "Fired"},
			"description": "A fault as listed: Status, Headers and Body appear when the fault has them."},
		"FaultList": obj{"type": "object", "required": []string{"Faults"}, "properties": obj{
			"Faults": obj{"type": "array", "items": ref("Fault")}}},
		"SnapshotResult": closed(obj{
			"Path": obj{"type": "string"}, "Resources": obj{"type": "integer", "minimum": 0},
			"Bytes": obj{"type": "integer", "minimum": 0}, "DurationMs": obj{"type": "number", "minimum": 0},
		}, "Path", "Resources", "Bytes", "DurationMs"),
	}
}

// halLinks and halEmbedded are HAL's _links and _embedded as the real
// service writes them: always [] and null. _embedded is declared a nullable
// open object, not {"type": "null"}: generated TypeScript types drop a key
// whose only value is null (openapi-fetch's Readable), and then a listed
// resource would not be a Resource.
var (
	halLinks = obj{"type": "array", "maxItems": 0, "items": obj{"type": "object", "additionalProperties": true},
		"description": "HAL links: always empty here."}
	halEmbedded = obj{"type": []string{"object", "null"}, "additionalProperties": true,
		"description": "HAL embedded resources: always null here."}
)

// requestorTypeSchemas are a requestor type as answers carry it and as
// requests give it. One object for the type, whichever answer carries it,
// so that generators make one struct with enums, not a union of five
// constants.
func requestorTypeSchemas() (out, in obj) {
	var table []string
	var typeIDs []any
	for _, rt := range requestorTypeTable {
		typeIDs = append(typeIDs, int(rt.id))
		table = append(table, fmt.Sprintf("%d %s", rt.id, rt.name))
	}
	out = obj{"type": "object", "additionalProperties": false,
		"description": "A requestor type of the fixed table: " + strings.Join(table, ", ") + ". The Id always goes with its Type. " +
			"Update and list answers also carry _links ([]) and _embedded (null); create answers and the admin listing do not.",
		"required": []string{"Id", "Type"},
		"properties": obj{
			"Id":        obj{"type": "integer", "enum": typeIDs, "description": "The table's Id of Type."},
			"Type":      obj{"type": "string", "enum": requestorTypeNames},
			"_links":    halLinks,
			"_embedded": halEmbedded,
		}}
	in = obj{"type": "object", "required": []string{"Type"},
		"description": "A requestor type in a request: only Type is read; unknown properties are ignored.",
		"properties": obj{
			"Type": obj{"type": "string", "enum": requestorTypeNames,
				"description": "One of " + strings.Join(requestorTypeNames, ", ") + ". Matched case-insensitively on the wire (\"team\" is Team) and stored canonical."},
			"Id": obj{"type": []string{"integer", "null"}, "description": "Ignored: the table's Id of Type is used."},
		}}
	return out, in
}

// stringSchema is a string property, with its character limit if it has one.
func stringSchema(f field, nullable bool) obj {
	s := obj{"type": "string"}
	if nullable {
		s["type"] = []string{"string", "null"}
	}
	if n := maxLength(f); n > 0 {
		s["maxLength"] = n
		s["description"] = fmt.Sprintf("At most %d characters (Unicode characters, not bytes).", n)
	}
	if f.kendoOnly() {
		s["description"] = "Not in the specification (the vendor's client models it since 2026). Optional in an update too: left out, it becomes null. " +
			"Filters and sorts take it under -filters kendo only."
	}
	return s
}

func addressSchema(desc string) obj {
	return obj{"type": []string{"object", "null"}, "additionalProperties": true, "description": desc}
}

// resourceSchema is a resource as answers write it: hal adds the _links
// and _embedded of update and list answers.
func resourceSchema(hal bool) obj {
	props := obj{}
	for f := range numStringFields {
		p := fieldNames[f]
		switch f {
		case fieldID:
			props[p] = obj{"type": "string", "format": "uuid", "pattern": openAPIGUIDPattern,
				"description": "A GUID, lower case and hyphenated: a random version-4 one generated on create, or the one a seed gave (any GUID)."}
		case fieldStatus:
			props[p] = obj{"type": "string", "enum": statuses}
		case fieldDisplayName:
			s := stringSchema(f, specOf[f].nullable)
			s["minLength"] = 1
			s["description"] = s["description"].(string) + " Generated from FirstName, Surname and Company when sent empty."
			props[p] = s
		default:
			props[p] = stringSchema(f, specOf[f].nullable)
		}
	}
	props["StatusId"] = obj{"type": "integer", "enum": []int{1, 2}, "description": "Derived from Status: 1 Active, 2 Inactive."}
	props["Types"] = obj{"type": "array", "items": ref("RequestorType")}
	props["Address"] = addressSchema("As given on create; never changed by an update.")
	required := append(slices.Clone(fieldNames[:numStringFields]), "StatusId", "Types", "Address")
	desc := "A resource as create responses and the admin listing write it (no _links/_embedded)."
	if hal {
		props["_links"] = halLinks
		props["_embedded"] = halEmbedded
		required = append(required, "_links", "_embedded")
		desc = "A resource as update and list responses write it."
	}
	var wireOrder []string
	for _, s := range propTable {
		wireOrder = append(wireOrder, s.name)
	}
	desc += " Properties are written in the order " + strings.Join(wireOrder, ", ") + "."
	return obj{"type": "object", "description": desc, "properties": props,
		"required": required, "additionalProperties": false}
}

// writeSchema is a create (or seed, or update) body; property names are
// matched case-insensitively and unknown ones ignored, so it stays open.
func writeSchema(kind string) obj {
	props := obj{}
	for f := range numStringFields {
		p := fieldNames[f]
		switch f {
		case fieldID:
			props[p] = map[string]obj{
				"create": {"type": []string{"string", "null"}, "description": "Ignored: the server generates the Id."},
				"update": {"type": "string", "format": "uuid", "description": "Must equal the id in the path (compared case-insensitively)."},
				"seed": {"type": []string{"string", "null"}, "format": "uuid",
					"description": "Optional; a unique GUID (any version, any case). Generated when absent."},
			}[kind]
		case fieldStatus:
			// The enum lists the canonical spellings, which is what a
			// generated client sends; the server also takes any case. Null
			// (Active) is said in words: a null in the enum becomes a
			// "<nil>" constant in Go clients.
			desc := "Active or Inactive, matched case-insensitively on the wire (\"inactive\" is Inactive) and stored canonical. Omitted (or null) means Active."
			if kind == "update" {
				desc = "Active or Inactive, matched case-insensitively on the wire and stored canonical; required and not null in an update."
			}
			props[p] = obj{"type": "string", "enum": statuses, "description": desc}
		default:
			props[p] = stringSchema(f, true)
		}
	}
	props["StatusId"] = obj{"type": []string{"integer", "null"}, "description": "Ignored: derived from Status."}
	props["Types"] = obj{"type": []string{"array", "null"}, "description": "Omitted or null means none. Duplicates are collapsed, keeping the first.",
		"items": ref("RequestorTypeInput")}
	props["Address"] = addressSchema("Stored and returned as given.")
	s := obj{"type": "object", "properties": props,
		"description": "Property names are matched case-insensitively; unknown properties are ignored. " +
			"Empty or white-space-only name parts count as empty. Company is required when FirstName and Surname are both empty."}
	if kind == "update" {
		props["Address"] = addressSchema("Ignored on update: the stored Address is kept.")
		var editable []string
		for _, p := range editableProps {
			editable = append(editable, p.String())
		}
		s["required"] = editable
		s["description"] = "A full replacement: every one of " + strings.Join(editable, ", ") +
			" must be present as a key (its value may be null); a body that lacks any is a 400 listing them. " + s["description"].(string)
	}
	return s
}

// journalEntrySchema is one entry of the journal; its caps are the
// journal's own.
func journalEntrySchema() obj {
	headersKiB, bodyKiB, answerKiB := maxJournalHeaders>>10, maxJournalBody>>10, maxJournalResponse>>10
	return obj{"type": "object", "additionalProperties": false,
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
			"HeadersTruncated": obj{"type": "boolean", "description": fmt.Sprintf("Headers were left out: they came to more than %d KiB, or the request was refused for its credentials (401), of which only the request line and status are kept.", headersKiB)},
			"Body":             obj{"description": "The body as JSON when it was JSON, else a string; null when empty."},
			"BodyTruncated":    obj{"type": "boolean", "description": fmt.Sprintf("The body was cut at %d KiB, or left out of a request refused for its credentials (401).", bodyKiB)},
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
			"ResponseTruncated": obj{"type": "boolean", "description": fmt.Sprintf("The answer's body was cut at %d KiB or its headers at %d KiB, or the answer to a request refused for its credentials (401) was left out.", answerKiB, headersKiB)},
			"Ignored": obj{"type": "object", "additionalProperties": obj{"type": "string"},
				"description": "Only on a list (GET /api/v2/resource) that ignored query parameters: each name to the closest one the list reads (`{\"requestParams.filter\": \"requestParams.filters\"}`), so that a typo shows."},
		}}
}

// faultProperties are a fault's properties as POST /__admin/faults takes
// them; its kinds and bounds are the fault code's own.
func faultProperties() obj {
	matchMap := func(desc string) obj {
		return obj{"type": "object", "additionalProperties": obj{"type": "string", "maxLength": maxMatchText}, "minProperties": 1, "maxProperties": maxMatchEntries,
			"description": desc}
	}
	return obj{
		"Method": obj{"type": "string", "description": "HTTP method to match; empty or * matches any."},
		"Path": obj{"type": "string", "pattern": "^(/|" + regexp.QuoteMeta(anyAPIPath) + "$)",
			"description": fmt.Sprintf("An /api/v2 path, exact or with {name} segments, matched as routes are; %q matches every /api/v2 path. Required.", anyAPIPath)},
		"Match": obj{"type": "object", "additionalProperties": false, "description": "Narrows which requests match; every part given must hold.",
			"properties": obj{
				"Query":   matchMap("Query parameters that must be present with these values (names in any case)."),
				"Headers": matchMap("Request headers that must be present with these values (names in any case)."),
				"Body": obj{"oneOf": []any{obj{"type": "string", "minLength": 1}, obj{"type": "object", "additionalProperties": true, "minProperties": 1, "maxProperties": maxMatchEntries}},
					"description": "A string the request body must contain, or an object of JSON properties (names in any case) it must have with these values."},
			}},
		"Skip":   obj{"type": "integer", "minimum": 0, "maximum": maxSkip, "description": "Let the first Skip matching requests through untouched, then fire (Times counts from there)."},
		"Times":  obj{"type": "integer", "minimum": 0, "description": "How many matching requests it answers; 0 means until cleared."},
		"Chance": obj{"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "Probability that a matching request is answered by the fault (default 1)."},
		"Seed":   obj{"type": "integer", "description": "Seeds the Chance draws, so that a run repeats exactly."},
		"Kind":   obj{"type": "string", "enum": faultKinds, "default": kindResponse},
		"Status": obj{"type": "integer", "minimum": 100, "maximum": 599, "description": "For Kind response: the status; without it, the real answer comes after DelayMs."},
		"Headers": obj{"type": "object", "additionalProperties": obj{"type": "string"},
			"description": "For Kind response: extra headers the answer carries, any name, such as {\"Retry-After\": \"2\"}: an answer a fault gives may carry any header."},
		"Body":    obj{"description": "Sent verbatim; without it the body is the error shape for Status."},
		"DelayMs": obj{"type": "integer", "minimum": 0, "maximum": maxFaultDelay.Milliseconds()},
		"After":   obj{"type": "boolean", "description": "Serve the request for real first, then replace the answer."},
	}
}

// openAPIGUIDPattern admits every GUID the server writes: canonical, lower case,
// hyphenated, of any version (a seed may give any GUID).
const openAPIGUIDPattern = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"

// statuses are the values of Status, as the document's enums list them.
var statuses = []string{statusActive, statusInactive}
