package main

// Limits: what one request may make the server hold (behaviour.md 6 and
// 11), measured on the built binary as the kernel counts it (VmHWM, the
// peak resident set), and the bounded error answers. Every top-level name
// here starts with lim.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// limBinaryEnv names a resourcedir binary to measure instead of building
// this one, to compare another commit's figures:
//
//	LIMITS_BINARY=/tmp/old/resourcedir go test -run TestLimitsMemory -v .
const limBinaryEnv = "LIMITS_BINARY"

// limLongEnv turns on the 64 MiB seed, the largest -max-seed-body allows
// by default; the normal run sends 8 MiB.
const limLongEnv = "RESOURCEDIR_LONG"

const limMiB = 1 << 20

// limBaseline is what an idle server holds, with room for the Go runtime's
// own arenas: an idle resourcedir peaks at about 12 MiB.
const limBaseline = 64 * limMiB

// What a request may hold beyond limBaseline, as a multiple of its body:
// the body itself and what reading it allocates in passing (the garbage
// collector lets the heap reach twice what is live before it collects).
// Today's figures are about 4x (1.5x for the creates); the code before the
// bounded answers needed 500x.
const limBodyFactor = 8

// limBinary is the binary measured: builtBinary's, or the one
// limBinaryEnv names.
func limBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(limBinaryEnv); bin != "" {
		return bin
	}
	return builtBinary(t)
}

// limProc is a running resourcedir with the measures of this file.
type limProc struct{ *binaryProc }

// limStart runs bin with snapshots off.
func limStart(t *testing.T, bin string, args ...string) *limProc {
	t.Helper()
	return &limProc{startBinary(t, bin, "", append([]string{"-snapshot", ""}, args...)...)}
}

// peak is the process's peak resident set so far, in bytes.
func (p *limProc) peak(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// send posts body as JSON and returns the status and the answer.
func (p *limProc) send(t *testing.T, method, path string, body []byte) (int, []byte) {
	t.Helper()
	status, answer, err := p.try(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, answer
}

// try is send for another goroutine than the test's.
func (p *limProc) try(method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, p.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s with %d bytes: %w", method, path, len(body), err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return resp.StatusCode, answer, nil
}

// resources is what GET /__admin/health counts.
func (p *limProc) resources(t *testing.T) int {
	t.Helper()
	status, body := p.send(t, http.MethodGet, "/__admin/health", nil)
	var h struct{ Resources int }
	if err := json.Unmarshal(body, &h); status != http.StatusOK || err != nil {
		t.Fatalf("health: %d %v %.300s", status, err, body)
	}
	return h.Resources
}

// limArray is a JSON array of copies of item, as many as fit in size bytes.
func limArray(item string, size int) ([]byte, int) {
	n := (size - 1) / (len(item) + 1)
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	return append(b, ']'), n
}

// limCheckProblems checks a bounded error answer: exactly the problems
// named by keys (each with one message), plus the "…" entry counting the
// rest, and nothing else.
func limCheckProblems(t *testing.T, what string, body []byte, message string, keys []string, rest int) {
	t.Helper()
	var e struct {
		Message    string
		ModelState map[string][]string
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: the answer is not the error shape: %v: %.300s", what, err, body)
	}
	if e.Message != message {
		t.Errorf("%s: Message %q, want %q", what, e.Message, message)
	}
	want := map[string]int{"…": 1}
	for _, k := range keys {
		want[k] = 1
	}
	var wrong []string
	for k, msgs := range e.ModelState {
		if want[k] != len(msgs) {
			wrong = append(wrong, k)
		}
	}
	if len(wrong) > 0 {
		slices.Sort(wrong)
		t.Errorf("%s: %d of %d ModelState entries are not the %d expected ones (or have another count of messages), such as %q",
			what, len(wrong), len(e.ModelState), len(want), wrong[:min(len(wrong), 5)])
	}
	for k := range want {
		if _, ok := e.ModelState[k]; !ok {
			t.Errorf("%s: ModelState lacks %q", what, k)
		}
	}
	if got, wantRest := e.ModelState["…"], fmt.Sprintf("and %d more problems", rest); len(got) != 1 || got[0] != wantRest {
		t.Errorf("%s: ModelState[\"…\"] = %q, want [%q]", what, got, wantRest)
	}
	if len(body) > 64<<10 {
		t.Errorf("%s: the answer is %d bytes; 100 problems need a few KiB", what, len(body))
	}
}

func limIndexed(format string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(format, i)
	}
	return keys
}

// TestLimitsMemory measures the peak resident memory of a fresh server for
// each request of the issue that once took gigabytes, against a bound of a
// small multiple of the request's body beyond an idle server. A body is
// held once as sent; reading it may add a few times its size in passing
// (the garbage collector lets the heap reach twice what is live); only
// what is stored stays.
func TestLimitsMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is read from Linux's /proc")
	}
	bin := limBinary(t)
	seedSize := 8 * limMiB
	if os.Getenv(limLongEnv) != "" {
		seedSize = 64 * limMiB
	}

	t.Run("seed of empty items", func(t *testing.T) {
		// Each {} lacks a Company: one problem per item.
		p := limStart(t, bin)
		body, n := limArray("{}", seedSize)
		status, answer, err := p.try(http.MethodPost, "/__admin/resources", body)
		limCheckPeak(t, fmt.Sprintf("a %d MiB seed of %d {} items", seedSize/limMiB, n), p.peak(t), limBodyFactor*int64(len(body)))
		if err != nil || status != http.StatusBadRequest {
			t.Fatalf("seed of %d {} items: %v %d %.300s", n, err, status, answer)
		}
		limCheckProblems(t, "seed of {} items", answer, "The seed is invalid; nothing was seeded.",
			limIndexed("[%d].Company", maxProblems), n-maxProblems)
		if got := p.resources(t); got != 0 {
			t.Errorf("after a refused seed the store holds %d resources", got)
		}
	})

	t.Run("32 creates with half a million bad Types each", func(t *testing.T) {
		p := limStart(t, bin)
		const concurrent = 32
		prefix, suffix := `{"Company":"Acme","Types":[`, `]}`
		entries := (limMiB - len(prefix) - len(suffix) + 1) / 2
		body := []byte(prefix + strings.Repeat("0,", entries)[:2*entries-1] + suffix)
		var wg sync.WaitGroup
		statuses := make([]int, concurrent)
		answers := make([][]byte, concurrent)
		errs := make([]error, concurrent)
		for i := range concurrent {
			wg.Go(func() { statuses[i], answers[i], errs[i] = p.try(http.MethodPost, "/api/v2/resource", body) })
		}
		wg.Wait()
		limCheckPeak(t, fmt.Sprintf("%d concurrent creates of %d bytes with %d bad Types each", concurrent, len(body), entries),
			p.peak(t), limBodyFactor*concurrent*int64(len(body)))
		for i := range concurrent {
			if errs[i] != nil || statuses[i] != http.StatusBadRequest {
				t.Fatalf("create %d with %d bad Types: %v %d %.300s", i, entries, errs[i], statuses[i], answers[i])
			}
			limCheckProblems(t, fmt.Sprintf("create %d", i), answers[i], "The request is invalid.",
				limIndexed("Types[%d].Type", maxProblems), entries-maxProblems)
		}
	})

	// A valid seed keeps its resources: the bound adds what the same
	// resources take in a Store here, two and a half times (the collector
	// lets the heap grow to twice what is live). Small items keep many
	// times their JSON: 8 MiB of them peak at about 360 MiB.
	type validSeed struct{ name, item string }
	seeds := []validSeed{{"valid seed", `{"FirstName":"Ada","Surname":"Lovelace","Company":"Analytical Engines","Email":"ada@example.com","Phone":"+44 20 7946 0000","Types":[{"Type":"Employee"}],"Address":{"Street":"12 St James's Square","City":"London"}}`}}
	if os.Getenv(limLongEnv) != "" {
		seeds = append(seeds, validSeed{"valid seed of small items", `{"Company":"x"}`})
	}
	for _, seed := range seeds {
		t.Run(seed.name, func(t *testing.T) {
			body, n := limArray(seed.item, 8*limMiB)
			kept := limKept(t, body)
			p := limStart(t, bin)
			status, answer, err := p.try(http.MethodPost, "/__admin/resources", body)
			limCheckPeak(t, fmt.Sprintf("a valid %d MiB seed of %d items, kept in %d MiB", len(body)/limMiB, n, kept/limMiB),
				p.peak(t), kept*5/2+limBodyFactor*int64(len(body)))
			if err != nil || status != http.StatusOK {
				t.Fatalf("valid seed of %d items: %v %d %.300s", n, err, status, answer)
			}
			var out struct {
				Total int
				Ids   []string
			}
			if err := json.Unmarshal(answer, &out); err != nil || out.Total != n || len(out.Ids) != n {
				t.Fatalf("valid seed of %d items: %v Total %d, %d Ids", n, err, out.Total, len(out.Ids))
			}
			if got := p.resources(t); got != n {
				t.Errorf("after the seed the store holds %d resources, want %d", got, n)
			}
		})
	}
}

// limKept is the live heap a Store holds once body is seeded into it.
func limKept(t *testing.T, body []byte) int64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store := NewStore(nil)
	resources, err := decodeSeed(body)
	if err == nil {
		err = store.Insert(resources)
	}
	if err != nil {
		t.Fatal(err)
	}
	resources = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(store)
	runtime.KeepAlive(body)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// limCheckPeak fails when peak is over limBaseline plus allowed.
func limCheckPeak(t *testing.T, what string, peak, allowed int64) {
	t.Helper()
	bound := limBaseline + allowed
	t.Logf("%s: peak resident %d MiB (bound %d MiB)", what, peak/limMiB, bound/limMiB)
	if peak > bound {
		t.Errorf("%s: peak resident memory %d MiB, over the bound of %d MiB", what, peak/limMiB, bound/limMiB)
	}
}
