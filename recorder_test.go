package resourcedir

import "testing"

// TestExchangeSettle: what the journal and the log show of each way a
// request can end, as Status (did) and Delivered (got).
func TestExchangeSettle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		code        int
		wroteHeader bool
		faultID     int
		did         int // set before the request is recorded: an After fault, a client gone
		answered    bool
		wantDid     int
		wantGot     int
	}{
		{"answered", 201, true, 0, 0, true, 201, 201},
		{"handler wrote nothing: net/http's 200", 0, false, 0, 0, true, 200, 200},
		{"a fault's answer", 503, true, 4, 0, true, 503, 503},
		{"a fault closed without an answer", 0, false, 4, 0, false, 0, 0},
		{"a fault's 1xx, then the close", 103, true, 4, 0, false, 103, 0},
		{"a 1xx is no final answer", 103, true, 4, 0, true, 103, 0},
		{"the client left during a delay", 0, false, 4, statusClientClosed, true, statusClientClosed, 0},
		{"After: the handler's 201, the fault's 503", 503, true, 4, 201, true, 201, 503},
		{"After: the handler's 201, then a reset", 0, false, 4, 201, false, 201, 0},
		{"a panic after part of the answer", 500, true, 0, 0, false, 500, 0},
		{"aborted before any answer", 0, false, 0, 0, false, 200, 0},
	}
	for _, tt := range tests {
		x := &exchange{code: tt.code, wroteHeader: tt.wroteHeader, faultID: tt.faultID, did: tt.did}
		x.settle(tt.answered)
		if x.did != tt.wantDid || x.got != tt.wantGot {
			t.Errorf("%s: did %d, got %d; want %d, %d", tt.name, x.did, x.got, tt.wantDid, tt.wantGot)
		}
	}
}

// TestExchangeUnsilence: an After fault's handler answer is what the server
// did, and the fault's own answer starts with nothing written.
func TestExchangeUnsilence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code        int
		wroteHeader bool
		want        int
	}{{201, true, 201}, {0, false, 200}, {404, true, 404}} {
		x := &exchange{bytes: 17}
		x.silence()
		x.code, x.wroteHeader = tt.code, tt.wroteHeader
		x.unsilence()
		if x.did != tt.want || x.silenced != nil || x.code != 0 || x.wroteHeader || x.bytes != 0 {
			t.Errorf("handler's %d (header %v): did %d, silenced %v, code %d, header %v, bytes %d; want did %d and a fresh answer",
				tt.code, tt.wroteHeader, x.did, x.silenced != nil, x.code, x.wroteHeader, x.bytes, tt.want)
		}
	}
}
