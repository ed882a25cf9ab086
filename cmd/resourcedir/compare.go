package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/resourcedir/resourcedir"
)

// compare answers "how faithful is resourcedir for my tenant?": it reads
// the tenant's directory, loads it into a resourcedir, sends both the same
// read-only list queries built from the data, and reports, rule by rule,
// where the answers differ. Only GETs ever reach the tenant.

// Rules a difference is put under whatever the query was about: a refused
// operator refuses every query that uses it, and a TotalPages rounded
// another way shows on any page size that does not divide the total.
const (
	ruleTotalPages = "TotalPages is the ceiling of TotalResults / pageSize"
	ruleOperator   = "operator %s is accepted"
)

// cmpQuery is one list query and the rule it checks.
type cmpQuery struct {
	Rule  string
	Op    string // the operator it uses, "" for none
	Query string // the raw query string
}

// cmpAnswer is what compare reads of a list answer.
type cmpAnswer struct {
	Status       int
	TotalResults int      `json:",omitempty"`
	TotalPages   int      `json:",omitempty"`
	Ids          []string `json:",omitempty"`
	Message      string   `json:",omitempty"` // an error's Message, or why the body could not be read
}

func (a cmpAnswer) String() string {
	if a.Status != http.StatusOK {
		return fmt.Sprintf("%d %s", a.Status, a.Message)
	}
	ids, more := a.Ids, ""
	if len(ids) > 5 {
		ids, more = ids[:5], fmt.Sprintf(" and %d more", len(a.Ids)-5)
	}
	return fmt.Sprintf("200 TotalResults %d TotalPages %d Ids [%s]%s", a.TotalResults, a.TotalPages, strings.Join(ids, " "), more)
}

// readAnswer reads a list answer; Ids are compared in lower case.
func readAnswer(status int, body []byte) cmpAnswer {
	a := cmpAnswer{Status: status}
	if status != http.StatusOK {
		var e struct{ Message string }
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			a.Message = e.Message
		} else {
			a.Message = fmt.Sprintf("%.120q", body)
		}
		return a
	}
	var p struct {
		TotalResults int
		TotalPages   int
		ResourceList []struct{ Id string }
	}
	if err := json.Unmarshal(body, &p); err != nil {
		a.Message = "the body is not a list answer: " + err.Error()
		return a
	}
	a.TotalResults, a.TotalPages = p.TotalResults, p.TotalPages
	a.Ids = make([]string, len(p.ResourceList))
	for i, r := range p.ResourceList {
		a.Ids[i] = strings.ToLower(r.Id)
	}
	return a
}

// differRule says under which rule a difference between a (the tenant)
// and b falls, or "" when they agree.
func differRule(q cmpQuery, a, b cmpAnswer) string {
	switch {
	case a.Status != b.Status:
		if q.Op != "" {
			return fmt.Sprintf(ruleOperator, q.Op)
		}
		return q.Rule
	case a.Status != http.StatusOK:
		return "" // both refused it
	case a.Message != b.Message, a.TotalResults != b.TotalResults, !slices.Equal(a.Ids, b.Ids):
		return q.Rule
	case a.TotalPages != b.TotalPages:
		return ruleTotalPages
	}
	return ""
}

// cmpRuleReport is one rule's verdict.
type cmpRuleReport struct {
	Rule     string
	Queries  int
	Differ   int
	Examples []cmpExample `json:",omitempty"`
}

type cmpExample struct {
	Query       string
	Tenant      cmpAnswer
	Resourcedir cmpAnswer
}

// cmpReport is the whole verdict; -report json writes it as it is.
type cmpReport struct {
	From      string // the tenant's base URL (credentials never appear in it)
	Against   string // what it was compared with
	Resources int
	Queries   int
	Differs   bool
	Rules     []cmpRuleReport
	Probes    []cmpProbe
	Filters   string // the -filters that fits the tenant
	Advice    string
	Tenant    cmpTenantReport
	// dialect names what the tenant accepted of the probes: assetic
	// (none), kendo (all) or "partly kendo", which no -filters matches.
	dialect string
}

const maxExamples = 3

// compareDirectories sends every query and probe to a (the tenant) and b.
func compareDirectories(ctx context.Context, a, b *directoryReader, queries []cmpQuery, probes []cmpProbe) (*cmpReport, error) {
	rep := &cmpReport{Queries: len(queries)}
	byRule := map[string]*cmpRuleReport{}
	rule := func(name string) *cmpRuleReport {
		if byRule[name] == nil {
			byRule[name] = &cmpRuleReport{Rule: name}
		}
		return byRule[name]
	}
	for _, q := range queries {
		ansA, ansB, err := askBoth(ctx, a, b, q.Query)
		if err != nil {
			return nil, err
		}
		rule(q.Rule).Queries++
		if q.Op != "" {
			rule(fmt.Sprintf(ruleOperator, q.Op)).Queries++
		}
		if ansA.Status == http.StatusOK && ansB.Status == http.StatusOK {
			rule(ruleTotalPages).Queries++
		}
		if d := differRule(q, ansA, ansB); d != "" {
			r := rule(d) // its query counted above
			r.Differ++
			if len(r.Examples) < maxExamples {
				r.Examples = append(r.Examples, cmpExample{Query: q.Query, Tenant: ansA, Resourcedir: ansB})
			}
		}
	}
	// The rules in the order they are built, then the operators by name.
	rank := func(name string) int {
		if i := slices.IndexFunc(cmpRules, func(r cmpRule) bool { return r.name == name }); i >= 0 {
			return i
		}
		return len(cmpRules)
	}
	for _, r := range byRule {
		rep.Rules = append(rep.Rules, *r)
		rep.Differs = rep.Differs || r.Differ > 0
	}
	slices.SortFunc(rep.Rules, func(x, y cmpRuleReport) int {
		return cmp.Or(rank(x.Rule)-rank(y.Rule), strings.Compare(x.Rule, y.Rule))
	})
	if err := rep.probe(ctx, a, b, probes); err != nil {
		return nil, err
	}
	return rep, nil
}

// askBoth sends one list query to a, then to b.
func askBoth(ctx context.Context, a, b *directoryReader, query string) (cmpAnswer, cmpAnswer, error) {
	var answers [2]cmpAnswer
	for i, d := range []*directoryReader{a, b} {
		status, body, err := d.list(ctx, query)
		if err != nil {
			return cmpAnswer{}, cmpAnswer{}, err
		}
		answers[i] = readAnswer(status, body)
	}
	return answers[0], answers[1], nil
}

// probe sends the probes to both and says which -filters fits the tenant.
func (rep *cmpReport) probe(ctx context.Context, a, b *directoryReader, probes []cmpProbe) error {
	accepted := 0
	for i := range probes {
		p := &probes[i]
		var err error
		if p.Tenant, p.Resourcedir, err = askBoth(ctx, a, b, p.Query); err != nil {
			return err
		}
		p.Accepted = p.Tenant.Status == http.StatusOK
		if p.Accepted {
			accepted++
		}
		p.SameAnswer = p.Accepted && differRule(cmpQuery{Rule: p.Construct}, p.Tenant, p.Resourcedir) == ""
	}
	rep.Probes = probes
	// A tenant that takes some of Kendo's constructs is best served by
	// assetic, which fails what the tenant might not take.
	rep.Filters = "assetic"
	switch accepted {
	case 0:
		rep.dialect = "assetic"
		rep.Advice = "the tenant refuses every construct the real service does not document: -filters assetic (the default) fits it."
	case len(probes):
		rep.dialect, rep.Filters = "kendo", "kendo"
		rep.Advice = "the tenant accepts Kendo's whole grammar: -filters kendo fits it."
	default:
		rep.dialect = "partly kendo"
		rep.Advice = "the tenant accepts some of what the real service does not document (see the probes): keep -filters assetic, so that a client relying on the rest fails here first, or use kendo knowing it accepts more than the tenant."
	}
	return nil
}

// write writes the report in format: json for machines, else text for people.
func (rep *cmpReport) write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "resourcedir compare: %d queries against %s (%d resources) and %s\n\n", rep.Queries, rep.From, rep.Resources, rep.Against)
	differ := 0
	for _, r := range rep.Rules {
		verdict, count := "agrees ", ""
		if r.Differ > 0 {
			verdict, count = "DIFFERS", fmt.Sprintf(", %d differ", r.Differ)
			differ++
		}
		fmt.Fprintf(&b, "%s  %s (%d queries%s)\n", verdict, r.Rule, r.Queries, count)
		for _, e := range r.Examples {
			fmt.Fprintf(&b, "    GET /api/v2/resource?%s\n      tenant:      %s\n      resourcedir: %s\n", e.Query, e.Tenant, e.Resourcedir)
		}
	}
	b.WriteString("\nFilter dialect:\n")
	for _, p := range rep.Probes {
		verdict := "refuses"
		switch {
		case p.SameAnswer:
			verdict = "accepts (answering as resourcedir does)"
		case p.Accepted && p.Resourcedir.Status == http.StatusOK:
			verdict = "accepts (answering otherwise than resourcedir)"
		case p.Accepted:
			verdict = "accepts"
		}
		fmt.Fprintf(&b, "  the tenant %s %s: %d\n", verdict, p.Construct, p.Tenant.Status)
	}
	fmt.Fprintf(&b, "  So %s\n", rep.Advice)
	rep.Tenant.writeText(&b)
	fmt.Fprintf(&b, "\n%d rules agree, %d differ.\n", len(rep.Rules)-differ, differ)
	if differ > 0 {
		b.WriteString("A difference means a client tested against resourcedir may behave otherwise against the tenant: check the\nqueries above by hand, and write your client's tests so they do not depend on that rule.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// localResourcedir serves a resourcedir seeded with items, as import's file
// seeds one, on a loopback port of its own, and reads it; stop ends it.
func localResourcedir(items []map[string]json.RawMessage) (d *directoryReader, stop func(), err error) {
	file, err := importSeedFile(items, nil)
	if err != nil {
		return nil, nil, err
	}
	// Kendo: the probes need answers to compare with.
	srv, err := resourcedir.New(resourcedir.Config{Seed: json.RawMessage(file), Filters: "kendo", JournalSize: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("the tenant's directory does not seed a resourcedir: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close() //nolint:errcheck // in memory: nothing to write
		return nil, nil, fmt.Errorf("a local resourcedir: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		srv.Serve(ctx, ln) //nolint:errcheck // in memory: nothing to write at stop
		close(served)
	}()
	// An http URL without credentials, unpaced: it passes every check.
	d, _ = newDirectoryReader("http://"+ln.Addr().String(), "", 0)
	return d, func() { cancel(); <-served }, nil
}

// runCompare is resourcedir compare: see its usage.
func runCompare(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	cannot := func(err error) error { return &exitError{2, fmt.Errorf("compare: %w", err)} }
	fs := newSubcommand("compare", "usage: resourcedir compare -from URL [-auth user:token] [-queries N] [-rand-seed S] [-filters D]"+
		" [-rate R] [-report json] [-b URL [-b-auth user:token]]\n\n"+
		"Reads the tenant's directory, loads it into a resourcedir, sends both the same read-only list queries and\n"+
		"reports by rule where they answer differently, then the tenant's version, whether its resources carry\n"+
		"ContractorOrganization and how it reads repeated requestParams.filters. Only GETs are sent to the tenant.\n"+
		"Exits 0 when nothing differs, 1 when something does, 2 when it could not compare.")
	reader := fromFlags(fs)
	n := fs.Int("queries", 300, "how many list queries to send to each")
	seed := fs.Uint64("rand-seed", 1, "the same `seed` and data give the same queries")
	report := fs.String("report", "text", "report `format`: text, or json for machines")
	against := fs.String("b", "", "compare with the resourcedir at this base `URL` instead of one in this process")
	againstAuth := fs.String("b-auth", "", "HTTP Basic credentials for -b, `user:token` (when it runs with -auth)")
	running := fs.String("filters", "assetic", "the filter `dialect` you run resourcedir with: assetic or kendo; a tenant that accepts another is a difference")
	if err := parseSubcommand(fs, args, 0, stderr); err != nil {
		return cannot(err) // flag.ErrHelp included: exitCode and Main tell it by errors.Is
	}
	switch {
	case *n < 1:
		return cannot(fmt.Errorf("-queries must be at least 1, not %d", *n))
	case *report != "text" && *report != "json":
		return cannot(fmt.Errorf("-report must be text or json, not %q", *report))
	case *againstAuth != "" && *against == "":
		return cannot(errors.New("-b-auth is for the server -b names; give -b too"))
	case *againstAuth != "" && !strings.Contains(*againstAuth, ":"):
		return cannot(errors.New("-b-auth must be user:token"))
	}
	dialect, err := resourcedir.ParseDialect(*running)
	if err != nil {
		return cannot(fmt.Errorf("-filters: %w", err))
	}
	tenant, err := reader(environ)
	if err != nil {
		return cannot(err)
	}
	var b *directoryReader
	againstName := "resourcedir in this process"
	if *against != "" {
		if b, err = newDirectoryReader(*against, *againstAuth, 0); err != nil {
			return cannot(fmt.Errorf("-b: %w", err))
		}
		againstName = b.base
	}
	items, err := tenant.readAll(ctx, stderr)
	if err != nil {
		return cannot(err)
	}
	if b == nil {
		var stop func()
		if b, stop, err = localResourcedir(items); err != nil {
			return cannot(err)
		}
		defer stop()
	}
	data := newCmpData(items)
	got, err := compareDirectories(ctx, tenant, b, buildQueries(data, *n, *seed), buildProbes(data))
	if err != nil {
		return cannot(err)
	}
	got.From, got.Against, got.Resources = tenant.base, againstName, len(items)
	if got.Tenant, err = tenantSection(ctx, tenant, items, data); err != nil {
		return cannot(err)
	}
	if err := got.write(stdout, *report); err != nil {
		return cannot(err)
	}
	return got.verdict(dialect)
}

// verdict is compare's exit: nil when nothing differs, status 1 saying
// what did (answers, or the tenant's dialect against running's).
func (rep *cmpReport) verdict(running string) error {
	var differs []string
	if rep.Differs {
		differs = append(differs, "resourcedir answers some queries otherwise than the tenant")
	}
	if rep.dialect != running {
		differs = append(differs, fmt.Sprintf("the tenant's filter dialect is %s, not the -filters %s you run resourcedir with", rep.dialect, running))
	}
	if len(differs) > 0 {
		return &exitError{1, fmt.Errorf("compare: %s (see the report)", strings.Join(differs, "; "))}
	}
	return nil
}
