package resourcedir

import (
	"cmp"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Who may reach the server: the local-access rules that keep a web page out
// (the README's "Local access"), CORS for browser clients, and HTTP Basic
// authentication.

// checkLocal refuses what a web page could send to a local instance: a
// Host that is not this machine's (DNS rebinding) when the server listens
// on loopback, and a state-changing request from a foreign Origin (a form
// posted to /__admin/reset). It reports whether the request may go on.
func (s *Server) checkLocal(x *exchange, r *http.Request) bool {
	if s.cfg.loopbackOnly && !s.hostAllowed(r.Host) && !(r.Host == "" && fromLoopback(r)) {
		s.writeError(x, errorf(http.StatusForbidden, "The Host %q is not a loopback name; this server listens on loopback only. Start it with -allowed-hosts %s to admit that name.",
			r.Host, hostName(r.Host)))
		return false
	}
	origin := r.Header.Get("Origin")
	// Fetch Metadata says where a page's request comes from even without an
	// Origin (an <img>): another site's page may not reach in even with a
	// GET, which would create namespaces until every test's new one is refused.
	if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") && !s.corsAdmits(origin) {
		from := "another site"
		if origin != "" {
			from = "the web page at " + origin
		}
		s.refusePage(x, r, origin, fmt.Sprintf(
			"A request from %s (Sec-Fetch-Site: %s) is refused: a web page may not reach this server. %s",
			from, site, s.corsAdvice(origin)))
		return false
	}
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
	if safe || origin == "" || s.originAllowed(origin, r.Host) {
		return true
	}
	s.refusePage(x, r, origin, fmt.Sprintf(
		"A %s from the web page at %s is refused: only the server's own origin and the -cors origins may change its state. %s",
		r.Method, origin, s.corsAdvice(origin)))
	return false
}

// refusePage answers 403 to a web page's request. The page cannot read
// the answer (no CORS headers: it is not admitted), so the reason goes
// where a person looks: a warning naming the origin and the -cors value
// that admits it, and the namespace's journal (the console's request
// list) when the namespace exists; none is created for it.
func (s *Server) refusePage(x *exchange, r *http.Request, origin, message string) {
	s.log.Warn("refused a request from a web page", "origin", origin, "method", r.Method, "path", x.path,
		"admit_with", s.corsFlag(origin))
	if x.ns != nil {
		s.startJournal(x, r)
	}
	s.writeError(x, errorf(http.StatusForbidden, "%s", message))
}

// corsFlag is the -cors flag that admits the page of origin besides those
// admitted already.
func (s *Server) corsFlag(origin string) string {
	if origin == "" || validOrigin(origin) != nil {
		return "-cors ORIGIN"
	}
	return "-cors " + strings.Join(append(slices.Clone(s.cfg.CORSOrigins), origin), ",")
}

// corsAdvice says how to admit the page of origin: the exact flag, with
// the origins already admitted.
func (s *Server) corsAdvice(origin string) string {
	if origin == "" || validOrigin(origin) != nil {
		return "Start it with -cors ORIGIN (scheme://host[:port]) to admit that page's origin."
	}
	return fmt.Sprintf("Start it with %s to admit that page's origin.", s.corsFlag(origin))
}

// validOrigin checks a -cors origin: "*", or scheme://host[:port] as a
// browser sends it in Origin, with nothing after.
func validOrigin(origin string) error {
	if origin == "*" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(origin, "?") || strings.HasSuffix(origin, "#") {
		return fmt.Errorf("%q is not an origin: give scheme://host[:port], such as http://localhost:3000, or * for any", origin)
	}
	return nil
}

// ParseOrigins reads a list of origins as -cors takes it: separated by
// commas, each checked.
func ParseOrigins(list string) ([]string, error) {
	var origins []string
	for _, o := range strings.Split(list, ",") {
		// A browser's Origin has no slash after the host; a user's may.
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o == "" {
			continue
		}
		if err := validOrigin(o); err != nil {
			return nil, err
		}
		origins = append(origins, o)
	}
	return origins, nil
}

// fromLoopback reports whether r came over a loopback connection. A
// browser always sends a Host, so a request without one (HTTP/1.0 allows
// it) is no web page's and is served when it came from this machine.
func fromLoopback(r *http.Request) bool {
	ip, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ip.Addr().IsLoopback()
}

// hostName is a Host header without its port.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// hostAllowed: a loopback name (as isLoopbackAddr has it) or an -allowed-hosts one.
func (s *Server) hostAllowed(host string) bool {
	name := hostName(host)
	if isLoopbackAddr(net.JoinHostPort(name, "0")) {
		return true
	}
	return slices.ContainsFunc(s.cfg.AllowedHosts, func(allowed string) bool {
		return allowed == "*" || strings.EqualFold(allowed, name)
	})
}

// originAllowed: the page the console serves (same host) and the -cors
// origin may change state; any other page may not.
func (s *Server) originAllowed(origin, host string) bool {
	if s.corsAdmits(origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// corsAdmits reports whether -cors admits a page of origin ("" when the
// browser sent none: only -cors * admits that).
func (s *Server) corsAdmits(origin string) bool {
	return slices.ContainsFunc(s.cfg.CORSOrigins, func(o string) bool {
		return o == "*" || origin != "" && strings.EqualFold(o, origin)
	})
}

// corsExposed are the answer's headers a page may read: those a client's
// retry logic and tests need, whatever a fault adds.
var corsExposed = []string{"Location", "Retry-After", "X-Request-Id"}

// cors adds the CORS headers and answers preflights, which carry no
// credentials and so come before authentication. It reports whether the
// request was answered.
func (s *Server) cors(x *exchange, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := x.Header()
	h.Add("Vary", "Origin")
	if !s.corsAdmits(origin) {
		return false
	}
	if slices.Contains(s.cfg.CORSOrigins, "*") {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	exposed := corsExposed
	if x.ns != nil {
		exposed = x.ns.faults.exposedHeaders(exposed)
	}
	h.Set("Access-Control-Expose-Headers", strings.Join(exposed, ", "))
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers",
		cmp.Or(r.Header.Get("Access-Control-Request-Headers"), "Authorization, Content-Type, X-Request-Id"))
	h.Set("Access-Control-Max-Age", "600")
	x.WriteHeader(http.StatusNoContent)
	return true
}

// authenticate checks HTTP Basic credentials and answers 401 when they are
// missing or wrong; health probes get in without any, to a smaller answer.
// It reports whether the request may go on.
func (s *Server) authenticate(x *exchange, r *http.Request) bool {
	user, token, ok := r.BasicAuth()
	wantUser, wantToken, _ := strings.Cut(s.cfg.Auth, ":")
	// Constant time, so that the time taken does not tell how much of a
	// guess was right.
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(wantUser))
	tokenOK := subtle.ConstantTimeCompare([]byte(token), []byte(wantToken))
	if ok && userOK&tokenOK == 1 {
		return true
	}
	// HEAD is GET without the body: a probe may use either.
	if r.Header.Get("Authorization") == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/__admin/health" {
		x.anonymous = true
		return true
	}
	x.refused = true
	x.Header().Set("WWW-Authenticate", `Basic realm="resourcedir"`)
	s.writeError(x, errorf(http.StatusUnauthorized, "Authentication is required: send HTTP Basic credentials (user name and API token)."))
	return false
}

// isLoopbackAddr reports whether addr listens on loopback only, where the
// Host checks against DNS rebinding apply.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback())
}
