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
