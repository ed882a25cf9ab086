package resourcedir

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// consoleFiles is the console page and its assets: plain files, no build
// step, so that the binary serves them with no network.
//
//go:embed console
var consoleFiles embed.FS

// consoleAssetPrefix is where the page's script and style sheet are served.
// The page names them by absolute path, so that the same page served under
// /ns/{name}/ loads the same assets.
const consoleAssetPrefix = "/__admin/console/"

// consoleAsset is one embedded file with what its response needs.
type consoleAsset struct {
	body        []byte
	contentType string
	version     string // a prefix of the content hash: its ETag, and put in the page's asset URLs
}

// consoleAssets are the files under console/ by name, read once.
// index.html is only the template of consolePages.
var consoleAssets = func() map[string]*consoleAsset {
	types := map[string]string{
		".html": "text/html; charset=utf-8",
		".js":   "text/javascript; charset=utf-8",
		".css":  "text/css; charset=utf-8",
	}
	assets := map[string]*consoleAsset{}
	entries, _ := fs.ReadDir(consoleFiles, "console") // embedded: cannot fail at run time
	for _, e := range entries {
		body, _ := consoleFiles.ReadFile("console/" + e.Name())
		assets[e.Name()] = newConsoleAsset(body, types[path.Ext(e.Name())])
	}
	return assets
}()

// newConsoleAsset is body named by its content hash (its URL and ETag).
func newConsoleAsset(body []byte, contentType string) *consoleAsset {
	sum := sha256.Sum256(body)
	version := hex.EncodeToString(sum[:])[:12]
	return &consoleAsset{body: body, contentType: contentType, version: version}
}

// consolePages is the page for each filter dialect, whose filter help says
// what it accepts. Asset URLs carry the asset's hash (console.js?v=…), so a
// browser may keep an asset for good yet never run an old one on a new server.
var consolePages = func() map[filterDialect]*consoleAsset {
	page := consoleAssets["index.html"]
	fills := consolePageFills()
	for name, a := range consoleAssets {
		fills = append(fills, consoleAssetPrefix+name+`"`, consoleAssetPrefix+name+"?v="+a.version+`"`)
	}
	help := map[filterDialect]string{
		dialectAssetic: "The real service's filters: <code>Field~op~'value'</code> with <code>eq neq lt lte gt gte startswith endswith contains doesnotcontain</code> (or <code>= &lt; &lt;= &gt; &gt;=</code>), joined all by <code>~and~</code> or all by <code>~or~</code>; parentheses allowed. Press Enter or pause to apply.",
		dialectKendo:   "Kendo filter syntax (<code>-filters kendo</code>): <code>Field~op~'value'</code>, unary operators such as <code>Fax~isnull</code>, joined by <code>~and~</code>, <code>~or~</code>; parentheses group. Press Enter or pause to apply.",
	}
	pages := map[filterDialect]*consoleAsset{}
	for d, text := range help {
		body := strings.NewReplacer(slices.Concat(fills, []string{consoleFilterHelp, text})...).Replace(string(page.body))
		pages[d] = newConsoleAsset([]byte(body), page.contentType)
	}
	return pages
}()

// consoleFilterHelp is the filter help as index.html has it, replaced by
// the dialect's.
const consoleFilterHelp = "Kendo filter syntax: <code>Field~op~'value'</code> joined by <code>~and~</code>, <code>~or~</code>; parentheses group. Press Enter or pause to apply."

// consolePolicy keeps the page to its own origin: no inline script, no
// third-party fetch, no framing (a page cannot click the Reset button for
// someone).
const consolePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handleConsolePage and handleConsoleAsset write their own answer (a file,
// with its caching headers and conditional requests) and return no value.
func (s *Server) handleConsolePage(x *exchange, r *http.Request) (any, error) {
	h := x.Header()
	h.Set("Content-Security-Policy", consolePolicy)
	h.Set("Referrer-Policy", "no-referrer")
	// The page names its assets by version, so revalidating the page alone
	// is enough to pick up a new build.
	serveAsset(x, r, consolePages[filterDialect(s.cfg.Filters)], "no-cache")
	return nil, nil
}

func (s *Server) handleConsoleAsset(x *exchange, r *http.Request) (any, error) {
	name := r.PathValue("file")
	a, ok := consoleAssets[name]
	if !ok || name == "index.html" {
		return nil, errNoRoute(x.path)
	}
	cache := "no-cache"
	if r.URL.Query().Get("v") == a.version {
		cache = "public, max-age=31536000, immutable"
	}
	serveAsset(x, r, a, cache)
	return nil, nil
}

// serveAsset answers with a's body, or 304 when the client has it already.
func serveAsset(w http.ResponseWriter, r *http.Request, a *consoleAsset, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", `"`+a.version+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", cacheControl)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// consoleAssetNames lists the embedded assets the page loads, sorted.
func consoleAssetNames() []string {
	names := slices.Sorted(maps.Keys(consoleAssets))
	return slices.DeleteFunc(names, func(name string) bool { return strings.HasSuffix(name, ".html") })
}

// Where index.html has what consolePageFills writes.
const (
	consoleColumns    = "<!-- resource columns -->"    // the list's columns, for console.js
	consoleFormProps  = "<!-- resource form props -->" // the form's text fields in wire order, for console.js
	consoleForm       = "<!-- resource form -->"       // the form's fields
	consoleFaultKinds = "<!-- fault kinds -->"         // the fault form's Kind options
)

// consoleFieldLooks are the form's text fields that look other than plain:
// their class and extra attributes.
var consoleFieldLooks = map[string]struct{ class, attrs string }{
	"DisplayName":    {"field wide", ` placeholder="generated from the names when empty"`},
	"Email":          {"field", ` type="text"`},
	"AddressComment": {"field wide", ""},
}

// consoleStatusField and consoleTypesField are the form's fields of Status
// (a choice of the statuses) and Types (chips console.js adds, one for
// each requestor type the page names in data-types).
const (
	consoleStatusField = `<fieldset class="field status-field" id="f-Status">
            <legend>Status</legend>
            <div class="segmented">
              <label><input type="radio" name="Status" value="` + statusActive + `" checked><span>` + statusActive + `</span></label>
              <label><input type="radio" name="Status" value="` + statusInactive + `"><span>` + statusInactive + `</span></label>
            </div>
          </fieldset>`
	consoleTypesField = `<fieldset class="field wide types" id="f-Types">
            <legend>Types</legend>
            <div id="types-boxes" class="chips-input" data-types="%s"></div>
          </fieldset>`
)

// consolePageFills are index.html's placeholders, each followed by what the
// server writes there, so that the console offers the fault kinds (faultKinds)
// and shows the fields (propTable) and requestor types (requestorTypeTable)
// the server has, and no other. The list shows Types, a row of chips, last.
func consolePageFills() []string {
	var kinds, columns, props, form []string
	for _, k := range faultKindTable {
		kinds = append(kinds, fmt.Sprintf(`<option value="%s">%s</option>`, html.EscapeString(k.kind),
			html.EscapeString(k.kind+": "+k.does)))
	}
	for _, s := range propTable {
		if s.column && s.prop != propTypes {
			columns = append(columns, s.name)
		}
		if s.form > 0 && s.prop < prop(numStringFields) && s.prop != prop(fieldStatus) {
			props = append(props, s.name)
		}
	}
	if specOf[propTypes].column {
		columns = append(columns, specOf[propTypes].name)
	}
	for _, s := range slices.SortedFunc(slices.Values(propTable), func(a, b propSpec) int { return a.form - b.form }) {
		switch {
		case s.form == 0: // not in the form
		case s.prop == prop(fieldStatus):
			form = append(form, consoleStatusField)
		case s.prop == propTypes:
			form = append(form, fmt.Sprintf(consoleTypesField, html.EscapeString(strings.Join(requestorTypeNames, " "))))
		default:
			look, ok := consoleFieldLooks[s.name]
			if !ok {
				look.class = "field"
			}
			name := html.EscapeString(s.name)
			form = append(form, `<div class="`+look.class+`"><label for="f-`+name+`">`+name+`</label><input id="f-`+name+
				`" name="`+name+`" autocomplete="off"`+look.attrs+`></div>`)
		}
	}
	return []string{consoleFaultKinds, strings.Join(kinds, "\n            "),
		consoleColumns, strings.Join(columns, " "),
		consoleFormProps, strings.Join(props, " "),
		consoleForm, strings.Join(form, "\n          ")}
}
