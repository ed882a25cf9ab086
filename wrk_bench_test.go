package resourcedir

// Named after no source file: benchmarks of the built binary under wrk.

// BenchmarkWrk measures resourcedir as users run it: the built binary with
// its default flags (request logging on, to a file; the journal on; the
// snapshot written every 10s when something changed), driven by wrk from its own process over
// loopback, beside a bare net/http program answering the same bytes, in the
// same run. It needs wrk (Debian: apt-get install wrk) and skips without it:
//
//	go test -run '^$' -bench '^BenchmarkWrk$' -benchtime 1x .
//	go test -run '^$' -bench '^BenchmarkWrk$' -benchtime 1x -wrk.rounds 5 -wrk.duration 5s .
//
// The bare server is a second small program, not a handler inside the
// benchmark process: like resourcedir it then has a runtime, a GOMAXPROCS
// and a garbage collector of its own, and shares nothing with the go test
// process but the machine.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	wrkRounds   = flag.Int("wrk.rounds", 3, "BenchmarkWrk: rounds per operation, each one wrk run against the server and one against the bare server")
	wrkDuration = flag.Duration("wrk.duration", 5*time.Second, "BenchmarkWrk: length of each wrk run")
	wrkOps      = flag.String("wrk.ops", "list-eq,create", "BenchmarkWrk: the operations to run, comma-separated")
	wrkFlags    = flag.String("wrk.flags", "", "BenchmarkWrk: more flags for resourcedir, space-separated, for experiments (the README's figures use none)")
	wrkPerf     = flag.String("wrk.perf", "", "BenchmarkWrk: record a perf CPU profile of the server during its wrk runs into this `file`")
)

// wrkSeedSize is how many resources the server holds before the runs.
const wrkSeedSize = 10_000

// wrkConnArgs size the load for a 2-core machine: wrk's one thread takes
// one core, the server the other.
var wrkConnArgs = []string{"-t1", "-c16"}

// wrkBareSource is the bare server: it answers each method with the status,
// headers and body recorded from resourcedir for it, after reading the
// request body, as resourcedir does.
const wrkBareSource = `package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
)

type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// main serves on a port of its own choosing and writes its URL to the file
// os.Args[1] as resourcedir's -addr-file does: whole, once it accepts
// connections.
func main() {
	spec, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	var answers map[string]answer
	if err := json.Unmarshal(spec, &answers); err != nil {
		panic(err)
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		a := answers[r.Method]
		h := w.Header()
		for k, v := range a.Header {
			h[k] = v
		}
		w.WriteHeader(a.Status)
		w.Write(a.Body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	tmp := os.Args[1] + ".tmp"
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+"\n"), 0o644); err != nil {
		panic(err)
	}
	if err := os.Rename(tmp, os.Args[1]); err != nil {
		panic(err)
	}
	panic(http.Serve(ln, http.HandlerFunc(handler)))
}
`

// wrkAnswer is one recorded response; the bare server replays it.
type wrkAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// wrkOp is one operation driven by wrk: a Lua script with a fixed request,
// so wrk formats it once and spends its core on sending.
type wrkOp struct {
	name   string
	script string // path of the Lua script
}

func BenchmarkWrk(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not on PATH; install it (Debian: apt-get install wrk) to measure the built server under an external load generator")
	}
	goCmd, err := exec.LookPath("go") // go test puts $GOROOT/bin first in PATH
	if err != nil {
		b.Fatalf("the go command is needed to build the bare server: %v", err)
	}
	bin, dir := builtBinary(b), b.TempDir()
	bareDir := filepath.Join(dir, "bare")
	wrkWrite(b, filepath.Join(bareDir, "go.mod"), "module bare\n\ngo 1.26\n")
	wrkWrite(b, filepath.Join(bareDir, "main.go"), wrkBareSource)
	bareBin := filepath.Join(dir, "bareserver")
	wrkGo(b, bareDir, goCmd, "build", "-o", bareBin, ".")

	// resourcedir with its defaults but the address and the snapshot's folder.
	logPath := filepath.Join(dir, "server.log")
	server := wrkStartServer(b, logPath, bin, append([]string{"-snapshot", filepath.Join(dir, "resourcedir.gob")}, strings.Fields(*wrkFlags)...)...)
	base := server.url
	client := &http.Client{Timeout: time.Minute}
	wrkWaitHealthy(b, client, base)
	// Every run against the server starts from the same directory, and with
	// the snapshot written: the creates of one run neither grow the next
	// run's directory nor leave a snapshot to write during the bare run.
	seed := benchSeedBodies(wrkSeedSize, wrkSeedSize)[0]
	prepare := func() {
		b.Helper()
		for _, step := range []struct {
			path string
			body []byte
		}{{"/__admin/reset", nil}, {"/__admin/resources", seed}, {"/__admin/snapshot", nil}} {
			if a := wrkDo(b, client, http.MethodPost, base+step.path, step.body); a.Status != http.StatusOK {
				b.Fatalf("POST %s: status %d: %.300s", step.path, a.Status, a.Body)
			}
		}
	}
	prepare()

	email, _ := benchResources(4321, 4322)[0].value(fieldEmail)
	q := url.Values{}
	q.Set(paramFilters, "Email~eq~"+benchQuote(email))
	q.Set(paramPage, "1")
	q.Set(paramPageSize, strconv.Itoa(benchPageSize))
	listPath := "/api/v2/resource?" + q.Encode()
	createBody := benchJSON(10_000_000)

	answers := map[string]wrkAnswer{
		http.MethodGet:  wrkDo(b, client, http.MethodGet, base+listPath, nil),
		http.MethodPost: wrkDo(b, client, http.MethodPost, base+"/api/v2/resource", createBody),
	}
	if a := answers[http.MethodGet]; a.Status != http.StatusOK || !bytes.Contains(a.Body, []byte(`"TotalResults":1,`)) {
		b.Fatalf("list: status %d: %.300s", a.Status, a.Body)
	}
	if a := answers[http.MethodPost]; a.Status != http.StatusOK {
		b.Fatalf("create: status %d: %.300s", a.Status, a.Body)
	}
	for _, a := range answers {
		a.Header.Del("Date") // net/http writes its own
	}
	spec, err := json.Marshal(answers)
	if err != nil {
		b.Fatal(err)
	}
	specPath := filepath.Join(dir, "answers.json")
	wrkWrite(b, specPath, string(spec))
	bareAddrFile := filepath.Join(dir, "bare.url")
	bareProc := wrkStart(b, filepath.Join(dir, "bare.log"), bareAddrFile, bareBin, bareAddrFile, specPath)
	bareBase := bareProc.url
	wrkWaitHealthy(b, client, bareBase)
	for method, want := range answers {
		path := map[string]string{http.MethodGet: listPath, http.MethodPost: "/api/v2/resource"}[method]
		got := wrkDo(b, client, method, bareBase+path, createBody)
		got.Header.Del("Date")
		if got.Status != want.Status || len(got.Body) != len(want.Body) || !wrkSameHeader(got.Header, want.Header) {
			b.Fatalf("bare %s answers %d %v with %d bytes; resourcedir %d %v with %d bytes",
				method, got.Status, got.Header, len(got.Body), want.Status, want.Header, len(want.Body))
		}
	}

	listScript := filepath.Join(dir, "list.lua")
	wrkWrite(b, listScript, fmt.Sprintf("wrk.method = \"GET\"\nwrk.path = %q\n", listPath))
	createScript := filepath.Join(dir, "create.lua")
	wrkWrite(b, createScript, fmt.Sprintf("wrk.method = \"POST\"\nwrk.path = \"/api/v2/resource\"\n"+
		"wrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = [==[%s]==]\n", createBody))
	b.Logf("directory of %d resources; list answer %d bytes; create request %d bytes, answer %d bytes; wrk %s -d%s",
		wrkSeedSize, len(answers[http.MethodGet].Body), len(createBody), len(answers[http.MethodPost].Body),
		strings.Join(wrkConnArgs, " "), *wrkDuration)

	var perf *exec.Cmd
	if *wrkPerf != "" {
		perf = exec.Command("perf", "record", "-g", "-o", *wrkPerf, "-p", strconv.Itoa(server.cmd.Process.Pid))
		perf.Stdout, perf.Stderr = io.Discard, io.Discard
		if err := perf.Start(); err != nil {
			b.Fatalf("perf: %v", err)
		}
	}

	var ops []wrkOp
	for _, op := range []wrkOp{{"list-eq", listScript}, {"create", createScript}} {
		if slices.Contains(strings.Split(*wrkOps, ","), op.name) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		b.Fatalf("-wrk.ops %q names no operation; there are list-eq and create", *wrkOps)
	}
	pids := map[string]int{base: server.cmd.Process.Pid, bareBase: bareProc.cmd.Process.Pid}
	got := map[string][]wrkResult{} // name, or "bare-"+name, to one result per round
	b.ResetTimer()
	for round := range *wrkRounds {
		for _, op := range ops {
			// Alternate who goes first, so a drift in the machine's load
			// does not always favour the same side.
			targets := []struct{ name, base string }{{op.name, base}, {"bare-" + op.name, bareBase}}
			if round%2 == 1 {
				slices.Reverse(targets)
			}
			for _, t := range targets {
				if t.base == base {
					prepare()
				}
				got[t.name] = append(got[t.name], wrkRun(b, wrk, op.script, t.base, pids[t.base]))
			}
		}
	}
	b.StopTimer()
	if perf != nil {
		perf.Process.Signal(os.Interrupt) //nolint:errcheck // perf writes its file on SIGINT
		if err := perf.Wait(); err != nil {
			b.Logf("perf: %v", err)
		}
	}
	for _, op := range ops {
		var rates, bareRates, ratios, cpus, bareCPUs, cpuRatios []float64
		for i, r := range got[op.name] {
			bare := got["bare-"+op.name][i]
			rates, bareRates = append(rates, r.rate), append(bareRates, bare.rate)
			ratios = append(ratios, r.rate/bare.rate)
			cpus, bareCPUs = append(cpus, r.cpuPerRequest), append(bareCPUs, bare.cpuPerRequest)
			cpuRatios = append(cpuRatios, bare.cpuPerRequest/r.cpuPerRequest)
		}
		b.ReportMetric(wrkMedian(rates), op.name+"-req/s")
		b.ReportMetric(wrkMedian(bareRates), "bare-"+op.name+"-req/s")
		b.ReportMetric(wrkMedian(ratios), op.name+"-ratio")
		b.Logf("%s: resourcedir %.0f req/s, bare %.0f req/s, ratio %.2f (medians of %d rounds; per round %s)",
			op.name, wrkMedian(rates), wrkMedian(bareRates), wrkMedian(ratios), len(ratios), wrkFormat(ratios))
		if wrkMedian(cpus) > 0 {
			b.ReportMetric(wrkMedian(cpus), op.name+"-cpu-us/req")
			b.ReportMetric(wrkMedian(bareCPUs), "bare-"+op.name+"-cpu-us/req")
			b.ReportMetric(wrkMedian(cpuRatios), op.name+"-cpu-ratio")
			b.Logf("%s: CPU per request: resourcedir %.1f µs, bare %.1f µs, bare/resourcedir %.2f (medians; per round %s)",
				op.name, wrkMedian(cpus), wrkMedian(bareCPUs), wrkMedian(cpuRatios), wrkFormat(cpuRatios))
		}
	}
	if info, err := os.Stat(logPath); err == nil {
		b.Logf("server log: %d bytes", info.Size())
	}
}

// wrkResult is one wrk run: the rate wrk measured, and the CPU time the
// server spent per request. On a shared machine the CPU per request moves
// far less with the neighbours' load than the rate does; its ratio is what
// the rate ratio would be if both servers had their core to themselves.
type wrkResult struct {
	rate          float64 // requests per second
	cpuPerRequest float64 // µs of user and system time; 0 where /proc cannot tell
}

// wrkRun runs wrk once against base, served by process pid. Any answer but
// a 2xx or a socket error fails the benchmark.
func wrkRun(b *testing.B, wrk, script, base string, pid int) wrkResult {
	b.Helper()
	args := append(slices.Clone(wrkConnArgs), "-d"+strconv.Itoa(int(wrkDuration.Seconds()))+"s", "-s", script, base)
	cpuBefore := wrkCPU(pid)
	out, err := exec.Command(wrk, args...).CombinedOutput()
	cpuAfter := wrkCPU(pid)
	if err != nil {
		b.Fatalf("wrk %v: %v\n%s", args, err, out)
	}
	if bytes.Contains(out, []byte("Non-2xx")) || bytes.Contains(out, []byte("Socket errors")) {
		b.Fatalf("wrk %v reports failures:\n%s", args, out)
	}
	rate := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
	count := regexp.MustCompile(`(\d+) requests in`).FindSubmatch(out)
	if rate == nil || count == nil {
		b.Fatalf("wrk %v: no Requests/sec or request count in\n%s", args, out)
	}
	var r wrkResult
	r.rate, err = strconv.ParseFloat(string(rate[1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.Atoi(string(count[1]))
	if err != nil {
		b.Fatal(err)
	}
	if cpuBefore >= 0 && cpuAfter >= 0 && n > 0 {
		r.cpuPerRequest = float64(cpuAfter-cpuBefore) / float64(n) / float64(time.Microsecond)
	}
	return r
}

// wrkCPU is the user and system time process pid has used, from
// /proc/pid/stat (Linux); -1 where it cannot be read.
func wrkCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces; the fields after
	// it are plain. utime and stime are fields 14 and 15, in clock ticks
	// of 1/100 s (USER_HZ, fixed on Linux).
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return -1
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// wrkProc is a program a benchmark started, serving at url.
type wrkProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	url  string
}

// wrkStart starts a program with its output to logPath, waits for the URL it
// writes to addrFile once it accepts connections, and stops it when the
// benchmark ends. Not startBinary: the measured configuration logs to a file,
// not to a pipe the test reads, and the bare server is another program.
func wrkStart(b *testing.B, logPath, addrFile, bin string, args ...string) *wrkProc {
	b.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	// A file left by an earlier run that was killed would be read as this
	// one's.
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
	p := &wrkProc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", bin, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }() //nolint:errcheck // how it ended shows in its log
	b.Cleanup(func() {
		p.stop()
		logFile.Close()
	})
	p.url = waitAddrFile(b, addrFile, time.Minute, p.done, func() string {
		out, _ := os.ReadFile(logPath)
		return string(out)
	})
	return p
}

// wrkStartServer starts resourcedir on a port it chooses, with args.
func wrkStartServer(b *testing.B, logPath, bin string, args ...string) *wrkProc {
	b.Helper()
	addrFile := strings.TrimSuffix(logPath, filepath.Ext(logPath)) + ".url"
	return wrkStart(b, logPath, addrFile, bin, append([]string{"-addr", "127.0.0.1:0", "-addr-file", addrFile}, args...)...)
}

// stop interrupts the program and waits for it to exit; after 30s it kills it.
func (p *wrkProc) stop() {
	p.cmd.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // it may have exited
		<-p.done
	}
}

// wrkWaitHealthy polls base until it answers, with a deadline.
func wrkWaitHealthy(b *testing.B, client *http.Client, base string) {
	b.Helper()
	eventually(b, 20*time.Second, base+" to answer", func() bool {
		resp, err := client.Get(base + "/__admin/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
}

func wrkDo(b *testing.B, client *http.Client, method, target string, body []byte) wrkAnswer {
	b.Helper()
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatalf("%s %s: %v", method, target, err)
	}
	return wrkAnswer{Status: resp.StatusCode, Header: resp.Header, Body: out}
}

// wrkSameHeader compares headers by name and value length: the request id
// differs from answer to answer, its length does not.
func wrkSameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb := b[k]
		if len(va) != len(vb) {
			return false
		}
		for i := range va {
			if len(va[i]) != len(vb[i]) {
				return false
			}
		}
	}
	return true
}

func wrkGo(b *testing.B, dir, goCmd string, args ...string) {
	b.Helper()
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go %v in %s: %v\n%s", args, dir, err, out)
	}
}

func wrkWrite(b *testing.B, path, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

func wrkMedian(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func wrkFormat(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}

// BenchmarkStartup measures what a test harness waits for: from starting
// the built binary to its first answered request, with no snapshot and
// with a snapshot of 100,000 resources. The harness polls for the
// -addr-file every millisecond from the moment the process starts, then
// sends GET /__admin/health.
func BenchmarkStartup(b *testing.B) {
	bin, dir := builtBinary(b), b.TempDir()
	snap100k := filepath.Join(dir, "100k.gob")
	store := newStore(nil)
	if err := store.insert(benchResources(0, 100_000)); err != nil {
		b.Fatal(err)
	}
	rows, _ := store.all()
	if _, err := writeSnapshotFile(snap100k, rows); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, snapshot string }{{"empty", "off"}, {"100k", snap100k}} {
		b.Run(c.name, func(b *testing.B) {
			var times []float64
			for b.Loop() {
				addrFile := filepath.Join(b.TempDir(), "url")
				client := &http.Client{Timeout: 20 * time.Second}
				// Not startBinary: what is measured is the time to the first
				// answer, which its wait for the logged address (polled every
				// 5ms) would blur.
				start := time.Now()
				cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-addr-file", addrFile, "-snapshot", c.snapshot, "-log-level", "warn")
				var stderr syncBuffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				exited := make(chan struct{})
				go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // interrupted below
				// A wait below that fails the benchmark leaves it running.
				b.Cleanup(func() {
					select {
					case <-exited:
					default:
						cmd.Process.Kill() //nolint:errcheck // it may end on its own meanwhile
						<-exited
					}
				})
				// The listener queues connections from the moment the file
				// appears: the first request is answered once the server serves.
				url := waitAddrFile(b, addrFile, 20*time.Second, exited, stderr.String)
				resp, err := client.Get(url + "/__admin/health")
				if err != nil {
					b.Fatalf("health: %v; stderr: %s", err, stderr.String())
				}
				resp.Body.Close()
				times = append(times, float64(time.Since(start).Microseconds())/1000)
				cmd.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited
				<-exited
			}
			b.ReportMetric(wrkMedian(times), "ms-to-first-answer")
			b.Logf("%s: start to first answer %s ms (median %.1f)", c.name, wrkFormat(times), wrkMedian(times))
		})
	}
}

// BenchmarkNamespaces measures what a suite of parallel tests pays for
// namespaces on a 100,000-resource seed, with the built binary and its
// default flags (snapshot on, in a temporary folder):
//
//	go test -run '^$' -bench '^BenchmarkNamespaces$' -benchtime 1x .
//
// boot with -seed to the first answer; a new namespace's first answer;
// the memory an unwritten namespace adds; a reset after 100 writes; 1,000
// namespaces with 10 creates and 10 PUTs each (memory, snapshot size, and
// the restart that loads it); a list in a written namespace against the same
// list in default; a contains scan over the 100,000.
func BenchmarkNamespaces(b *testing.B) {
	bin, dir := builtBinary(b), b.TempDir()
	const seedSize = 100_000
	seedPath := filepath.Join(dir, "seed.json")
	body := []byte{'['}
	for i := range seedSize {
		if i > 0 {
			body = append(body, ',')
		}
		body = benchAppendJSON(body, i)
	}
	wrkWrite(b, seedPath, string(append(body, ']')))
	snapPath := filepath.Join(dir, "ns.gob")
	client := &http.Client{Timeout: 30 * time.Second}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	get := func(url string) wrkAnswer { return wrkDo(b, client, http.MethodGet, url, nil) }
	timed := func(method, url string, body []byte) float64 {
		start := time.Now()
		if a := wrkDo(b, client, method, url, body); a.Status != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, url, a.Status, a.Body)
		}
		return ms(time.Since(start))
	}

	for b.Loop() {
		start := time.Now()
		proc := wrkStartServer(b, filepath.Join(dir, "boot.log"), bin, "-seed", seedPath, "-snapshot", snapPath, "-max-namespaces", "1100")
		base := proc.url
		wrkWaitHealthy(b, client, base)
		boot := ms(time.Since(start))
		rss0 := procRSS(b, proc.cmd.Process.Pid)

		var first []float64
		for i := range 1000 {
			start := time.Now()
			if a := get(fmt.Sprintf("%s/ns/t%04d/api/v2/resource?requestParams.pageSize=1", base, i)); a.Status != http.StatusOK {
				b.Fatalf("first list in a new namespace: %d %s", a.Status, a.Body)
			}
			first = append(first, ms(time.Since(start)))
		}
		rss1 := procRSS(b, proc.cmd.Process.Pid)

		var ids []string
		var page struct {
			ResourceList []struct{ Id, Company string }
		}
		if err := json.Unmarshal(get(base+"/api/v2/resource?requestParams.pageSize=500").Body, &page); err != nil {
			b.Fatal(err)
		}
		for _, r := range page.ResourceList {
			ids = append(ids, r.Id)
		}
		put := func(ns, id string, k int) {
			body := putBody(id, "FirstName", fmt.Sprintf("N%d", k), "Surname", "Written", "Company", "Layered Ltd", "Email", fmt.Sprintf("n%d@example.org", k))
			timed(http.MethodPut, base+"/ns/"+ns+"/api/v2/resource/"+id, []byte(body))
		}
		for i := range 1000 {
			ns := fmt.Sprintf("t%04d", i)
			for k := range 10 {
				timed(http.MethodPost, base+"/ns/"+ns+"/api/v2/resource", fmt.Appendf(nil, `{"FirstName": "C%d", "Surname": "Created", "Company": "Layered Ltd"}`, k))
				put(ns, ids[(i+k)%len(ids)], k)
			}
		}
		rss2 := procRSS(b, proc.cmd.Process.Pid)

		var resets []float64
		for i := range 30 {
			ns := fmt.Sprintf("reset%02d", i)
			for k := range 50 {
				timed(http.MethodPost, base+"/ns/"+ns+"/api/v2/resource", []byte(`{"Company": "Gone"}`))
				put(ns, ids[k], k)
			}
			resets = append(resets, timed(http.MethodPost, base+"/ns/"+ns+"/__admin/reset", nil))
		}

		// The same lists in default and in a namespace with 20 writes.
		lists := []string{
			"requestParams.pageSize=25&requestParams.page=7",
			"requestParams.filters=" + url.QueryEscape("Company~eq~"+benchQuote(page.ResourceList[400].Company)), // a company nobody wrote
			"requestParams.filters=" + url.QueryEscape("Surname~contains~'ell'") + "&requestParams.pageSize=25",
			"requestParams.sorts=Surname-desc&requestParams.pageSize=25",
		}
		var ratios []float64
		for _, q := range lists {
			var inDefault, inNS []float64
			for range 15 {
				inDefault = append(inDefault, timed(http.MethodGet, base+"/api/v2/resource?"+q, nil))
				inNS = append(inNS, timed(http.MethodGet, base+"/ns/t0500/api/v2/resource?"+q, nil))
			}
			ratios = append(ratios, wrkMedian(inNS)/wrkMedian(inDefault))
			b.Logf("list %s: default %.2f ms, written namespace %.2f ms (medians of 15)", q, wrkMedian(inDefault), wrkMedian(inNS))
		}
		var contains []float64
		for range 31 {
			contains = append(contains, timed(http.MethodGet, base+"/api/v2/resource?requestParams.filters="+url.QueryEscape("Email~contains~'zz'"), nil))
		}

		snapStart := time.Now()
		if a := wrkDo(b, client, http.MethodPost, base+"/__admin/snapshot", nil); a.Status != http.StatusOK {
			b.Fatalf("snapshot: %d %s", a.Status, a.Body)
		}
		snapWrite := ms(time.Since(snapStart))
		info, err := os.Stat(snapPath)
		if err != nil {
			b.Fatal(err)
		}
		proc.stop()

		start = time.Now()
		proc = wrkStartServer(b, filepath.Join(dir, "reboot.log"), bin, "-seed", seedPath, "-snapshot", snapPath, "-max-namespaces", "1100")
		base = proc.url
		wrkWaitHealthy(b, client, base)
		reboot := ms(time.Since(start))
		var spaces struct{ Total int }
		if err := json.Unmarshal(get(base+"/__admin/namespaces").Body, &spaces); err != nil || spaces.Total != 1031 {
			b.Fatalf("after the restart %d namespaces, want 1031 (%v)", spaces.Total, err)
		}
		rss3 := procRSS(b, proc.cmd.Process.Pid)
		proc.stop()

		b.ReportMetric(boot, "ms-boot-100k-seed")
		b.ReportMetric(wrkMedian(first), "ms-new-namespace-p50")
		b.ReportMetric(float64(rss1-rss0)/1024/1000, "KB-per-unwritten-namespace")
		b.ReportMetric(wrkMedian(resets), "ms-reset-p50")
		b.ReportMetric(float64(rss2)/(1<<20), "MB-RSS-1000-written")
		b.ReportMetric(float64(info.Size())/(1<<20), "MB-snapshot")
		b.ReportMetric(reboot, "ms-boot-with-snapshot")
		b.ReportMetric(slices.Max(ratios), "worst-list-ratio")
		b.ReportMetric(wrkMedian(contains), "ms-contains-100k-p50")
		b.Logf("boot with a 100k seed %.0f ms; new namespace first answer p50 %.2f ms (max %.2f); RSS %d MB, +%d KB for 1,000 unwritten namespaces (%.1f KB each)",
			boot, wrkMedian(first), slices.Max(first), rss0>>20, (rss1-rss0)>>10, float64(rss1-rss0)/1024/1000)
		b.Logf("1,000 namespaces x (10 creates + 10 PUTs): RSS %d MB; reset after 100 writes p50 %.2f ms; contains over 100k p50 %.2f ms; list ratios %s",
			rss2>>20, wrkMedian(resets), wrkMedian(contains), wrkFormat(ratios))
		b.Logf("snapshot of that state: %.1f MB written in %.0f ms; restart to first answer %.0f ms, RSS %d MB",
			float64(info.Size())/(1<<20), snapWrite, reboot, rss3>>20)
	}
}

// procRSS is the resident memory of process pid, from /proc.
func procRSS(b *testing.B, pid int) int64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		b.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}
