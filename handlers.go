package resourcedir

import (
	"fmt"
	"net/http"
	"net/url"
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
		return nil, badRequest("The id in the path, %q, is not a GUID.", r.PathValue("id"))
	}
	res, err := s.readResource(x, r, modeUpdate, id)
	if err != nil {
		return nil, err
	}
	updated, found := x.ns.store.update(res)
	if !found {
		return nil, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("No resource has the id %s.", id)}
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
	// ASP.NET reads as an ordinary character (a filter value may hold one),
	// and its map would make the choice between one name in two cases
	// random. The first occurrence of a parameter counts, as in ASP.NET.
	listParams := [...]string{paramFilters, paramPage, paramPageSize, paramSorts}
	var values [len(listParams)]string
	var given [len(listParams)]bool
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
			return listQuery{}, 0, badRequest("The query string is malformed: %v.", err)
		}
		for i, known := range listParams {
			if !given[i] && strings.EqualFold(name, known) {
				values[i], given[i] = value, true
			}
		}
	}
	q := listQuery{Page: 1, PageSize: defaultPageSize}
	ms := modelState{}
	for i, name := range listParams {
		if !given[i] {
			continue
		}
		var err error
		switch text := values[i]; name {
		case paramFilters:
			q.Filter, err = parseFilter(text, filterDialect(s.cfg.Filters))
		case paramPage:
			q.Page, err = parsePositive(name, text)
		case paramPageSize:
			q.PageSize, err = parsePositive(name, text)
		case paramSorts:
			q.Sorts, err = parseSorts(text)
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
