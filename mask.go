package resourcedir

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The journal is read by tests, consoles and whoever they show it to, so
// it shows no secret: the values of the headers and query parameters that
// secretName picks are masked (the README's journal section lists them).
// An empty value stays empty: it is no secret, and may be the bug.
var (
	// secretWords are names, or words of a name between '-', that carry a
	// credential: X-Auth, X-Auth-Key, X-Functions-Key, Authentication.
	secretWords = []string{"auth", "authentication", "key", "sig", "pwd"}
	// secretNameParts carry one wherever they are in a name: Cookie2,
	// X-Auth-Token, jsessionid, client_secret.
	secretNameParts = []string{"authoriz", "token", "secret", "password", "passwd", "apikey", "signature", "session",
		"cookie", "credential"}
	// notSecretNames are word-shaped like a credential but are none, and a
	// test checks what its client sent in them.
	notSecretNames = []string{"idempotency-key", "x-idempotency-key"}
)

// secretName reports whether a header or parameter name is credential-
// shaped: in lower case with '_' read as '-', one of its words is in
// secretWords, or it holds one of secretNameParts.
func secretName(name string) bool {
	name = strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if slices.ContainsFunc(secretNameParts, func(part string) bool { return strings.Contains(name, part) }) {
		return true
	}
	if slices.Contains(notSecretNames, name) {
		return false
	}
	for word := range strings.SplitSeq(name, "-") {
		if slices.Contains(secretWords, word) {
			return true
		}
	}
	return false
}

// maskHeaders returns h with secret values masked: credentials keep their
// scheme (maskCredential), the others are "***". The values that stay are
// h's own slices, which the caller must not change.
func maskHeaders(h http.Header) http.Header {
	out := make(http.Header, len(h)+1) // and Host
	for name, values := range h {
		if !secretName(name) {
			out[name] = values
			continue
		}
		credential := strings.Contains(strings.ToLower(name), "authorization")
		masked := make([]string, len(values))
		for i, v := range values {
			switch {
			case v == "":
			case credential:
				masked[i] = maskCredential(v)
			default:
				masked[i] = "***"
			}
		}
		out[name] = masked
	}
	return out
}

// maskCredential keeps an Authorization value's scheme, and of Basic the
// user name when a password follows it: a token sent as the user name
// (curl -u $TOKEN:) is the secret itself.
func maskCredential(v string) string {
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		return "***"
	}
	if strings.EqualFold(scheme, "Basic") {
		if plain, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
			if user, password, ok := strings.Cut(string(plain), ":"); ok && password != "" {
				return scheme + " " + user + ":***"
			}
		}
	}
	return scheme + " ***"
}

// maskPath masks by maskQuery's rule what follows a '?' (the path is decoded:
// a client that escaped its '?' as %3F sent its query in it) and a segment's
// ;name=value parameters (a servlet's ;jsessionid=). The pipeline masks the
// path once, before anything repeats it (begin, routedRequest), so that the
// answers, the journal and the log show the same text.
func maskPath(p string) string {
	path, query, hasQuery := strings.Cut(p, "?")
	if strings.Contains(path, ";") {
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if head, params, ok := strings.Cut(seg, ";"); ok {
				segs[i] = head + ";" + maskQuery(params)
			}
		}
		path = strings.Join(segs, "/")
	}
	if hasQuery {
		return path + "?" + maskQuery(query)
	}
	return path
}

// maskQuery returns a raw query with the values of secret parameters
// masked and the rest as sent. ';' separates as '&' does: url.ParseQuery
// drops a pair holding one, but Query would show it.
func maskQuery(raw string) string {
	var out []byte // nil until a value is masked
	done := 0      // raw[:done] is in out
	for start := 0; start < len(raw); {
		pair := raw[start:]
		if i := strings.IndexAny(pair, "&;"); i >= 0 {
			pair = pair[:i]
		}
		end := start + len(pair)
		name, value, ok := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if ok && value != "" && secretName(name) {
			out = append(out, raw[done:end-len(value)]...)
			out = append(out, "***"...)
			done = end
		}
		start = end + 1
	}
	if out == nil {
		return raw
	}
	return string(append(out, raw[done:]...))
}
