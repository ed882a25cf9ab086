package main

// Tests of respond.go: reading bodies against their limits (413) and the
// answers given before a body is read.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apiPadded returns a create body of exactly n bytes.
func apiPadded(n int) string {
	const head, tail = `{"Company":"C","AddressComment":"`, `"}`
	return head + apiRep("x", n-len(head)-len(tail)) + tail
}

// TestBodyLimits sends bodies of exactly the limit and one byte over it,
// with a Content-Length and chunked, to every endpoint that reads a body,
// each against its own limit, and checks the 413's exact Message and that
// nothing over the limit is stored.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	for _, limit := range []int64{400, DefaultConfig().MaxBody} {
		t.Run("create and update at "+strconv.FormatInt(limit, 10), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxBody = limit
			a := startServer(t, cfg, nil).checkingEvery()
			n := int(limit)
			tooLarge := fmt.Sprintf("The request body is larger than the limit of %d bytes.", limit)

			a.on(t).create(apiPadded(n))
			if r := a.on(t).stream(http.MethodPost, "/api/v2/resource", chunked(apiPadded(n))); r.Status != http.StatusOK {
				t.Errorf("chunked body at the limit: %d %s", r.Status, r.Body)
			}
			a.on(t).do(http.MethodPost, "/api/v2/resource", apiPadded(n+1)).wantError(t, http.StatusRequestEntityTooLarge, tooLarge, nil)
			a.on(t).stream(http.MethodPost, "/api/v2/resource", chunked(apiPadded(n+1))).wantError(t, http.StatusRequestEntityTooLarge, tooLarge, nil)
			a.on(t).do(http.MethodPost, "/api/v2/resource", apiPadded(2*n)).wantError(t, http.StatusRequestEntityTooLarge, tooLarge, nil)
			if got := a.store.Len(); got != 2 {
				t.Errorf("the store has %d resources, want 2", got)
			}

			id, _ := a.on(t).create(`{"Company":"C"}`)
			put := putBody(id, "AddressComment", "")
			put = strings.Replace(put, `"AddressComment":""`, `"AddressComment":"`+apiRep("x", n+1-len(put))+`"`, 1)
			if len(put) != n+1 {
				t.Fatalf("PUT body of %d bytes, want %d", len(put), n+1)
			}
			a.on(t).do(http.MethodPut, "/api/v2/resource/"+id, put).wantError(t, http.StatusRequestEntityTooLarge, tooLarge, nil)
			a.on(t).stream(http.MethodPut, "/api/v2/resource/"+id, chunked(put)).wantError(t, http.StatusRequestEntityTooLarge, tooLarge, nil)
			atLimit := strings.Replace(put, `"x`, `"`, 1)
			if r := a.on(t).do(http.MethodPut, "/api/v2/resource/"+id, atLimit); r.Status != http.StatusOK {
				t.Errorf("PUT at the limit: %d %s", r.Status, r.Body)
			}
		})
	}

	cfg := DefaultConfig()
	cfg.MaxSeedBody = 256 << 10 // the default 64 MiB is tried below with a declared length only
	api := startServer(t, cfg, nil)
	ts, client := api.ts, api.client
	id, _ := api.create(`{"Company":"x"}`)

	send := func(what, method, path string, body []byte, chunked bool) (int, http.Header, []byte) {
		t.Helper()
		var rd io.Reader = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
		req, err := http.NewRequest(method, ts.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if chunked && req.ContentLength != 0 {
			req.ContentLength = -1
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}

	tests := []struct {
		name, method, path, doc string
		limit                   int64
	}{
		{"create", "POST", "/api/v2/resource", `{"Company":"x"}`, cfg.MaxBody},
		{"update", "PUT", "/api/v2/resource/" + id, putBody(id), cfg.MaxBody},
		{"seed", "POST", "/__admin/resources", `[{"Company":"x"}]`, cfg.MaxSeedBody},
		{"fault", "POST", "/__admin/faults", `{"Path":"/api/v2/resource/{id}","Status":503}`, cfg.MaxBody},
	}
	for _, tt := range tests {
		for _, chunked := range []bool{false, true} {
			what := fmt.Sprintf("%s (chunked %v)", tt.name, chunked)
			if status, _, body := send(what, tt.method, tt.path, padJSON(tt.doc, tt.limit), chunked); status != http.StatusOK {
				t.Errorf("%s: a body of exactly the limit, %d bytes: %d %.300s", what, tt.limit, status, body)
			}
			status, h, body := send(what, tt.method, tt.path, padJSON(tt.doc, tt.limit+1), chunked)
			if status != http.StatusRequestEntityTooLarge {
				t.Errorf("%s: a body one byte over the limit: %d %.300s", what, status, body)
			} else {
				e := checkErrorShape(t, what, h, body)
				if want := fmt.Sprintf("The request body is larger than the limit of %d bytes.", tt.limit); e.Message != want {
					t.Errorf("%s: the 413 Message is %q, want %q", what, e.Message, want)
				}
			}
			// Invalid JSON just under the limit is a 400, not a 413.
			if status, _, body := send(what, tt.method, tt.path, padJSON(tt.doc[:len(tt.doc)-1], tt.limit), chunked); status != http.StatusBadRequest {
				t.Errorf("%s: broken JSON of exactly the limit: %d %.300s, want 400", what, status, body)
			}
			api.health()
		}
	}

	// The seed limit is its own: a seed over MaxBody but under MaxSeedBody is
	// accepted.
	if status, _, body := send("seed over MaxBody", "POST", "/__admin/resources", padJSON(`[{"Company":"y"}]`, 200<<10), false); status != http.StatusOK {
		t.Errorf("a seed body between MaxBody and MaxSeedBody: %d %.300s", status, body)
	}

	// The default limits, with a declared Content-Length and only a little
	// of the body sent: the server gives the client up to discardTimeout to
	// send the rest (so that a client not waiting for 100 Continue reads the
	// 413 rather than a reset), never buffers it, and answers 413. The three
	// wait at once, in goroutines: rawExchange does not call t.Fatal. The journal is off here: it reads more of the body after
	// the handler (TestEarly413DoesNotWaitForTheBody).
	defCfg := DefaultConfig()
	defCfg.JournalSize = 0
	addr := serveProduction(t, NewServer(defCfg, NewStore(nil), nil), nil)
	type exchange struct {
		what string
		resp *http.Response
		body []byte
		err  error
	}
	targets := []struct {
		method, path string
		limit        int64
	}{
		{"POST", "/api/v2/resource", DefaultConfig().MaxBody},
		{"PUT", "/api/v2/resource/" + id, DefaultConfig().MaxBody},
		{"POST", "/__admin/resources", DefaultConfig().MaxSeedBody},
	}
	results := make(chan exchange, len(targets))
	for _, tt := range targets {
		go func() {
			head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", tt.method, tt.path, tt.limit+1)
			resp, body, err := rawExchange(t, addr, head, strings.NewReader(`{"Company":`))
			results <- exchange{fmt.Sprintf("%s %s with Content-Length %d", tt.method, tt.path, tt.limit+1), resp, body, err}
		}()
	}
	for range targets {
		x := <-results
		if x.err != nil {
			t.Errorf("%s: %v", x.what, x.err)
			continue
		}
		if x.resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d %.300s", x.what, x.resp.StatusCode, x.body)
			continue
		}
		checkErrorShape(t, x.what, x.resp.Header, x.body)
	}
	// A Content-Length of 2^63-1 and malformed ones.
	for _, cl := range []string{"9223372036854775807", "99999999999999999999", "-1", "1, 2"} {
		// No body is sent: a server that refuses the header closes the
		// connection, and unread bytes would turn that close into a reset.
		head := "POST /api/v2/resource HTTP/1.1\r\nHost: x\r\nContent-Length: " + cl + "\r\n\r\n"
		resp, body, err := rawExchange(t, addr, head, nil)
		if err != nil {
			t.Errorf("Content-Length %s: %v", cl, err)
			continue
		}
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("Content-Length %s: %d %.300s", cl, resp.StatusCode, body)
		}
	}
	if resp, body, err := rawExchange(t, addr, "GET /__admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v %s", resp, err, body)
	}
}

// TestEarly413DoesNotWaitForTheBody: with the journal on (the default), a
// request on /api/v2 that waits for 100 Continue and whose declared
// Content-Length is over the limit is answered 413 at once, though the
// client has sent almost none of the body, and the journal records each as
// a 413 with BodyTruncated. (The journal used to read up to 64 KiB more of
// the body after the handler, before the response was flushed, so such a
// client hung until it had sent 64 KiB or ReadTimeout passed.) A client
// that does not wait for 100 Continue has its body read and thrown away
// first (TestOversizedBodyIs413).
func TestEarly413DoesNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	srv := NewServer(DefaultConfig(), NewStore(nil), nil)
	addr := serveProduction(t, srv, nil)
	answered := 0
	for _, target := range []string{"POST /api/v2/resource", "PUT /api/v2/resource/00000000-0000-4000-8000-000000000000"} {
		for _, cl := range []int64{DefaultConfig().MaxBody + 1, 1<<63 - 1} {
			head := fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", target, cl)
			start := time.Now()
			resp, body, err := rawExchangeWithin(t, addr, head, strings.NewReader(`{"Company":`), 3*time.Second)
			if err != nil {
				t.Errorf("%s with Content-Length %d: no answer after %v: %v", target, cl, time.Since(start).Round(time.Millisecond), err)
				continue
			}
			answered++
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("%s with Content-Length %d: %d %.300s", target, cl, resp.StatusCode, body)
			}
		}
	}

	// Through net/http's client, with none of the body sent.
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v2/resource", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = DefaultConfig().MaxBody + 1
	req.Header.Set("Expect", "100-continue")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr := &http.Transport{ExpectContinueTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("no answer while the body is held back: %v", err)
	}
	resp.Body.Close()
	answered++
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}

	var got []wireEntry
	eventually(t, 10*time.Second, "every 413 in the journal", func() bool {
		got = journalEntries(t, srv)
		return len(got) >= answered
	})
	if len(got) != answered {
		t.Errorf("journal holds %d entries, want %d", len(got), answered)
	}
	for _, e := range got {
		if e.Status != http.StatusRequestEntityTooLarge || !e.BodyTruncated {
			t.Errorf("journal entry %+v, want a 413 with BodyTruncated", e)
		}
	}
}
