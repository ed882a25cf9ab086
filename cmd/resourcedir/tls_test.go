package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
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
// RESOURCEDIR_CA_FILE, which curl trusts; the temporary CA file is gone at
// exit.
func TestTLSCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	got := runBinary(t, t.TempDir(), nil, "", "-tls", "--", "sh", "-c",
		`curl -fsS --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health"`)
	m := regexp.MustCompile(`^resourcedir: serving (https://127\.0\.0\.1:[0-9]+) for sh; console (https://127\.0\.0\.1:[0-9]+)/; CA certificate (\S+/ca\.pem)\n$`).FindStringSubmatch(got.stderr)
	if got.code != 0 || got.stdout != `{"Status":"ok","Resources":0}` || m == nil || m[1] != m[2] {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if _, err := os.Stat(m[3]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary CA file %s is left: %v", m[3], err)
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
	caPEM, cert, err := generateCertificates([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
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

// Without -tls-ca-file the CA's certificate goes beside the snapshot, and
// stays there for the clients that read it.
func TestTLSCAFileBesideTheSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := runBinary(t, dir, nil, "", "-tls", "-snapshot", filepath.Join("data", "x.gob"), "--", "sh", "-c",
		`test "$RESOURCEDIR_CA_FILE" = data/resourcedir-ca.pem && curl -fsS --cacert "$RESOURCEDIR_CA_FILE" "$RESOURCEDIR_URL/__admin/health"`)
	if got.code != 0 || !strings.HasPrefix(got.stdout, `{"Status":"ok","Resources":0,`) {
		t.Errorf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "resourcedir-ca.pem")); err != nil {
		t.Errorf("the CA file: %v", err)
	}
}
