package resourcedir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Tests of snapshotter.go: writes on a timer when the store has changed,
// on demand and at shutdown, by the built binary too, and what a write
// costs the requests served meanwhile.

// The snapshotter reports a failed write, keeps the store marked as changed,
// and writes at its next attempt once the fault is gone.
func TestSnapshotWriteIfChangedRetries(t *testing.T) {
	dir := t.TempDir()
	store := newStore(nil)
	store.insert(snapRealistic(30))

	t.Run("folder missing", func(t *testing.T) {
		path := filepath.Join(dir, "later", "rd.gob")
		snap := newSnapshotter(path, storeDir{store}, snapLogger(nil))
		for range 2 {
			wrote, err := snap.writeIfChanged()
			if wrote || err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("writeIfChanged with no folder = %v, %v; want false and an error naming %s", wrote, err, path)
			}
		}
		if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if wrote, err := snap.writeIfChanged(); !wrote || err != nil {
			t.Fatalf("writeIfChanged once the folder exists = %v, %v; want true, nil", wrote, err)
		}
		if wrote, err := snap.writeIfChanged(); wrote || err != nil {
			t.Fatalf("writeIfChanged with nothing new = %v, %v; want false, nil", wrote, err)
		}
		if rs, err := readSnapshotFile(path); err != nil || len(rs) != 30 {
			t.Fatalf("the retried snapshot: %d resources, %v", len(rs), err)
		}
		snapAssertNoTemps(t, filepath.Dir(path))
	})

	t.Run("directory in the way, with the run loop", func(t *testing.T) {
		path := filepath.Join(dir, "blocked.gob")
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		snap := newSnapshotter(path, storeDir{store}, snapLogger(&logs))
		runLoop := func() (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); snap.run(ctx, 5*time.Millisecond) }()
			return func() { cancel(); <-done }
		}

		stop := runLoop()
		eventually(t, 10*time.Second, "the run loop to report two failed writes", func() bool {
			return strings.Count(logs.String(), "snapshot failed") >= 2
		})
		stop()
		snapAssertNoTemps(t, dir)

		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		stop = runLoop()
		eventually(t, 10*time.Second, "the run loop to write once the fault is gone", func() bool {
			rs, err := readSnapshotFile(path)
			return err == nil && len(rs) == 30
		})
		stop()
		snapAssertNoTemps(t, dir)
	})
}

// TestRunHealthReportsSnapshotFailures: health said "ok" and nothing more
// while every snapshot write failed, and the data went at exit; it says
// when the last good write was and why the writes fail.
func TestRunHealthReportsSnapshotFailures(t *testing.T) {
	t.Parallel()
	sub := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := serveStart(t, Config{Snapshot: filepath.Join(sub, "rd.gob"), SnapshotInterval: time.Hour})
	e := clientAt(t, p.url)
	type health struct {
		Status    string
		Resources int
		Snapshot  map[string]any
	}
	get := func() health {
		var h health
		e.expect(http.StatusOK, http.MethodGet, "/__admin/health", "").decode(t, &h)
		return h
	}
	if h := get(); !reflect.DeepEqual(h.Snapshot, map[string]any{"LastWrite": nil}) {
		t.Errorf("health before any write: Snapshot %v, want {LastWrite: null}", h.Snapshot)
	}
	e.createPerson("Kept")
	var written struct{ DurationMs float64 }
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "").decode(t, &written)
	good := get().Snapshot
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(good["LastWrite"])); err != nil || len(good) != 2 {
		t.Fatalf("health after a write: Snapshot %v, want LastWrite, a time, and LastWriteDurationMs", good)
	}
	// What kill -9 can lose is what changed in the interval plus the time
	// of one write: health says how long the last one took.
	if d, ok := good["LastWriteDurationMs"].(float64); !ok || d != written.DurationMs || d <= 0 {
		t.Errorf("health's LastWriteDurationMs %v, want the write's %v ms", good["LastWriteDurationMs"], written.DurationMs)
	}
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		e.createPerson("Unsaved")
		e.expect(http.StatusInternalServerError, http.MethodPost, "/__admin/snapshot", "")
		h := get()
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(h.Snapshot["LastErrorTime"])); err != nil {
			t.Errorf("LastErrorTime %v: %v", h.Snapshot["LastErrorTime"], err)
		}
		delete(h.Snapshot, "LastErrorTime")
		want := map[string]any{"LastWrite": good["LastWrite"], "LastWriteDurationMs": good["LastWriteDurationMs"],
			"LastError": "the snapshot's folder no longer exists", "FailedWrites": float64(n)}
		if h.Status != "ok" || !reflect.DeepEqual(h.Snapshot, want) {
			t.Errorf("health after %d failed writes: %+v, want Snapshot %v", n, h, want)
		}
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	e.expect(http.StatusOK, http.MethodPost, "/__admin/snapshot", "")
	if h := get(); len(h.Snapshot) != 2 || h.Snapshot["LastWrite"] == good["LastWrite"] || h.Snapshot["LastWriteDurationMs"] == nil {
		t.Errorf("health once a write succeeds again: Snapshot %v, want a newer LastWrite and its duration alone", h.Snapshot)
	}
	p.stopClean()
}

func TestSnapshotLoadRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	if _, err := writeSnapshotFile(path, snapRealistic(3)); err != nil {
		t.Fatal(err)
	}
	stale := []string{".rd.gob.tmp-123", ".rd.gob.tmp-999999"}
	kept := []string{"rd.gob.tmp-1", ".other.gob.tmp-1", ".rd.gob.tmpx", "notes.txt"}
	for _, name := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("half a snapshot"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := newSnapshotter(path, storeDir{newStore(nil)}, snapLogger(nil)).load(); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the stale temporary file %s is still there (%v)", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	// A refused snapshot leaves the folder as it is.
	os.WriteFile(filepath.Join(dir, stale[0]), nil, 0o600)
	os.WriteFile(path, []byte("garbage"), 0o600)
	if err := newSnapshotter(path, storeDir{newStore(nil)}, snapLogger(nil)).load(); err == nil {
		t.Fatal("garbage loaded")
	}
	if _, err := os.Stat(filepath.Join(dir, stale[0])); err != nil {
		t.Errorf("a refused load removed files: %v", err)
	}
}

// A run that changes nothing must not leave a snapshot behind.
func TestSnapshotIdleRunWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.gob")
	snap := newSnapshotter(path, storeDir{newStore(nil)}, slog.New(slog.DiscardHandler))
	if err := snap.load(); err != nil {
		t.Fatal(err)
	}
	if wrote, err := snap.writeIfChanged(); wrote || err != nil {
		t.Fatalf("writeIfChanged after an empty boot = %v, %v; want false, nil", wrote, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an idle run created %s (stat: %v)", path, err)
	}
}

// snapAck is what a writer knows of one resource: the revisions it sent in
// Position, and the last one that was acknowledged.
type snapAck struct {
	id      string
	sent    []int
	acked   int // index into sent; -1 before the create is acknowledged
	created bool
}

// snapWriters runs n goroutines that create resources and update their
// own over HTTP until ctx is done or the server goes away.
type snapWriters struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	acks   []*snapAck
	ok     atomic.Int64
	failed atomic.Int64
}

func snapStartWriters(ctx context.Context, base string, n int, tag string) *snapWriters {
	w := &snapWriters{}
	for g := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			base := base
			if g%2 == 1 { // half the writers in namespaces of their own, which the snapshot must keep too
				base += fmt.Sprintf("/ns/writer-%d", g)
			}
			var mine []*snapAck
			rng := rand.New(rand.NewPCG(uint64(g), uint64(len(tag))))
			for i := 0; ctx.Err() == nil; i++ {
				if len(mine) == 0 || rng.IntN(3) == 0 {
					a := &snapAck{sent: []int{0}, acked: -1}
					body := fmt.Sprintf(`{"FirstName":"Writer %d","Surname":"%s","ExternalID":"%s-%d-%d","Position":"rev 0","Types":[{"Type":"Employee"}],"Address":{"N":%d}}`, g, tag, tag, g, i, i)
					code, resp, err := doJSON(client, http.MethodPost, base+"/api/v2/resource", []byte(body))
					if err != nil || code != http.StatusCreated {
						w.failed.Add(1)
						return
					}
					var out struct{ Data []struct{ Id string } }
					if json.Unmarshal(resp, &out) != nil || len(out.Data) != 1 {
						w.failed.Add(1)
						return
					}
					a.id, a.acked, a.created = out.Data[0].Id, 0, true
					w.ok.Add(1)
					mine = append(mine, a)
					w.mu.Lock()
					w.acks = append(w.acks, a)
					w.mu.Unlock()
					continue
				}
				a := mine[rng.IntN(len(mine))]
				w.mu.Lock()
				rev := a.sent[len(a.sent)-1] + 1
				a.sent = append(a.sent, rev)
				w.mu.Unlock()
				body := fmt.Sprintf(`{"Id":"%s","DisplayName":null,"FirstName":"Writer %d","Surname":"%s","Company":null,"Position":"rev %d","Phone":"%d","Mobile":null,"Fax":"","Email":null,"AddressComment":null,"ExternalID":"%s-%d-u%d","Status":"Active","Types":[{"Type":"Team"}]}`,
					a.id, g, tag, rev, i, tag, g, i)
				code, _, err := doJSON(client, http.MethodPut, base+"/api/v2/resource/"+a.id, []byte(body))
				if err != nil || code != http.StatusOK {
					w.failed.Add(1)
					return
				}
				w.mu.Lock()
				a.acked = len(a.sent) - 1
				w.mu.Unlock()
				w.ok.Add(1)
			}
		}()
	}
	return w
}

var snapLoggedWrite = regexp.MustCompile(`msg="snapshot written".* resources=(\d+)`)

// lastLoggedSnapshot is the resource count of the last snapshot the
// process reported written, -1 if none.
func (p *binaryProc) lastLoggedSnapshot() int {
	m := snapLoggedWrite.FindAllStringSubmatch(p.stdout.String(), -1)
	if len(m) == 0 {
		return -1
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// snapCheckServes checks that p serves exactly the resources of the
// snapshot at path, in order, with identical JSON.
func snapCheckServes(t *testing.T, p *binaryProc, path string) {
	t.Helper()
	spaces, _, err := readSnapshot(path)
	if err != nil {
		t.Fatalf("the snapshot does not load: %v", err)
	}
	for _, sp := range spaces {
		prefix := ""
		if sp.Name != defaultNamespace {
			prefix = "/ns/" + sp.Name
		}
		served := p.listIn(t, prefix)
		resources := spaceResources(&sp)
		if len(served) != len(resources) {
			t.Fatalf("after reboot %d resources are served in namespace %s; the snapshot holds %d", len(served), sp.Name, len(resources))
		}
		for i, r := range resources {
			if w := snapWire(r); string(served[i]) != w {
				t.Fatalf("after reboot resource %d of namespace %s is served as\n%s\nthe snapshot has\n%s", i, sp.Name, served[i], w)
			}
		}
	}
}

// TestSnapshotBinary builds the command once and runs it as a process:
// killed, stopped by signals, and with its snapshot folder removed.
func TestSnapshotBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := builtBinary(t)
	t.Run("CrashSafety", func(t *testing.T) { snapTestCrashSafety(t, bin) })
	t.Run("GracefulStop", func(t *testing.T) { snapTestGracefulStop(t, bin) })
	t.Run("FailedFinalWriteExitStatus", func(t *testing.T) { snapTestFailedFinalWrite(t, bin) })
}

// SIGKILL at varied moments under concurrent writes: the next boot always
// succeeds and serves the last completed snapshot exactly, and the
// snapshot only grows from round to round.
func snapTestCrashSafety(t *testing.T, bin string) {
	start := time.Now()
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	args := []string{"-snapshot", path, "-snapshot-interval", "50ms"}

	// A directory big enough that every write takes a while, so that kills
	// land in the middle of writes too.
	prev := map[string]bool{}
	seed := snapRealistic(5_000)
	if _, err := writeSnapshotFile(path, seed); err != nil {
		t.Fatal(err)
	}
	for _, r := range seed {
		prev[r.id()] = true
	}
	killDelays := []time.Duration{0, 20 * time.Millisecond, 55 * time.Millisecond, 90 * time.Millisecond,
		130 * time.Millisecond, 210 * time.Millisecond, 333 * time.Millisecond, 500 * time.Millisecond}
	loggedRounds, tempsSeen := 0, 0
	for round, delay := range killDelays {
		p := startBinary(t, bin, dir, args...)
		if len(prev) > 0 {
			snapCheckServes(t, p, path)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := snapStartWriters(ctx, p.url, 4, fmt.Sprintf("r%d", round))
		// Let some writes land (round 0 is killed before the first snapshot
		// is due), then kill at this round's moment.
		if round > 0 {
			eventually(t, 10*time.Second, "writes to succeed", func() bool { return w.ok.Load() >= 20 })
		}
		time.Sleep(delay)
		p.stop(syscall.SIGKILL)
		cancel()
		w.wg.Wait()
		tempsSeen += len(snapTemps(t, dir))

		logged := p.lastLoggedSnapshot()
		rs, err := readSnapshotFile(path)
		if errors.Is(err, os.ErrNotExist) && len(prev) == 0 && logged < 0 {
			t.Logf("round %d: killed after %v before the first snapshot (%d writes acknowledged)", round, delay, w.ok.Load())
			continue
		}
		if err != nil {
			t.Fatalf("round %d: after SIGKILL the snapshot does not load: %v", round, err)
		}
		if logged >= 0 {
			loggedRounds++
		}
		if len(rs) < logged {
			t.Errorf("round %d: the snapshot holds %d resources; the last snapshot reported written held %d", round, len(rs), logged)
		}
		ids := make(map[string]bool, len(rs))
		for _, r := range rs {
			ids[r.id()] = true
		}
		for id := range prev {
			if !ids[id] {
				t.Fatalf("round %d: resource %s of the previous round's snapshot is gone", round, id)
			}
		}
		t.Logf("round %d: killed after %v; %d writes acknowledged; snapshot holds %d (last logged %d)",
			round, delay, w.ok.Load(), len(rs), logged)
		prev = ids
	}
	if loggedRounds == 0 {
		t.Error("no round saw a snapshot written; the test proved nothing")
	}

	// A last boot, then a clean stop: the snapshot is served, the exit is
	// clean and no temporary file is left behind.
	p := startBinary(t, bin, dir, args...)
	snapCheckServes(t, p, path)
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0; stderr: %s", code, p.stderr.String())
	}
	snapAssertNoTemps(t, dir)
	t.Logf("%d kills left a temporary file (killed mid-write), cleaned at the next boot; %v in all", tempsSeen, time.Since(start))
}

// SIGTERM in the middle of a burst of writes: the process exits 0 and
// every acknowledged write is there after a restart.
func snapTestGracefulStop(t *testing.T, bin string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rd.gob")
	// An interval longer than the test: only the final write saves the burst.
	args := []string{"-snapshot", path, "-snapshot-interval", "1h"}
	p := startBinary(t, bin, dir, args...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := snapStartWriters(ctx, p.url, 8, "burst")
	eventually(t, 10*time.Second, "a burst of writes", func() bool { return w.ok.Load() >= 300 })
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d after SIGTERM, want 0; stderr: %s", code, p.stderr.String())
	}
	w.wg.Wait()
	snapAssertNoTemps(t, dir)

	p = startBinary(t, bin, dir, args...)
	served := map[string]string{} // Id -> Position
	var all []json.RawMessage
	for g := range 8 {
		if g%2 == 1 { // the namespaces of the odd writers
			all = append(all, p.listIn(t, fmt.Sprintf("/ns/writer-%d", g))...)
		}
	}
	for _, raw := range append(p.listAll(t), all...) {
		var r struct{ Id, Position string }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		served[r.Id] = r.Position
	}
	checked := 0
	for _, a := range w.acks {
		pos, ok := served[a.id]
		if !ok {
			t.Errorf("resource %s was acknowledged but is gone after the restart", a.id)
			continue
		}
		// The last acknowledged revision, or a later one whose answer was
		// lost to the shutdown.
		var allowed []string
		for _, rev := range a.sent[a.acked:] {
			allowed = append(allowed, fmt.Sprintf("rev %d", rev))
		}
		if !slices.Contains(allowed, pos) {
			t.Errorf("resource %s has Position %q after the restart; want one of %v", a.id, pos, allowed)
		}
		checked++
	}
	t.Logf("%d writes acknowledged (%d resources) before and during SIGTERM, all present after the restart", w.ok.Load(), checked)
	if code := p.stop(syscall.SIGINT); code != 0 {
		t.Errorf("exit status %d after SIGINT, want 0", code)
	}
	snapAssertNoTemps(t, dir)
}

// A final write that fails makes the exit status non-zero and says why.
func snapTestFailedFinalWrite(t *testing.T, bin string) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "rd.gob")
	p := startBinary(t, bin, dir, "-snapshot", path, "-snapshot-interval", "1h")
	code, body, err := doJSON(http.DefaultClient, http.MethodPost, p.url+"/api/v2/resource", []byte(`{"Company":"Doomed Ltd"}`))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v %s", code, err, body)
	}
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if code := p.stop(syscall.SIGTERM); code == 0 {
		t.Fatalf("exit status 0 although the final snapshot could not be written; stderr: %s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), path) {
		t.Errorf("stderr does not name the snapshot: %s", p.stderr.String())
	}
}

var snapListStores sync.Map // int -> *Store

func snapListStore(n int) *store {
	if s, ok := snapListStores.Load(n); ok {
		return s.(*store)
	}
	s := newStore(nil)
	if err := s.insert(snapRealisticCached(n)); err != nil {
		panic(err)
	}
	snapListStores.Store(n, s)
	return s
}

// BenchmarkListDuringSnapshot measures list latency with no snapshot under
// way ("idle") and with a snapshotter writing the whole store in a loop
// ("snapshotting"). Each op has one client per CPU send list requests back
// to back (a default page at a random offset, an Id lookup, an ExternalID
// eq, a DisplayName eq) for the same window in both modes: 2.5 times one
// snapshot write, and at least half a second. Reported: latency percentiles and maximum in µs, GC
// cycles in the window, and the snapshots written.
func BenchmarkListDuringSnapshot(b *testing.B) {
	for _, size := range snapBenchSizes {
		// One write, timed, sets the window; it also warms the file.
		store := snapListStore(size.n)
		snap := newSnapshotter(filepath.Join(b.TempDir(), "rd.gob"), storeDir{store}, snapLogger(nil))
		res, err := snap.write()
		if err != nil {
			b.Fatal(err)
		}
		window := max(500*time.Millisecond, res.Duration*5/2)
		for _, mode := range []string{"idle", "snapshotting"} {
			b.Run(size.name+"/"+mode, func(b *testing.B) {
				srv := newServer(DefaultConfig(), store, nil)
				all, _ := store.all()
				target := func(rng *rand.Rand) string {
					r := all[rng.IntN(len(all))]
					switch rng.IntN(4) {
					case 0:
						return fmt.Sprintf("/api/v2/resource?requestParams.page=%d&requestParams.pageSize=20", 1+rng.IntN(len(all)/20))
					case 1:
						return "/api/v2/resource?requestParams.filters=" + url.QueryEscape("Id~eq~'"+r.id()+"'")
					case 2:
						return "/api/v2/resource?requestParams.filters=" + url.QueryEscape("ExternalID~eq~'"+r.str(fieldExternalID)+"'")
					default:
						return "/api/v2/resource?requestParams.pageSize=20&requestParams.filters=" + url.QueryEscape("DisplayName~eq~'"+strings.ReplaceAll(r.str(fieldDisplayName), "'", "''")+"'")
					}
				}
				var written, writeTime atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				if mode == "snapshotting" {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							res, err := snap.write()
							if err != nil {
								b.Error(err)
								return
							}
							written.Add(1)
							writeTime.Add(int64(res.Duration))
						}
					}()
				}
				var lat []time.Duration
				runtime.GC()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				b.ResetTimer()
				for range b.N {
					// As many clients as CPUs, so that a request competes with
					// the snapshot for a CPU as it does in a busy server.
					var mu sync.Mutex
					var clients sync.WaitGroup
					end := time.Now().Add(window)
					for c := range runtime.GOMAXPROCS(0) {
						clients.Go(func() {
							rng := rand.New(rand.NewPCG(7, uint64(c)))
							var mine []time.Duration
							for time.Now().Before(end) {
								req := httptest.NewRequest(http.MethodGet, target(rng), nil)
								rec := httptest.NewRecorder()
								t0 := time.Now()
								srv.ServeHTTP(rec, req)
								mine = append(mine, time.Since(t0))
								if rec.Code != http.StatusOK {
									b.Errorf("%s: %d %s", req.URL, rec.Code, rec.Body)
									return
								}
							}
							mu.Lock()
							lat = append(lat, mine...)
							mu.Unlock()
						})
					}
					clients.Wait()
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms1)
				close(stop)
				wg.Wait()
				slices.Sort(lat)
				pct := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e3
				}
				b.ReportMetric(pct(0.50), "p50-µs")
				b.ReportMetric(pct(0.99), "p99-µs")
				b.ReportMetric(pct(0.999), "p99.9-µs")
				b.ReportMetric(float64(lat[len(lat)-1])/1e3, "max-µs")
				b.ReportMetric(float64(len(lat))/float64(b.N), "requests/op")
				b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/op")
				if n := written.Load(); n > 0 {
					b.ReportMetric(float64(n)/float64(b.N), "snapshots/op")
					b.ReportMetric(float64(writeTime.Load())/float64(n)/1e6, "ms/snapshot")
				}
			})
		}
	}
}
