package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// -tls as a client meets it: a certificate it can trust through the CA
// file, for the loopback names and the -allowed-hosts ones, over HTTP/2.
func TestTLSServes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	p := startBinary(t, builtBinary(t), dir, "-snapshot", "off", "-tls", "-tls-ca-file", caFile, "-allowed-hosts", "api.test,10.1.2.3")
	if !strings.HasPrefix(p.url, "https://127.0.0.1:") || !strings.Contains(p.stdout.String(), "ca_file="+caFile) {
		t.Fatalf("served at %q; log:\n%s", p.url, p.stdout.String())
	}
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !ca.IsCA {
		t.Fatalf("the CA file: %v, IsCA %v", err, ca != nil && ca.IsCA)
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := trusting.Get(p.url + "/__admin/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" {
		t.Errorf("health over TLS: %d %s", resp.StatusCode, resp.Proto)
	}
	leaf := resp.TLS.PeerCertificates[0]
	var ips []string
	for _, ip := range leaf.IPAddresses {
		ips = append(ips, ip.String())
	}
	if !slices.Equal(leaf.DNSNames, []string{"localhost", "api.test"}) || !slices.Equal(ips, []string{"127.0.0.1", "::1", "10.1.2.3"}) {
		t.Errorf("the certificate names %v and %v", leaf.DNSNames, ips)
	}
	// A namespace's BaseURL is https too.
	c := &testClient{t: t, base: p.url, client: trusting}
	if r := c.do(http.MethodPost, "/__admin/namespaces", ""); r.Status != 201 || !strings.Contains(string(r.Body), `"BaseURL":"https://127.0.0.1:`) {
		t.Errorf("POST /__admin/namespaces over TLS: %d %s", r.Status, r.Body)
	}
	// A client that does not trust the CA is refused, as it would be by
	// the real service with a certificate it cannot verify.
	if _, err := http.Get(p.url + "/__admin/health"); !errors.As(err, new(x509.UnknownAuthorityError)) {
		t.Errorf("a client without the CA: %v, want an unknown authority", err)
	}
}

// resourcedir -tls -- COMMAND: the command gets an https RESOURCEDIR_URL and
// RESOURCEDIR_CA_FILE, the user's CA, which curl trusts.
func TestTLSCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	got := runBinary(t, t.TempDir(), nil, "", "-tls", "--", "sh", "-c",
		`curl -fsS --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health"`)
	m := regexp.MustCompile(`^resourcedir: serving (https://127\.0\.0\.1:[0-9]+) for sh; console (https://127\.0\.0\.1:[0-9]+)/; CA certificate (\S+)\n$`).FindStringSubmatch(got.stderr)
	if got.code != 0 || got.stdout != `{"Status":"ok","Resources":0}` || m == nil || m[1] != m[2] {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if want := filepath.Join(testConfigHome, "resourcedir", "ca.pem"); m[3] != want {
		t.Errorf("the CA file is %s, want the user's, %s", m[3], want)
	}
	// The health probe trusts the CA as the other clients do.
	got = runBinary(t, t.TempDir(), nil, "", "-tls", "--", builtBinary(t), "health")
	if got.code != 0 || !strings.HasPrefix(got.stdout, "ok https://127.0.0.1:") {
		t.Errorf("health over TLS: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
}

// -tls-cert and -tls-key serve one's own certificate; one without the
// other is an error.
func TestTLSOwnCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	ca, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.mint([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	caPEM := ca.pem
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, caFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem")
	for path, data := range map[string][]byte{
		certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		keyFile:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		caFile:   caPEM,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := runBinary(t, dir, []string{"CA=" + caFile}, "", "-tls-cert", certFile, "-tls-key", keyFile, "--", "sh", "-c",
		`test -z "$RESOURCEDIR_CA_FILE" && curl -fsS --cacert "$CA" "$RESOURCEDIR_URL/__admin/health"`)
	if got.code != 0 || got.stdout != `{"Status":"ok","Resources":0}` {
		t.Errorf("own certificate: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	got = runBinary(t, dir, nil, "", "-tls-cert", certFile, "-snapshot", "off")
	if got.code != 1 || got.stderr != "resourcedir: -tls-cert and -tls-key go together: give both files\n" {
		t.Errorf("-tls-cert alone: exit %d, stderr %q", got.code, got.stderr)
	}
}

// The CA was written beside the snapshot, and two servers sharing a
// folder overwrote each other's. There is one CA per user now, in the
// config folder: two servers with different snapshot folders share it,
// a restart reuses it, and nothing of it lands beside the snapshots.
func TestTLSUserCAShared(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	config, dirA, dirB := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + config}
	caFile, keyFile := filepath.Join(config, "resourcedir", "ca.pem"), filepath.Join(config, "resourcedir", "ca-key.pem")
	a := startBinaryEnv(t, builtBinary(t), dirA, env, "-tls", "-snapshot", "a.gob")
	b := startBinaryEnv(t, builtBinary(t), dirB, env, "-tls", "-snapshot", "b.gob")
	for _, p := range []*binaryProc{a, b} {
		if !strings.Contains(p.stdout.String(), "ca_file="+caFile+"\n") {
			t.Errorf("the serving line does not name %s:\n%s", caFile, p.stdout.String())
		}
	}
	for path, mode := range map[string]os.FileMode{caFile: 0o644, keyFile: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v; want %v", path, err, fi, mode)
		}
	}
	first, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	trusting := trustingClient(t, first)
	for _, p := range []*binaryProc{a, b} {
		if r := (&testClient{t: t, base: p.url, client: trusting}).do(http.MethodPost, "/api/v2/resource", `{"Company":"Kept"}`); r.Status != http.StatusCreated {
			t.Errorf("%s: create %d %s", p.url, r.Status, r.Body)
		}
	}
	if code := a.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("stop: exit %d; stderr %s", code, a.stderr.String())
	}
	// A restart mints a new certificate from the same CA: the client that
	// trusted it trusts the new server.
	a = startBinaryEnv(t, builtBinary(t), dirA, env, "-tls", "-snapshot", "a.gob")
	if r := (&testClient{t: t, base: a.url, client: trusting}).do(http.MethodGet, "/__admin/health", ""); r.Status != 200 {
		t.Errorf("after the restart: %d %s", r.Status, r.Body)
	}
	if again, err := os.ReadFile(caFile); err != nil || !bytes.Equal(again, first) {
		t.Errorf("the restart changed the CA file (%v)", err)
	}
	a.stop(syscall.SIGTERM)
	b.stop(syscall.SIGTERM)
	// Nothing of the CA beside the snapshots, and its key in neither.
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(keyPEM)
	for dir, name := range map[string]string{dirA: "a.gob", dirB: "b.gob"} {
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != name {
			t.Errorf("%s holds %v, want %s alone", dir, entries, name)
		}
		if snap, err := os.ReadFile(filepath.Join(dir, name)); err != nil || bytes.Contains(snap, block.Bytes) {
			t.Errorf("%s: %v, or it holds the CA's key", name, err)
		}
	}
}

// trustingClient trusts caPEM alone.
func trustingClient(t *testing.T, caPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("no certificate in %q", caPEM)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// Concurrent first starts (a CI job's parallel suites) make one CA: the
// one whose exclusive create of the key wins makes it, the others wait for
// it and sign with it, and every client trusts it.
func TestTLSUserCAConcurrentFirstStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	config := t.TempDir()
	const n = 4
	var outs [n]binaryRun
	t.Run("starts", func(t *testing.T) {
		for i := range n {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				outs[i] = runBinary(t, t.TempDir(), []string{"XDG_CONFIG_HOME=" + config}, "", "-tls", "--", "sh", "-c",
					`curl -fsS -o /dev/null --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health" && cat "$RESOURCEDIR_CA_FILE"`)
			})
		}
	})
	ca, err := os.ReadFile(filepath.Join(config, "resourcedir", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range outs {
		if got.code != 0 || got.stdout != string(ca) {
			t.Errorf("start %d: exit %d, stderr %q; its CA is the one in the folder: %v", i, got.code, got.stderr, got.stdout == string(ca))
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(config, "resourcedir")); len(entries) != 2 {
		t.Errorf("the CA folder holds %v, want ca.pem and ca-key.pem", entries)
	}
}

// A config folder that cannot be written does not stop -tls: the start
// says so, naming the folder, and signs with a CA for this run only.
func TestTLSUserCAUnwritable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	// sysfs takes no new folders, even from root.
	got := runBinary(t, t.TempDir(), []string{"XDG_CONFIG_HOME=/sys"}, "", "-tls", "--", "sh", "-c",
		`curl -fsS --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health"`)
	if got.code != 0 || got.stdout != `{"Status":"ok","Resources":0}` ||
		!strings.Contains(got.stderr, "level=WARN msg=\"-tls: the user's CA cannot be used; a CA for this run only signs the certificate, and clients must trust it anew\" folder=/sys/resourcedir ") {
		t.Errorf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
}

// userConfigDir reads what os.UserConfigDir reads, from the environment
// run is given.
func TestTLSUserConfigDirIsOS(t *testing.T) {
	want, wantErr := os.UserConfigDir()
	got, err := userConfigDir(environMap(os.Environ()))
	if got != want || (err == nil) != (wantErr == nil) {
		t.Errorf("userConfigDir: %q %v; os.UserConfigDir: %q %v", got, err, want, wantErr)
	}
	if got, err := userConfigDir(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}); runtime.GOOS == "linux" && (got != "/x" || err != nil) {
		t.Errorf("with XDG_CONFIG_HOME: %q %v", got, err)
	}
}

// An expired (or not yet valid) -tls-cert started silently, and every
// client then failed its handshake; the start refuses it, naming its dates.
func TestTLSOwnCertificateOutOfDateRefused(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tt := range []struct {
		name                string
		notBefore, notAfter time.Time
		want                string
	}{
		{"expired", now.Add(-48 * time.Hour), now.Add(-24 * time.Hour), "expired: NotAfter " + now.Add(-24*time.Hour).UTC().Format(time.RFC3339)},
		{"not yet valid", now.Add(24 * time.Hour), now.Add(48 * time.Hour), "is not valid yet: NotBefore " + now.Add(24*time.Hour).UTC().Format(time.RFC3339)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			certFile, keyFile := writeCertificate(t, tt.notBefore, tt.notAfter)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // should the certificate be accepted, run returns at once
			var stdout bytes.Buffer
			err := run(ctx, []string{"-addr", "127.0.0.1:0", "-snapshot", "off", "-tls-cert", certFile, "-tls-key", keyFile}, nil, &stdout, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "-tls-cert "+certFile+": the certificate "+tt.want) {
				t.Errorf("error %v, want one naming %s and saying %q", err, certFile, tt.want)
			}
			if strings.Contains(stdout.String(), "serving") {
				t.Error("served with it")
			}
		})
	}
}

// writeCertificate writes a self-signed certificate for 127.0.0.1, valid
// from notBefore to notAfter, and its key; it returns their files.
func writeCertificate(t *testing.T, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: notBefore.Truncate(time.Second), NotAfter: notAfter.Truncate(time.Second),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// A key without its certificate (a creation that died half-way, or ca.pem
// removed alone) made every -tls start wait caWait (10 s) for a creation
// under way, then sign with a CA for that run only, for ever. A key older
// than caWait with no certificate is stale: the start says so, naming it,
// and makes a new CA at once, which the next start reuses.
func TestTLSUserCAStaleKeyReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	config := t.TempDir()
	dir := filepath.Join(config, "resourcedir")
	caFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := []byte("-----BEGIN PRIVATE KEY-----\n") // a write cut short
	if err := os.WriteFile(keyFile, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(keyFile, old, old); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + config}
	const script = `curl -fsS -o /dev/null --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health" && printf %s "$RESOURCEDIR_CA_FILE"`
	got := runBinary(t, t.TempDir(), env, "", "-tls", "--", "sh", "-c", script)
	warn := `level=WARN msg="-tls: the user's CA key has no certificate and is stale (modified over 10s from now): a creation stopped half-way, or ca.pem was removed; a new CA replaces it, which clients must trust anew" file=` + keyFile + "\n"
	if got.code != 0 || got.stdout != caFile || !strings.Contains(got.stderr, warn) {
		t.Fatalf("exit %d, stdout %q (want %s), stderr %q (want %q)", got.code, got.stdout, caFile, got.stderr, warn)
	}
	certPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil || bytes.Equal(keyPEM, stale) {
		t.Errorf("the new CA's files do not pair: %v; the stale key is kept: %v", err, bytes.Equal(keyPEM, stale))
	}
	// The new CA is the user's from now on: the next start signs with it
	// and has nothing to say about it.
	again := runBinary(t, t.TempDir(), env, "", "-tls", "--", "sh", "-c", script)
	if again.code != 0 || again.stdout != caFile || strings.Contains(again.stderr, "level=WARN") {
		t.Errorf("the next start: exit %d, stdout %q, stderr %q", again.code, again.stdout, again.stderr)
	}
	if now, err := os.ReadFile(caFile); err != nil || !bytes.Equal(now, certPEM) {
		t.Errorf("the next start changed %s (%v)", caFile, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the CA folder holds %v, want ca.pem and ca-key.pem", entries)
	}
}

// A start creating the CA that fails to write the certificate removes its
// key. A start waiting for that certificate waited on for caWait, then
// told the user to remove the key that was already gone, and signed with
// a CA for its run only. It stops waiting when the key goes, and makes the
// CA itself.
func TestTLSUserCAWaitEndsWhenKeyRemoved(t *testing.T) {
	// Not parallel: it replaces caPoll.
	config := t.TempDir()
	dir := filepath.Join(config, "resourcedir")
	keyFile := filepath.Join(dir, "ca-key.pem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Another start's creation under way: its key, just made, no certificate yet.
	if err := os.WriteFile(keyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pause := caPoll
	t.Cleanup(func() { caPoll = pause })
	polls := 0
	caPoll = func() {
		if polls++; polls == 1 {
			os.Remove(keyFile) // that start failed, and removed its key
		} else {
			pause()
		}
	}
	var log bytes.Buffer
	ca, caFile, err := userCA([]string{"XDG_CONFIG_HOME=" + config}, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil || caFile != filepath.Join(dir, "ca.pem") || log.Len() != 0 || polls != 1 {
		t.Fatalf("userCA: %v, CA file %q (want %s), after %d pauses (want 1); log:\n%s", err, caFile, filepath.Join(dir, "ca.pem"), polls, log.String())
	}
	certPEM, err := os.ReadFile(caFile)
	if err != nil || !bytes.Equal(certPEM, ca.pem) {
		t.Errorf("%s is not the CA returned (%v)", caFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Errorf("the CA's files do not pair: %v", err)
	}
}

// Concurrent starts that find the same stale key each remove what is at
// its path: one that looks after another has already made a new key there
// must leave that key alone, or two CAs are made and one start's
// certificate lands beside the other's key.
func TestTLSUserCARemoveStaleKeyKeepsNewKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "ca-key.pem")
	if err := os.WriteFile(keyFile, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if removed, err := removeStaleKey(keyFile); removed || err != nil {
		t.Errorf("a new key: removed %v, %v", removed, err)
	}
	// The new key made between a start's look and its move is put back.
	if removed, err := moveStaleKey(keyFile); removed || err != nil {
		t.Errorf("a new key moved: removed %v, %v", removed, err)
	}
	if b, err := os.ReadFile(keyFile); err != nil || string(b) != "new" {
		t.Errorf("the new key is %q (%v)", b, err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(keyFile, old, old); err != nil {
		t.Fatal(err)
	}
	if removed, err := removeStaleKey(keyFile); !removed || err != nil {
		t.Errorf("a stale key: removed %v, %v", removed, err)
	}
	// Another start removed it first.
	if removed, err := removeStaleKey(keyFile); removed || err != nil {
		t.Errorf("no key: removed %v, %v", removed, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the folder: %v", entries)
	}
}

// Concurrent starts that find a stale key (a CI job's parallel suites
// after a crash) still make one CA: one of them removes the key and says
// so, and they all sign with the CA in the folder.
func TestTLSUserCAStaleKeyConcurrentStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	config := t.TempDir()
	dir := filepath.Join(config, "resourcedir")
	keyFile := filepath.Join(dir, "ca-key.pem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(keyFile, old, old); err != nil {
		t.Fatal(err)
	}
	const n = 4
	var outs [n]binaryRun
	t.Run("starts", func(t *testing.T) {
		for i := range n {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				outs[i] = runBinary(t, t.TempDir(), []string{"XDG_CONFIG_HOME=" + config}, "", "-tls", "--", "sh", "-c",
					`curl -fsS -o /dev/null --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health" && cat "$RESOURCEDIR_CA_FILE"`)
			})
		}
	})
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for i, got := range outs {
		warnings += strings.Count(got.stderr, "level=WARN msg=\"-tls: the user's CA key has no certificate and is stale")
		if got.code != 0 || got.stdout != string(ca) {
			t.Errorf("start %d: exit %d, stderr %q; its CA is the one in the folder: %v", i, got.code, got.stderr, got.stdout == string(ca))
		}
	}
	if warnings != 1 {
		t.Errorf("%d starts said they replaced the stale key, want 1", warnings)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the CA folder holds %v, want ca.pem and ca-key.pem", entries)
	}
}
