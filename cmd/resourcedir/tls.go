package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/resourcedir/resourcedir"
)

// tlsValidity is how long a minted server certificate is good for: a
// test double's run, not a deployment's. The CA lasts for years, as
// mkcert's does: a trust store trusts it once.
const (
	tlsValidity = 7 * 24 * time.Hour
	caValidity  = 10 * 365 * 24 * time.Hour
)

// The user's CA: <os.UserConfigDir>/resourcedir/caCertName and caKeyName.
const (
	caCertName = "ca.pem"
	caKeyName  = "ca-key.pem"
)

// caWait is how long a start waits for another start's CA to be complete
// (its key exists, its certificate not yet): a creation takes milliseconds,
// so a key with no certificate that was last written longer ago is stale,
// left by a creation that died half-way or by a user who removed ca.pem.
const caWait = 10 * time.Second

// caRounds bounds one start's exclusive creates of the key: a second
// follows a creation that gave up or a stale key removed, a third a race
// with another start doing the same; more would chase starts that keep
// failing.
const caRounds = 3

var (
	errCAKeyGone  = errors.New("removed before its certificate appeared: the start creating the CA failed (its warning says why)")
	errCAKeyStale = fmt.Errorf("has no certificate and was modified over %v ago (or ahead of this machine's clock)", caWait)
)

// useTLS makes l serve HTTPS: it loads -tls-cert and -tls-key, or mints a
// certificate for the loopback names and -allowed-hosts, signed by the
// user's CA (userCA), whose certificate it names in l.caFile, or copies to
// -tls-ca-file.
func (l *listening) useTLS(o *options, environ []string, logger *slog.Logger) error {
	l.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.tlsCert != "" || o.tlsKey != "" {
		if o.tlsCert == "" || o.tlsKey == "" {
			return errors.New("-tls-cert and -tls-key go together: give both files")
		}
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("-tls-cert %s, -tls-key %s: %w", o.tlsCert, o.tlsKey, err)
		}
		// Served anyway, it fails every client's handshake, far from here.
		if err := checkValidity(cert.Leaf, time.Now()); err != nil {
			return fmt.Errorf("-tls-cert %s: %w", o.tlsCert, err)
		}
		l.tls.Certificates = []tls.Certificate{cert}
		return nil
	}
	ca, caFile, err := userCA(environ, logger)
	if err != nil {
		return fmt.Errorf("-tls: %w", err)
	}
	cert, err := ca.mint(append([]string{"localhost", "127.0.0.1", "::1"}, o.cfg.AllowedHosts...))
	if err != nil {
		return fmt.Errorf("-tls: %w", err)
	}
	l.tls.Certificates = []tls.Certificate{cert}
	switch {
	case o.tlsCAFile != "":
		if err := resourcedir.WriteFileAtomic(o.tlsCAFile, ca.pem, 0o644); err != nil {
			return fmt.Errorf("-tls-ca-file: %w", err)
		}
		l.caFile = o.tlsCAFile
	case caFile != "":
		l.caFile = caFile
	default:
		// A CA for this run only: its certificate in a folder of its own,
		// removed at exit.
		dir, err := os.MkdirTemp("", "resourcedir-tls-")
		if err != nil {
			return fmt.Errorf("-tls: a folder for the CA file: %w", err)
		}
		l.caFile = filepath.Join(dir, caCertName)
		l.close = func() { os.RemoveAll(dir) }
		if err := resourcedir.WriteFileAtomic(l.caFile, ca.pem, 0o644); err != nil {
			l.close()
			return fmt.Errorf("-tls: write the CA file: %w", err)
		}
	}
	return nil
}

// checkValidity refuses a certificate that is out of its dates at now.
func checkValidity(leaf *x509.Certificate, now time.Time) error {
	const layout = time.RFC3339
	switch {
	case leaf == nil:
		return nil
	case now.After(leaf.NotAfter):
		return fmt.Errorf("the certificate expired: NotAfter %s (NotBefore %s); renew it, or use -tls for a generated one",
			leaf.NotAfter.UTC().Format(layout), leaf.NotBefore.UTC().Format(layout))
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("the certificate is not valid yet: NotBefore %s (NotAfter %s); check this machine's clock",
			leaf.NotBefore.UTC().Format(layout), leaf.NotAfter.UTC().Format(layout))
	}
	return nil
}

// localCA signs the certificates that -tls serves.
type localCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte // cert, for clients to trust
}

// userCA returns the user's CA, made by the first start that needs it and
// reused by every server and restart, so that a trust store trusts it once,
// and its certificate's file. When its folder cannot be used, it says so
// and returns a CA for this run only, with no file ("").
func userCA(environ []string, logger *slog.Logger) (*localCA, string, error) {
	base, err := userConfigDir(environMap(environ))
	if err == nil {
		dir := filepath.Join(base, "resourcedir")
		ca, err := loadOrCreateCA(dir, logger)
		if err == nil {
			return ca, filepath.Join(dir, caCertName), nil
		}
		logger.Warn("-tls: the user's CA cannot be used; a CA for this run only signs the certificate, and clients must trust it anew",
			"folder", dir, "error", err)
	} else {
		logger.Warn("-tls: no folder for the user's CA; a CA for this run only signs the certificate, and clients must trust it anew", "error", err)
	}
	ca, err := newCA()
	return ca, "", err
}

// userConfigDir is os.UserConfigDir read from environ, the environment
// run is given: tests give theirs, not the user's.
func userConfigDir(env map[string]string) (string, error) {
	var dir string
	switch runtime.GOOS {
	case "windows":
		if dir = env["AppData"]; dir == "" {
			dir = env["APPDATA"]
		}
		if dir == "" {
			return "", errors.New("%AppData% is not set")
		}
		return dir, nil
	case "darwin", "ios":
		if dir = env["HOME"]; dir == "" {
			return "", errors.New("$HOME is not set")
		}
		return filepath.Join(dir, "Library", "Application Support"), nil
	}
	if dir = env["XDG_CONFIG_HOME"]; dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("$XDG_CONFIG_HOME %q is relative", dir)
		}
		return dir, nil
	}
	if dir = env["HOME"]; dir == "" {
		return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
	}
	return filepath.Join(dir, ".config"), nil
}

// loadOrCreateCA reads the CA in dir, or makes it. The key is created
// with O_EXCL, so of concurrent first starts one makes the CA; the others
// wait until its certificate, written after the key and renamed into
// place, appears. When that creation gives up (the key goes) or died long
// ago (the key is stale: it says so on logger), the key is created anew
// with the same discipline, so concurrent starts still agree on one CA.
func loadOrCreateCA(dir string, logger *slog.Logger) (*localCA, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, caKeyName)
	for round := 1; ; round++ {
		f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return createCA(dir, f)
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		ca, err := waitForCA(dir, 3*caWait)
		switch {
		case round == caRounds && errors.Is(err, errCAKeyGone):
			return nil, fmt.Errorf("%s was %w, %d times in a row", keyPath, err, caRounds)
		case round == caRounds && errors.Is(err, errCAKeyStale):
			return nil, fmt.Errorf("%s %w; remove it to make a new CA", keyPath, err)
		case errors.Is(err, errCAKeyGone):
			continue
		case errors.Is(err, errCAKeyStale):
			removed, err := removeStaleKey(keyPath)
			if err != nil {
				return nil, fmt.Errorf("remove the stale %s: %w", keyPath, err)
			}
			// A CA nothing trusts yet replaces it: the key alone cannot be
			// trusted (ca.pem is gone), and may be cut short.
			if removed {
				logger.Warn("-tls: the user's CA key has no certificate and is stale (modified over "+caWait.String()+
					" from now): a creation stopped half-way, or ca.pem was removed; a new CA replaces it, which clients must trust anew",
					"file", keyPath)
			}
			continue
		}
		return ca, err
	}
}

// createCA makes a CA in dir: its key into f, the key file that the
// exclusive create made, then its certificate.
func createCA(dir string, f *os.File) (*localCA, error) {
	keyPath := filepath.Join(dir, caKeyName)
	ca, err := newCA()
	if err == nil {
		err = writeCAKey(f, keyPath, ca.key)
	} else {
		f.Close()
	}
	if errors.Is(err, errCAKeyReplaced) {
		return nil, err // the key there is another start's
	}
	if err == nil {
		err = resourcedir.WriteFileAtomic(filepath.Join(dir, caCertName), ca.pem, 0o644)
	}
	if err != nil {
		// Half a CA would keep every later start waiting.
		os.Remove(keyPath)
		return nil, err
	}
	return ca, nil
}

// errCAKeyReplaced: another key is in the folder in place of the one a
// creation wrote, which took so long that it was judged stale; the
// creation's certificate must not land beside another's key.
var errCAKeyReplaced = fmt.Errorf("the key this start was writing was replaced by another start's: writing it took over %v", caWait)

// writeCAKey writes key to f, durably, and closes f; f must not have been
// replaced at keyPath by then.
func writeCAKey(f *os.File, keyPath string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err == nil {
		_, err = f.Write(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	if err == nil {
		err = f.Sync()
	}
	var mine, there fs.FileInfo
	if err == nil {
		mine, err = f.Stat()
	}
	if err == nil {
		// None there may be this one, moved aside for a moment (moveStaleKey).
		if there, err = os.Stat(keyPath); errors.Is(err, fs.ErrNotExist) {
			err = nil
		} else if err == nil && !os.SameFile(mine, there) {
			err = errCAKeyReplaced
		}
	}
	return errors.Join(err, f.Close())
}

// waitForCA reads the CA in dir, waiting for a creation under way to
// finish. It returns errCAKeyGone when the key goes, and errCAKeyStale
// when it is stale, instead of waiting on; as any key turns stale within
// 2*caWait, timeout (longer) only ends a wait on a key that something
// keeps modifying.
func waitForCA(dir string, timeout time.Duration) (*localCA, error) {
	keyPath := filepath.Join(dir, caKeyName)
	deadline := time.Now().Add(timeout)
	for {
		ca, err := readCA(dir)
		if !errors.Is(err, fs.ErrNotExist) {
			return ca, err
		}
		fi, err := os.Stat(keyPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, errCAKeyGone
		case err != nil:
			return nil, err
		case isStaleKey(fi):
			return nil, errCAKeyStale
		case time.Now().After(deadline):
			return nil, fmt.Errorf("%s has had no %s for %v, yet is not stale: something keeps modifying it (last at %s); stop that, or remove it to make a new CA",
				keyPath, caCertName, timeout, fi.ModTime().UTC().Format(time.RFC3339))
		}
		caPoll()
	}
}

// caPoll pauses between two looks at a CA another start is creating; a
// test replaces it to act at that moment, as another start would.
var caPoll = func() { time.Sleep(10 * time.Millisecond) }

// isStaleKey tells a key with no certificate left by a creation long
// over from one whose creation is under way. A key modified over caWait
// ahead of now is stale too: a creation stamps it now, and a clock set
// back would otherwise keep every start waiting until it caught up.
func isStaleKey(fi fs.FileInfo) bool {
	age := time.Since(fi.ModTime())
	return age > caWait || age < -caWait
}

// removeStaleKey removes the stale key at keyPath, to create it anew,
// and reports whether it removed one. Concurrent starts may find it stale
// together, and one of them may have removed it and be writing a new key
// there already: see moveStaleKey.
func removeStaleKey(keyPath string) (bool, error) {
	// Most often another start has replaced it already: nothing to move.
	if fi, err := os.Stat(keyPath); err != nil || !isStaleKey(fi) {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return false, err
	}
	return moveStaleKey(keyPath)
}

// moveStaleKey moves what is at keyPath aside, then removes it if it is
// stale and puts it back if not, so that no start removes another's new
// key. (A third start could create a key in the moment a new one is
// aside: the putting back then fails, and the start whose key it was
// refuses to write its certificate if it finds the third key in place
// before; this window, after the one before the move, is left.)
func moveStaleKey(keyPath string) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(keyPath), "."+caKeyName+".stale*")
	if err != nil {
		return false, err
	}
	aside := tmp.Name()
	tmp.Close()
	if err := os.Rename(keyPath, aside); err != nil {
		os.Remove(aside)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // another start removed it
		}
		return false, err
	}
	fi, err := os.Stat(aside)
	if err != nil {
		return false, err
	}
	if isStaleKey(fi) {
		return true, os.Remove(aside)
	}
	// Link, unlike rename, does not replace a key a third start made meanwhile.
	if err := os.Link(aside, keyPath); err != nil {
		return false, fmt.Errorf("another start's new key, moved aside to %s, cannot be put back: %w", aside, err)
	}
	return false, os.Remove(aside)
}

// readCA reads the CA's certificate and key in dir and checks they belong
// together and are in date.
func readCA(dir string) (*localCA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, caCertName))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, caKeyName))
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w; remove both to make a new CA", caCertName, caKeyName, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || !pair.Leaf.IsCA {
		return nil, fmt.Errorf("%s is not a CA; remove it and %s to make a new one", caCertName, caKeyName)
	}
	if err := checkValidity(pair.Leaf, time.Now()); err != nil {
		return nil, fmt.Errorf("%s: %w; remove it and %s to make a new CA", caCertName, err, caKeyName)
	}
	return &localCA{cert: pair.Leaf, key: signer, pem: certPEM}, nil
}

// newCA makes a CA, ECDSA P-256.
func newCA() (*localCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	// No SerialNumber: CreateCertificate makes a random one, as RFC 5280 asks of a CA.
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "resourcedir local CA", Organization: []string{"resourcedir"}},
		NotBefore:             now.Add(-time.Hour), // a client whose clock is a little behind
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &localCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// mint makes a server certificate for names, signed by ca; its key lives
// in memory only.
func (ca *localCA) mint(names []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	notAfter := now.Add(tlsValidity)
	if ca.cert.NotAfter.Before(notAfter) {
		notAfter = ca.cert.NotAfter // a leaf outliving its CA fails to verify
	}
	leaf := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "resourcedir", Organization: []string{"resourcedir"}},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, name := range names {
		switch ip := net.ParseIP(strings.Trim(name, "[]")); {
		case name == "*" || name == "":
			// -allowed-hosts * admits any Host; no certificate names them all.
		case ip != nil:
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		default:
			leaf.DNSNames = append(leaf.DNSNames, name)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}, nil
}

// listening is where the server listens: the listener, the URL a client
// on this machine reaches it by, and with -tls what it serves with.
type listening struct {
	ln     net.Listener
	served string
	tls    *tls.Config // nil: plain HTTP
	caFile string      // the minted certificate's CA; "" without one
	close  func()      // removes a run-only CA's file
}

// listen makes o's certificate when -tls asks for one, listens on o's
// address, and writes the -addr-file once connections queue.
func listen(o *options, environ []string, logger *slog.Logger) (*listening, error) {
	l := &listening{close: func() {}}
	scheme := "http"
	if o.tls {
		if err := l.useTLS(o, environ, logger); err != nil {
			return nil, err
		}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		l.close()
		return nil, listenError(o.addr, err)
	}
	l.ln, l.served = ln, servedURL(scheme, ln.Addr().String())
	if o.addrFile != "" {
		// The listener queues connections from now on, so the URL is
		// good as soon as the file appears.
		if err := resourcedir.WriteFileAtomic(o.addrFile, []byte(l.served+"\n"), 0o600); err != nil {
			ln.Close()
			l.close()
			return nil, fmt.Errorf("-addr-file: %w", err)
		}
	}
	return l, nil
}

// listenError says what to do about the commonest failure to listen: a
// port another process holds.
func listenError(addr string, err error) error {
	host, port, splitErr := net.SplitHostPort(addr)
	if !errors.Is(err, syscall.EADDRINUSE) || splitErr != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return fmt.Errorf("listen on %s: port %s is already in use; choose another with -addr %s, or -addr %s for a free one",
		addr, port, net.JoinHostPort(host, "PORT"), net.JoinHostPort(host, "0"))
}

// servedURL is the URL a client on this machine reaches addr (host:port)
// by: a listener on every interface is reached on the loopback address.
func servedURL(scheme, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
