package httpserver

import (
	"net/http"
	"net/url"
	"strings"
)

// hostPolicy decides which Host and Origin headers a request may carry. It
// is the defence against DNS rebinding: a web page on evil.example whose
// name was re-pointed at 127.0.0.1 reaches a loopback server with
// Host: evil.example and Origin: http://evil.example, and is refused.
type hostPolicy struct {
	addr    listenAddr
	allowed map[string]bool // extra host names (no port), lower case
}

func newHostPolicy(addr listenAddr, allowedHosts []string) hostPolicy {
	p := hostPolicy{addr: addr, allowed: map[string]bool{}}
	for _, h := range allowedHosts {
		if h = hostOnly(strings.TrimSpace(h)); h != "" {
			p.allowed[h] = true
		}
	}
	return p
}

// hostOK: loopback names always; names from --http-allowed-hosts always;
// otherwise the bound host itself, or anything on a wildcard bind that has
// no allowed list. A wildcard bind cannot know the names (DNS names, LAN
// and VPN addresses, a container's published port) its clients use, and it
// always has a token, which a DNS-rebinding page does not have: the token
// protects it. --http-allowed-hosts narrows it to the names given.
func (p hostPolicy) hostOK(hostHeader string) bool {
	h := hostOnly(hostHeader)
	switch {
	case h == "":
		return false
	case isLoopbackHost(h), p.allowed[h]:
		return true
	case p.addr.loopback:
		return false
	case p.addr.wildcard:
		return len(p.allowed) == 0
	default:
		return h == p.addr.host
	}
}

// originOK: no Origin (every non-browser client), or a browser page served
// from this machine's loopback, from the host the request is addressed to,
// or from an allowed host.
func (p hostPolicy) originOK(origin, hostHeader string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // including the opaque origin "null"
	}
	h := hostOnly(u.Host)
	return isLoopbackHost(h) || p.allowed[h] || h == hostOnly(hostHeader)
}

// guard refuses, with 403, requests whose Host or Origin fails the policy.
func (p hostPolicy) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.hostOK(r.Host) {
			http.Error(w, "Forbidden: the Host header names no host this server answers to (see --http-allowed-hosts)", http.StatusForbidden)
			return
		}
		if !p.originOK(r.Header.Get("Origin"), r.Host) {
			http.Error(w, "Forbidden: requests from this Origin are not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken extracts the token of an RFC 6750 Authorization header; the
// scheme is case-insensitive.
func bearerToken(header string) (token string, ok bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
