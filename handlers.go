package resourcedir

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The emulated API: create, update and list.

// readResource reads a create or update body and applies the rules to it.
func (s *Server) readResource(x *exchange, r *http.Request, mode writeMode, pathID string) (*resource, error) {
	body, err := readJSONBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	var in resourceInput
	if err := decodeResourceInto(body, &in); err != nil {
		return nil, err
	}
	return buildResource(&in, mode, pathID)
}

func (s *Server) create(x *exchange, r *http.Request) (any, error) {
	res, err := s.readResource(x, r, modeCreate, "")
	if err != nil {
		return nil, err
	}
	if res, err = x.ns.store.create(res); err != nil {
		return nil, fmt.Errorf("create resource: %w", err)
	}
	x.answer = madeAnswer{created: res, status: s.cfg.CreateStatus}
	return &x.answer, nil
}

// version answers the service's version, which the vendor's client asks
// for first.
func (s *Server) serviceVersion(*exchange, *http.Request) (any, error) {
	return s.version, nil
}

func (s *Server) update(x *exchange, r *http.Request) (any, error) {
	id, ok := parseGUID(r.PathValue("id"))
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The id in the path, %q, is not a GUID.", r.PathValue("id"))
	}
	res, err := s.readResource(x, r, modeUpdate, id)
	if err != nil {
		return nil, err
	}
	updated, found := x.ns.store.update(res)
	if !found {
		return nil, errorf(http.StatusNotFound, "No resource has the id %s.", id)
	}
	x.answer = madeAnswer{updated: updated}
	return &x.answer, nil
}

// List query parameters, matched case-insensitively.
const (
	paramFilters  = "requestParams.filters"
	paramPage     = "requestParams.page"
	paramPageSize = "requestParams.pageSize"
	paramSorts    = "requestParams.sorts"
)

// listParams are the parameters the list reads; it ignores others.
var listParams = [...]string{paramFilters, paramPage, paramPageSize, paramSorts}

func (s *Server) list(x *exchange, r *http.Request) (any, error) {
	q, pageSize, err := s.parseListQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	total, page := x.ns.store.list(q)
	x.answer = madeAnswer{page: page, total: total, pages: (total + pageSize - 1) / pageSize, pageNo: q.Page}
	return &x.answer, nil
}

// parseListQuery reads the list parameters; it returns the page size in
// effect after clamping.
func (s *Server) parseListQuery(rawQuery string) (listQuery, int, error) {
	// Split by hand, not with url.ParseQuery: that rejects ';', which
	// ASP.NET reads as an ordinary character (a filter value may hold one).
	// Names are matched in any case, and each value is kept in the order
	// sent: filters and sorts may be repeated (the vendor's client sends a
	// list so), a page or page size may not.
	var values [len(listParams)][]string
	for rest := rawQuery; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		var value string
		if err == nil {
			value, err = url.QueryUnescape(rawValue)
		}
		if err != nil {
			return listQuery{}, 0, errorf(http.StatusBadRequest, "The query string is malformed: %v.", err)
		}
		for i, known := range listParams {
			if strings.EqualFold(name, known) {
				values[i] = append(values[i], value)
			}
		}
	}
	q := listQuery{Page: 1, PageSize: defaultPageSize}
	ms := modelState{}
	dialect := filterDialect(s.cfg.Filters)
	for i, name := range listParams {
		vals := values[i]
		if len(vals) == 0 {
			continue
		}
		var err error
		switch text := vals[0]; {
		case name == paramFilters && len(vals) > 1:
			var errs []filtersError
			q.Filter, errs = parseFilters(vals, dialect)
			for _, e := range errs {
				if e.index < 0 {
					ms.add(name, e.err.Error())
				} else {
					key := fmt.Sprintf("%s[%d]", name, e.index)
					ms.add(key, key+": "+e.err.Error())
				}
			}
		case name == paramFilters:
			q.Filter, err = parseFilter(text, dialect)
		case len(vals) > 1 && name != paramSorts:
			err = fmt.Errorf("%s is given %d times; send it once.", name, len(vals))
		case name == paramPage:
			q.Page, err = parsePositive(name, text)
		case name == paramPageSize:
			q.PageSize, err = parsePositive(name, text)
		case name == paramSorts:
			// Repeated sorts apply in the order sent, as one joined by ~.
			q.Sorts, err = parseSorts(joinNonBlank(vals, "~"), dialect)
		}
		if err != nil {
			ms.add(name, err.Error())
		}
	}
	q.PageSize = min(q.PageSize, s.cfg.MaxPageSize)
	if ms.empty() {
		return q, q.PageSize, nil
	}
	ae := invalid(ms)
	if len(ms.order) == 1 {
		ae.Message = ms.props[ms.order[0]][0]
	}
	return listQuery{}, 0, ae
}

// parsePositive reads a page number or size as ASP.NET's int binding does:
// plain decimal digits only, as it refuses "+3" and " 2 ".
func parsePositive(name, text string) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || !allDigits(text) {
		return 0, fmt.Errorf("%s must be an integer of at least 1, not %q.", name, text)
	}
	return n, nil
}

// joinNonBlank joins the values that are not empty or only spaces.
func joinNonBlank(values []string, sep string) string {
	var kept []string
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			kept = append(kept, v)
		}
	}
	return strings.Join(kept, sep)
}

// ignoredListParams are the names in a list's query that the list ignores,
// each to the closest one it reads, so that a typo shows in the journal
// (requestParams.filter for requestParams.filters); nil when none.
func ignoredListParams(rawQuery string) map[string]string {
	var ignored map[string]string
	for pair := range strings.SplitSeq(rawQuery, "&") {
		rawName, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		if name == "" || slices.ContainsFunc(listParams[:], func(p string) bool { return strings.EqualFold(p, name) }) {
			continue
		}
		if ignored == nil {
			ignored = map[string]string{}
		}
		ignored[name], _ = ClosestName(name, listParams[:])
	}
	return ignored
}
