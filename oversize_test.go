package main

// An oversized body over a real connection (behaviour.md 6): a client that
// sends it all before reading (as most HTTP libraries do) still reads the
// 413, and one that waits for 100 Continue gets the 413 without sending
// the body. Every top-level name here starts with over.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// overBody is 8 MiB, eight times the default create limit.
const overBody = 8 << 20

// overExchange writes head and then the whole body before it reads the
// answer, as a client that does not wait for 100 Continue does. A write
// that fails (the connection reset) is returned with the answer, if any.
func overExchange(t *testing.T, addr, head string, body io.Reader) (resp *http.Response, answer []byte, writeErr, readErr error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck // a fresh conn
	if _, writeErr = io.WriteString(conn, head); writeErr == nil && body != nil {
		_, writeErr = io.Copy(conn, body)
	}
	resp, readErr = http.ReadResponse(bufio.NewReader(conn), nil)
	if readErr != nil {
		return nil, nil, writeErr, readErr
	}
	defer resp.Body.Close()
	answer, readErr = io.ReadAll(resp.Body)
	return resp, answer, writeErr, readErr
}

// overCheck413 checks the 413 in the error shape, with the connection
// closed after it.
func overCheck413(t *testing.T, what string, resp *http.Response, answer []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("%s: %d %.300s, want 413", what, resp.StatusCode, answer)
	}
	e := checkErrorShape(t, what, resp.Header, answer)
	if want := fmt.Sprintf("limit of %d bytes", DefaultConfig().MaxBody); !strings.Contains(e.Message, want) {
		t.Errorf("%s: Message %q does not give the %s", what, e.Message, want)
	}
	if !resp.Close {
		t.Errorf("%s: the connection is kept open after a 413 whose body was not read", what)
	}
}

func TestOversizeBodySentWhole(t *testing.T) {
	addr := serveProduction(t, NewServer(DefaultConfig(), NewStore(nil), nil), nil)
	body := func() io.Reader { return strings.NewReader(`{"Company":"` + strings.Repeat("x", overBody) + `"}`) }
	n := overBody + len(`{"Company":""}`)
	for _, tt := range []struct{ what, head string }{
		{"Content-Length", fmt.Sprintf("POST /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", n)},
		{"Content-Length, PUT", fmt.Sprintf("PUT /api/v2/resource/00000000-0000-4000-8000-000000000001 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", n)},
	} {
		resp, answer, writeErr, readErr := overExchange(t, addr, tt.head, body())
		if writeErr != nil || readErr != nil {
			t.Fatalf("%s: %d bytes sent whole: write %v, read %v: the connection was cut instead of answered", tt.what, n, writeErr, readErr)
		}
		overCheck413(t, tt.what, resp, answer)
	}

	// Chunked: the length is learnt only by reading.
	chunked := &strings.Builder{}
	for range overBody / (64 << 10) {
		fmt.Fprintf(chunked, "%x\r\n%s\r\n", 64<<10, strings.Repeat("x", 64<<10))
	}
	chunked.WriteString("0\r\n\r\n")
	resp, answer, writeErr, readErr := overExchange(t, addr,
		"POST /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
		strings.NewReader(chunked.String()))
	if writeErr != nil || readErr != nil {
		t.Fatalf("chunked: 8 MiB sent whole: write %v, read %v", writeErr, readErr)
	}
	overCheck413(t, "chunked", resp, answer)
	clientAt(t, "http://"+addr).health() // still serving after the oversized bodies
}

// TestOversizeExpectContinue: the 413 comes at once, though the client
// sends nothing of its body: a server that waited for it would hang here
// until the deadline.
func TestOversizeExpectContinue(t *testing.T) {
	addr := serveProduction(t, NewServer(DefaultConfig(), NewStore(nil), nil), nil)
	head := fmt.Sprintf("POST /api/v2/resource HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", overBody)
	resp, answer, err := rawExchangeWithin(t, addr, head, nil, 10*time.Second)
	if err != nil {
		t.Fatalf("Expect: 100-continue with Content-Length %d and no body sent: %v", overBody, err)
	}
	// http.ReadResponse returns a 100 Continue as the response: the server
	// must not invite a body it will refuse.
	overCheck413(t, "Expect: 100-continue", resp, answer)
}
