package resourcedir

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConsoleFaultKinds: the console's fault form offers exactly the kinds
// the server takes, in faultKinds' order, each with what it does.
func TestConsoleFaultKinds(t *testing.T) {
	t.Parallel()
	rec := serve(consoleHandler(t), http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d", rec.Code)
	}
	page := rec.Body.String()
	start := strings.Index(page, `<select id="fault-Kind"`)
	if start < 0 {
		t.Fatal("the page has no fault-Kind select")
	}
	form := page[start : start+strings.Index(page[start:], "</select>")]
	var kinds []string
	for _, m := range regexp.MustCompile(`<option value="([^"]*)">([^<]*)</option>`).FindAllStringSubmatch(form, -1) {
		kinds = append(kinds, m[1])
		if !strings.HasPrefix(m[2], m[1]+": ") {
			t.Errorf("the option %s reads %q, not what the kind does", m[1], m[2])
		}
	}
	if !slices.Equal(kinds, faultKinds) {
		t.Errorf("the form offers %v, the server takes %v", kinds, faultKinds)
	}
	if strings.Contains(page, consoleFaultKinds) {
		t.Error("the page still has the placeholder for the kinds")
	}
}

// TestConsoleRequestorTypes: the page names the requestor types the server
// has, in requestorTypeTable's order, and console.js takes them from there
// rather than naming any itself.
func TestConsoleRequestorTypes(t *testing.T) {
	t.Parallel()
	page := serve(consoleHandler(t), http.MethodGet, "/", nil).Body.String()
	m := regexp.MustCompile(`<div id="types-boxes"[^>]* data-types="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page's types-boxes has no data-types")
	}
	var want []string
	for _, rt := range requestorTypeTable {
		want = append(want, rt.name)
	}
	if got := strings.Split(m[1], " "); !slices.Equal(got, want) {
		t.Errorf("the page names the types %v, the server has %v", got, want)
	}
	script := string(consoleAssets["console.js"].body)
	for _, name := range want {
		if strings.Contains(script, "'"+name+"'") { // console.js quotes its strings with '
			t.Errorf("console.js names the requestor type %s itself", name)
		}
	}
}
