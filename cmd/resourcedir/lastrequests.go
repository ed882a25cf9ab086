package main

// What a failed resourcedir -- COMMAND leaves on standard error: the last
// requests the server saw, read from its own admin API.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits of writeLastRequests: enough to see what a failed suite sent last,
// not a log of the whole run.
const (
	lastRequestsPerNamespace = 10
	lastRequestsNamespaces   = 20
)

// writeLastRequests writes to w, whatever the log level, the last requests
// (method, path, status, what the client got) of each namespace that
// received any, read through h, the server's handler: in the process, so
// neither -tls nor a network is in the way. auth is -auth's user:token;
// served is the URL for the console's address; why heads the text.
func writeLastRequests(w io.Writer, h http.Handler, auth, served, why string) {
	get := func(path string, v any) error {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
		if err != nil {
			return err
		}
		req.RemoteAddr = "127.0.0.1:1"
		if user, token, ok := strings.Cut(auth, ":"); ok {
			req.SetBasicAuth(user, token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET %s: %d %s", path, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
		return json.Unmarshal(rec.Body.Bytes(), v)
	}
	var list struct {
		Namespaces []struct {
			Name        string
			LastRequest *time.Time
		}
	}
	if err := get("/__admin/namespaces", &list); err != nil {
		fmt.Fprintf(w, "resourcedir: %s; its requests cannot be read: %v\n", why, err)
		return
	}
	// LastRequest is set by admin requests too (this reading's included):
	// a namespace counts when its journal holds /api/v2 requests.
	var spaces []lastSpace
	journalOff := false
	for _, ns := range list.Namespaces {
		if ns.LastRequest == nil {
			continue
		}
		prefix := "/ns/" + url.PathEscape(ns.Name)
		if ns.Name == "default" {
			prefix = ""
		}
		var journal struct {
			Requests []lastEntry
			Journal  string
		}
		if err := get(prefix+fmt.Sprintf("/__admin/requests?limit=%d", lastRequestsPerNamespace), &journal); err != nil {
			continue // removed since the listing: no longer exists
		}
		journalOff = journal.Journal == "off"
		if len(journal.Requests) > 0 {
			spaces = append(spaces, lastSpace{ns.Name, prefix, journal.Requests})
		}
	}
	switch {
	case journalOff:
		fmt.Fprintf(w, "resourcedir: %s; its requests are not shown: the journal is off (-journal-size 0)\n", why)
		return
	case len(spaces) == 0:
		fmt.Fprintf(w, "resourcedir: %s; no namespace received requests\n", why)
		return
	}
	io.WriteString(w, formatLastRequests(why, served, spaces)) //nolint:errcheck // standard error: nowhere else to say it
}

// lastEntry is what the dump shows of a journal entry.
type lastEntry struct {
	Method, Path, Query string
	Status, Delivered   int
}

// lastSpace is a namespace's part of the dump: its name, its path prefix
// and its last requests.
type lastSpace struct {
	name, prefix string
	requests     []lastEntry
}

// formatLastRequests writes the dump: each namespace under its console
// link, each request as method, path, the server's status and what the
// client got; past lastRequestsNamespaces, a count.
func formatLastRequests(why, served string, spaces []lastSpace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resourcedir: %s; the last requests (at most %d) of each namespace that received any:\n", why, lastRequestsPerNamespace)
	for i, ns := range spaces {
		if i == lastRequestsNamespaces {
			fmt.Fprintf(&b, "... and %d more namespaces (GET %s/__admin/namespaces lists them)\n", len(spaces)-i, served)
			break
		}
		fmt.Fprintf(&b, "namespace %s, console %s%s/:\n", ns.name, served, ns.prefix)
		for _, e := range ns.requests {
			target := e.Path
			if e.Query != "" {
				target += "?" + e.Query
			}
			got := fmt.Sprintf("client got %d", e.Delivered)
			if e.Delivered == 0 {
				got = "client got no answer"
			}
			status := strconv.Itoa(e.Status)
			if e.Status == 0 {
				status = "-" // a fault sent nothing of its own
			}
			fmt.Fprintf(&b, "  %s %s %s (%s)\n", e.Method, target, status, got)
		}
	}
	return b.String()
}
