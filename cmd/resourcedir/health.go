package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/resourcedir/resourcedir"
)

// defaultHealthURL is the server that resourcedir serves by default.
const defaultHealthURL = "http://127.0.0.1:8080"

// runHealth is resourcedir health [URL]: the probe for a container
// HEALTHCHECK or a Kubernetes exec probe, where a scratch image has no
// shell or curl. Its error is one line that says why URL is not healthy.
func runHealth(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newSubcommand("health", "usage: resourcedir health [-timeout 3s] [URL]\n\n"+
		"Exits 0 when the server at URL answers GET /__admin/health with Status ok, 1 with the reason otherwise.\n"+
		"URL defaults to "+urlVar+" when set (as under resourcedir -- COMMAND), else to the port of\n"+
		"RESOURCEDIR_ADDR on 127.0.0.1 when set (as in the container image), else to "+defaultHealthURL+".")
	timeout := 3 * time.Second
	fs.Var(durationFlag{&timeout}, "timeout", "give up after this `duration` (connecting and answering included)")
	if err := parseSubcommand(fs, args, 1, stderr); err != nil {
		return fmt.Errorf("health: %w", err) // flag.ErrHelp included: Main tells it by errors.Is
	}
	if timeout <= 0 {
		return fmt.Errorf("health: -timeout must be positive, not %s", timeout)
	}
	env := environMap(environ)
	base := healthBase(fs.Arg(0), env)
	target := strings.TrimSuffix(base, "/") + "/__admin/health"
	// A server run with -tls: its CA, as resourcedir -- COMMAND gives it.
	caFile := ""
	if strings.HasPrefix(base, "https://") {
		caFile = env[caFileVar]
	}
	client, err := resourcedir.TrustingClient(caFile, timeout)
	if err != nil {
		return fmt.Errorf("health: %s=%s: %w", caFileVar, caFile, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := probeHealth(ctx, client, target); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("health: %s: no answer within %s", target, timeout)
		}
		return fmt.Errorf("health: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "ok %s\n", target)
	return err
}

// healthBase is the base URL the probe asks: the argument, else the one
// resourcedir -- COMMAND hands its command, else RESOURCEDIR_ADDR's port (an
// image whose port was changed keeps its HEALTHCHECK), else the default.
func healthBase(arg string, env map[string]string) string {
	switch {
	case arg != "":
		if !strings.Contains(arg, "://") {
			return "http://" + arg
		}
		return arg
	case env[urlVar] != "":
		return env[urlVar]
	}
	addr := env[envName("addr")]
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		return defaultHealthURL
	}
	// The probe runs beside the server, which also passes the loopback
	// Host check.
	return servedURL("http", addr)
}

// probeHealth asks target once and says why its answer is not a healthy
// server's, on one line.
func probeHealth(ctx context.Context, client *http.Client, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err // *url.Error: "Get "URL": dial tcp ...: connection refused"
	}
	defer resp.Body.Close()
	// A health answer is a few hundred bytes: more is not ours.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", target, err)
	}
	var h struct{ Status string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" {
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, oneLine(body, 200))
	}
	return nil
}

// oneLine is at most n bytes of b with its whitespace runs folded into
// single spaces: an answer quoted in a one-line message.
func oneLine(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(empty body)"
	}
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
