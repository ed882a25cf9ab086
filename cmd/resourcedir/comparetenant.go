package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// What compare says of the tenant beyond its list answers: the things of
// round five that a client meets (behaviour.md 12), read with GETs only.

// cmpTenantReport is the tenant section of the report.
type cmpTenantReport struct {
	// VersionStatus is GET /api/v2/version's status, 0 when it could not
	// be sent; Version its JSON when 200.
	VersionStatus int
	Version       json.RawMessage `json:",omitempty"`
	// ContractorOrganization: "carried" when a resource of the tenant has
	// the property, "not carried" when none has, "no resources" when it
	// cannot tell.
	ContractorOrganization string
	// RepeatedFilters: how the tenant answers two repeated
	// requestParams.filters, against the ~and~ join of the two.
	RepeatedFilters cmpRepeated
	// CreateStatus says how to check the status of a create, which
	// compare cannot read without writing; CreateCheck is the command.
	CreateStatus string
	CreateCheck  string
}

type cmpRepeated struct {
	Query    string // the repeated query
	Joined   string // the same filters joined with ~and~
	Tenant   cmpAnswer
	AsJoined cmpAnswer // the tenant's answer to Joined
	// Verdict: "joins them with ~and~" (as resourcedir does), "reads the
	// first only", "reads the last only" or "answers otherwise".
	Verdict string
}

// Repeated filters' verdicts; resourcedir's is the first.
const (
	repeatedJoins  = "joins them with ~and~ (as resourcedir does)"
	repeatedFirst  = "reads the first only (resourcedir joins them with ~and~)"
	repeatedLast   = "reads the last only (resourcedir joins them with ~and~)"
	repeatedOther  = "answers otherwise than the ~and~ join (resourcedir joins them with ~and~)"
	createAdvice   = "compare sends only GETs, so it cannot read the status of a create: resourcedir answers 201 (-create-status 200 answers 200). Check it with one create on a test tenant:"
	createCurlBody = `{"Company":"resourcedir create-status check"}`
)

// tenantSection reads what the report says of the tenant: the version, the
// property, and the repeated filters (four GETs).
func tenantSection(ctx context.Context, tenant *directoryReader, items []map[string]json.RawMessage, data *cmpData) (cmpTenantReport, error) {
	var t cmpTenantReport
	status, body, err := tenant.get(ctx, "/api/v2/version", "")
	if err != nil {
		return t, err
	}
	t.VersionStatus = status
	var compact bytes.Buffer
	if status == http.StatusOK && json.Compact(&compact, body) == nil {
		t.Version = compact.Bytes()
	}
	t.ContractorOrganization = "no resources"
	if len(items) > 0 {
		t.ContractorOrganization = "not carried"
		for _, item := range items {
			if _, ok := importLookup(item, "ContractorOrganization"); ok {
				t.ContractorOrganization = "carried"
				break
			}
		}
	}
	first := "Status~eq~'Active'"
	second := "DisplayName~neq~" + cmpQuote(firstValue(data, "DisplayName"))
	r := &t.RepeatedFilters
	r.Query = "requestParams.filters=" + url.QueryEscape(first) + "&requestParams.filters=" + url.QueryEscape(second)
	r.Joined = cmpFilterQuery(first + "~and~" + second)
	var alone [2]cmpAnswer
	for i, q := range []string{r.Query, r.Joined, cmpFilterQuery(first), cmpFilterQuery(second)} {
		status, body, err := tenant.list(ctx, q)
		if err != nil {
			return t, err
		}
		switch a := readAnswer(status, body); i {
		case 0:
			r.Tenant = a
		case 1:
			r.AsJoined = a
		default:
			alone[i-2] = a
		}
	}
	same := func(a, b cmpAnswer) bool { return differRule(cmpQuery{Rule: "-"}, a, b) == "" }
	switch {
	case same(r.Tenant, r.AsJoined):
		r.Verdict = repeatedJoins
	case same(r.Tenant, alone[0]):
		r.Verdict = repeatedFirst
	case same(r.Tenant, alone[1]):
		r.Verdict = repeatedLast
	default:
		r.Verdict = repeatedOther
	}
	t.CreateStatus, t.CreateCheck = createAdvice, createCurl(tenant.base)
	return t, nil
}

// firstValue is the field's first value in the data, "x" when it has none.
func firstValue(data *cmpData, f string) string {
	if vals := data.values[f]; len(vals) > 0 {
		return vals[0]
	}
	return "x"
}

// createCurl is the command that checks a create's status on the tenant:
// the credentials are left for the user to give, never printed.
func createCurl(base string) string {
	return "curl -sS -o /dev/null -w '%{http_code}\\n' -u \"$USER:$TOKEN\" -H 'Content-Type: application/json' -d '" +
		createCurlBody + "' " + base + "/api/v2/resource"
}

// writeText writes the tenant section of the text report.
func (t *cmpTenantReport) writeText(b *strings.Builder) {
	b.WriteString("\nThe tenant:\n")
	if t.Version != nil {
		fmt.Fprintf(b, "  GET /api/v2/version: %s\n", t.Version)
	} else {
		fmt.Fprintf(b, "  GET /api/v2/version: %d\n", t.VersionStatus)
	}
	fmt.Fprintf(b, "  ContractorOrganization: %s\n", t.ContractorOrganization)
	r := &t.RepeatedFilters
	fmt.Fprintf(b, "  repeated requestParams.filters: the tenant %s\n    GET /api/v2/resource?%s\n      tenant:        %s\n    GET /api/v2/resource?%s\n      tenant:        %s\n",
		r.Verdict, r.Query, r.Tenant, r.Joined, r.AsJoined)
	fmt.Fprintf(b, "  create status: %s\n    %s\n", t.CreateStatus, t.CreateCheck)
}
