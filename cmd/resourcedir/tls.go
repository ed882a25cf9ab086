package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/resourcedir/resourcedir"
)

// tlsValidity is how long a generated certificate is good for: a test
// double's run, not a deployment's.
const tlsValidity = 7 * 24 * time.Hour

// useTLS makes l serve HTTPS: it loads -tls-cert and -tls-key, or generates
// a CA and a certificate it signs for the loopback names and -allowed-hosts,
// writing the CA's to -tls-ca-file, beside the snapshot, or a temporary folder.
func (l *listening) useTLS(o *options) error {
	l.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.tlsCert != "" || o.tlsKey != "" {
		if o.tlsCert == "" || o.tlsKey == "" {
			return errors.New("-tls-cert and -tls-key go together: give both files")
		}
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("-tls-cert %s, -tls-key %s: %w", o.tlsCert, o.tlsKey, err)
		}
		l.tls.Certificates = []tls.Certificate{cert}
		return nil
	}
	caPEM, cert, err := generateCertificates(append([]string{"localhost", "127.0.0.1", "::1"}, o.cfg.AllowedHosts...))
	if err != nil {
		return fmt.Errorf("-tls: %w", err)
	}
	l.tls.Certificates, l.caFile = []tls.Certificate{cert}, o.tlsCAFile
	switch {
	case l.caFile != "":
	case o.cfg.Snapshot != "":
		l.caFile = filepath.Join(filepath.Dir(o.cfg.Snapshot), "resourcedir-ca.pem")
	default:
		dir, err := os.MkdirTemp("", "resourcedir-tls-")
		if err != nil {
			return fmt.Errorf("-tls: a folder for the CA file: %w", err)
		}
		l.caFile = filepath.Join(dir, "ca.pem")
		l.close = func() { os.RemoveAll(dir) }
	}
	if err := resourcedir.WriteFileAtomic(l.caFile, caPEM); err != nil {
		l.close()
		return fmt.Errorf("-tls: write the CA file: %w", err)
	}
	return nil
}

// generateCertificates makes a CA (its certificate as PEM, for clients to
// trust) and a server certificate it signs for names, both ECDSA P-256.
func generateCertificates(names []string) ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	// No SerialNumber: CreateCertificate makes a random one, as RFC 5280 asks of a CA.
	ca := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "resourcedir test CA", Organization: []string{"resourcedir"}},
		NotBefore:             now.Add(-time.Hour), // a client whose clock is a little behind
		NotAfter:              now.Add(tlsValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	leaf := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "resourcedir", Organization: []string{"resourcedir"}},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(tlsValidity),
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
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}, nil
}

// listening is where the server listens: the listener, the URL a client
// on this machine reaches it by, and with -tls what it serves with.
type listening struct {
	ln     net.Listener
	served string
	tls    *tls.Config // nil: plain HTTP
	caFile string      // the generated certificate's CA; "" without one
	close  func()      // removes a temporary CA file
}

// listen makes o's certificate when -tls asks for one, listens on o's
// address, and writes the -addr-file once connections queue.
func listen(o *options) (*listening, error) {
	l := &listening{close: func() {}}
	scheme := "http"
	if o.tls {
		if err := l.useTLS(o); err != nil {
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
		if err := resourcedir.WriteFileAtomic(o.addrFile, []byte(l.served+"\n")); err != nil {
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
