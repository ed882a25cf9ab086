package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/resourcedir/resourcedir"
)

// import reads a real directory into a seed file, so that a team can run
// resourcedir on data shaped like its tenant's. It only ever sends
// GET /api/v2/resource: it must be safe to point at production.

// fromAuthEnv holds -auth for import and compare, so that the token stays
// out of shell history and process lists.
const fromAuthEnv = "RESOURCEDIR_FROM_AUTH"

// importPageSize is the real service's usual largest page.
const importPageSize = 500

// directoryReader sends list queries to a directory, paced, with Basic
// credentials it never shows.
type directoryReader struct {
	base     string // scheme://host[/prefix], no trailing slash
	auth     string // user:token, or ""
	client   *http.Client
	interval time.Duration // between requests; 0 unpaced
	last     time.Time     // when the last request was sent
}

// newDirectoryReader checks the -from URL and -rate of import and compare.
func newDirectoryReader(from, auth string, rate float64) (*directoryReader, error) {
	u, err := url.Parse(from)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("-from must be the directory's base URL, such as https://tenant.example.com, not %q", from)
	case u.User != nil:
		return nil, fmt.Errorf("-from must not carry credentials: give them with -auth or %s", fromAuthEnv)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("-from must be a base URL without a query or fragment")
	case auth != "" && !strings.Contains(auth, ":"):
		return nil, fmt.Errorf("-auth (or %s) must be user:token", fromAuthEnv)
	case rate < 0:
		return nil, fmt.Errorf("-rate must be 0 (unpaced) or more requests per second, not %v", rate)
	}
	d := &directoryReader{
		base:   strings.TrimRight(u.String(), "/"),
		auth:   auth,
		client: &http.Client{Timeout: 60 * time.Second},
	}
	if rate > 0 {
		d.interval = time.Duration(float64(time.Second) / rate)
	}
	return d, nil
}

// pace waits until the next request may go: never before the first, nor
// when unpaced (interval 0).
func (d *directoryReader) pace(ctx context.Context) error {
	if wait := time.Until(d.last.Add(d.interval)); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	d.last = time.Now()
	return nil
}

// list sends GET /api/v2/resource?query and returns the status and body.
// A transport failure is an error; an HTTP status is not.
func (d *directoryReader) list(ctx context.Context, query string) (int, []byte, error) {
	return d.get(ctx, "/api/v2/resource", query)
}

// get sends GET path?query, as list does.
func (d *directoryReader) get(ctx context.Context, path, query string) (int, []byte, error) {
	if err := d.pace(ctx); err != nil {
		return 0, nil, err
	}
	target := d.base + path
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s: %w", target, err)
	}
	req.Header.Set("Accept", "application/json")
	if user, token, ok := strings.Cut(d.auth, ":"); ok {
		req.SetBasicAuth(user, token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s: reading the answer: %w", target, err)
	}
	return resp.StatusCode, body, nil
}

// readAll reads every resource, page by page in the service's order.
func (d *directoryReader) readAll(ctx context.Context, progress io.Writer) ([]map[string]json.RawMessage, error) {
	var all []map[string]json.RawMessage
	seen := map[string]bool{}
	dups := 0
	for page := 1; ; page++ {
		query := "requestParams.page=" + strconv.Itoa(page) + "&requestParams.pageSize=" + strconv.Itoa(importPageSize)
		status, body, err := d.list(ctx, query)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s/api/v2/resource?%s: status %d%s: %.300s", d.base, query, status, importStatusHints[status], body)
		}
		var p struct {
			TotalResults int
			TotalPages   int
			ResourceList []map[string]json.RawMessage
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, fmt.Errorf("page %d is not a list answer ({\"TotalResults\", \"TotalPages\", \"ResourceList\"}): %w", page, err)
		}
		for _, item := range p.ResourceList {
			var id string
			if raw, ok := item["Id"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
				return nil, fmt.Errorf("page %d holds a resource without an Id", page)
			}
			// A resource created while reading shifts the pages: it may come
			// twice, and the first place it was seen is kept.
			if seen[strings.ToLower(id)] {
				dups++
				continue
			}
			seen[strings.ToLower(id)] = true
			all = append(all, item)
		}
		if page == 1 && p.TotalResults == 0 && len(p.ResourceList) == 0 {
			fmt.Fprintln(progress, "import: the directory holds no resources")
			return all, nil
		}
		fmt.Fprintf(progress, "\rimport: page %d of %d, %d of %d resources", page, p.TotalPages, len(all), p.TotalResults)
		if page >= p.TotalPages {
			break
		}
		if len(p.ResourceList) == 0 {
			fmt.Fprintln(progress)
			return nil, fmt.Errorf("page %d is empty but TotalPages is %d: the directory changed while it was read; run import again", page, p.TotalPages)
		}
	}
	fmt.Fprintln(progress)
	if dups > 0 {
		fmt.Fprintf(progress, "import: %d resources came twice (the directory changed while it was read); each is kept once\n", dups)
	}
	return all, nil
}

// importStatusHints say what to check when the directory refuses a page.
var importStatusHints = map[int]string{
	http.StatusUnauthorized:    " (check -auth or " + fromAuthEnv + ")",
	http.StatusForbidden:       " (check -auth or " + fromAuthEnv + ")",
	http.StatusNotFound:        " (is -from the base URL, without /api/v2/resource?)",
	http.StatusTooManyRequests: " (lower -rate)",
}

// importType is a Types entry as a seed carries it: no _links, _embedded.
type importType struct {
	ID   int `json:"Id"`
	Type string
}

// importSeedItem turns a list item into a seed item: the resource's properties
// but the derived StatusId, in order, Types as {"Id", "Type"}, values as the
// service sent them, personal ones scrubbed when s is not nil.
func importSeedItem(item map[string]json.RawMessage, s *scrubber) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, p := range resourcedir.Properties() {
		prop := p.Name
		raw, ok := importLookup(item, prop)
		if !ok || p.Derived {
			continue
		}
		if prop == "Types" {
			var types []importType
			if err := json.Unmarshal(raw, &types); err != nil {
				return nil, fmt.Errorf("Types: %w", err)
			}
			// [] for null too; ints and strings: Marshal cannot fail.
			raw, _ = json.Marshal(append([]importType{}, types...))
		} else if s != nil && p.Personal {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s: %w", prop, err)
			}
			var err error
			if raw, err = marshalText(s.value(v)); err != nil {
				return nil, fmt.Errorf("%s: %w", prop, err)
			}
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(prop))
		b.WriteByte(':')
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("%s: %w", prop, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func importLookup(item map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if raw, ok := item[name]; ok {
		return raw, true
	}
	for k, raw := range item {
		if strings.EqualFold(k, name) {
			return raw, true
		}
	}
	return nil, false
}

// importSeedFile writes items as a seed file, one a line as generate
// writes them, so that a diff reads well.
func importSeedFile(items []map[string]json.RawMessage, s *scrubber) ([]byte, error) {
	b := []byte{'['}
	for i, item := range items {
		line, err := importSeedItem(item, s)
		if err != nil {
			return nil, fmt.Errorf("resource %d: %w", i+1, err)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, '\n'), line...)
	}
	return append(b, "\n]\n"...), nil
}

// marshalText is json.Marshal without HTML escaping: & stays &, as a seed
// file's names have it.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// scrubber replaces personal values with made-up ones of the same shape:
// each word becomes another of the same length and letter case, digits
// staying digits, and the rest is kept, so an e-mail stays an e-mail and
// length limits still hold. A word's replacement is a keyed hash of it in
// lower case: the same in every property and case within a run (DisplayName
// stays FirstName and Surname joined), while the key, new for each run,
// keeps the originals from being guessed.
type scrubber struct{ key []byte }

func newScrubber() *scrubber {
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand crashes the program first
	return &scrubber{key: key}
}

// value scrubs the strings and numbers (an Address's house number) of a
// decoded JSON value, at any depth; null, booleans and keys are kept.
func (s *scrubber) value(v any) any {
	switch v := v.(type) {
	case string:
		return s.text(v)
	case float64:
		return s.number(v)
	case map[string]any:
		for k, x := range v {
			v[k] = s.value(x)
		}
	case []any:
		for i, x := range v {
			v[i] = s.value(x)
		}
	}
	return v
}

func (s *scrubber) number(f float64) any {
	out := []rune(s.text(strconv.FormatFloat(f, 'f', -1, 64)))
	if len(out) > 1 && out[0] == '0' && out[1] != '.' {
		out[0] = '1' // a number does not start with 0
	}
	n, err := strconv.ParseFloat(string(out), 64)
	if err != nil {
		return f
	}
	return n
}

// scrubWord is a word: a run of letters and digits (unicode.IsDigit's).
var scrubWord = regexp.MustCompile(`[\pL\p{Nd}]+`)

func (s *scrubber) text(v string) string { return scrubWord.ReplaceAllStringFunc(v, s.word) }

func (s *scrubber) word(w string) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(strings.ToLower(w)))
	rng := mrand.New(mrand.NewChaCha8([32]byte(mac.Sum(nil))))
	var b strings.Builder
	for _, r := range w {
		switch {
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + rng.IntN(10)))
		case unicode.IsUpper(r):
			b.WriteByte(byte('A' + rng.IntN(26)))
		default:
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	return b.String()
}

// fromFlags defines the flags import and compare share; its function, once
// they are parsed, makes the reader of the -from directory.
func fromFlags(fs *flag.FlagSet) func(environ []string) (*directoryReader, error) {
	from := fs.String("from", "", "the directory's base `URL` (https://tenant.example.com); only GET /api/v2/resource is sent to it")
	auth := fs.String("auth", "", "`user:token` sent as HTTP Basic credentials; also "+fromAuthEnv+", which keeps it out of shell history")
	rate := fs.Float64("rate", 4, "at most this many `requests` a second; 0 sends them as fast as they are answered")
	return func(environ []string) (*directoryReader, error) {
		if *from == "" {
			return nil, errors.New("-from is required: the directory's base URL")
		}
		return newDirectoryReader(*from, cmp.Or(*auth, environMap(environ)[fromAuthEnv]), *rate)
	}
}

// runImport is resourcedir import: see its usage.
func runImport(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newSubcommand("import", "usage: resourcedir import -from URL [-auth user:token] [-scrub] [-o FILE] [-rate R]\n\n"+
		"Reads a directory through GET /api/v2/resource, page by page, into a seed file with its Ids in the\n"+
		"service's order. Without -scrub the file holds the directory's personal data.")
	reader := fromFlags(fs)
	scrub := fs.Bool("scrub", false, "replace personal values (names, e-mail, phones, address) with made-up ones of the same shape")
	out := fs.String("o", "", "write the seed file to `file` (atomically) instead of standard output")
	if err := parseSubcommand(fs, args, 0, stderr); err != nil {
		return fmt.Errorf("import: %w", err) // flag.ErrHelp included: Main tells it by errors.Is
	}
	d, err := reader(environ)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	items, err := d.readAll(ctx, stderr)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	var s *scrubber
	if *scrub {
		s = newScrubber()
	}
	file, err := importSeedFile(items, s)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if *out == "" {
		if _, err := stdout.Write(file); err != nil {
			return fmt.Errorf("import: write: %w", err)
		}
		return nil
	}
	// The snapshot's atomic write: the file is never seen half written, and
	// it is readable by its owner only, as it may hold personal data.
	if err := resourcedir.WriteFileAtomic(*out, file, 0o600); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	fmt.Fprintf(stderr, "import: wrote %d resources to %s\n", len(items), *out)
	return nil
}
