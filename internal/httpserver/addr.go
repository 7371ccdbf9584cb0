package httpserver

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// listenAddr is where the server binds, and what that implies for security.
type listenAddr struct {
	// network and hostPort are what net.Listen gets. network is "tcp4"
	// for 0.0.0.0: for "tcp" Go opens a dual-stack socket that also
	// listens on every IPv6 interface, which is not what 0.0.0.0 says and
	// may bypass a firewall written for IPv4. "[::]" asks for both.
	network  string
	hostPort string
	// host is the bound host in lower case, without brackets; empty for a
	// wildcard address.
	host string
	// loopback: only this machine can connect (127.0.0.0/8, ::1, localhost).
	loopback bool
	// wildcard: every interface (0.0.0.0, ::).
	wildcard bool
}

// resolveAddr interprets the --http address. A bare port ("8080" or
// ":8080") binds 127.0.0.1, so that forgetting the host never exposes the
// memory to the network; any other host, including 0.0.0.0, binds exactly
// what it says.
func resolveAddr(addr string) (listenAddr, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return listenAddr{}, fmt.Errorf("empty address: give a port (8080, binds 127.0.0.1) or HOST:PORT")
	}
	if isPort(addr) {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return listenAddr{}, fmt.Errorf("address %q: want a port (8080) or HOST:PORT (127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080)", addr)
	}
	if !isPort(port) {
		return listenAddr{}, fmt.Errorf("address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	host = strings.ToLower(host)
	la := listenAddr{network: "tcp", hostPort: net.JoinHostPort(host, port), host: host}
	if ip, err := netip.ParseAddr(host); err == nil {
		la.loopback = ip.IsLoopback()
		la.wildcard = ip.IsUnspecified()
		if la.wildcard {
			la.host = ""
		}
		if la.wildcard && ip.Is4() {
			la.network = "tcp4"
		}
	} else {
		la.loopback = host == "localhost"
	}
	return la, nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535 && s == strconv.Itoa(n)
}

// isLoopbackHost reports whether host (no port, no brackets) names this
// machine's loopback interface.
func isLoopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// hostOnly strips the port and IPv6 brackets from a Host header or URL host
// and lower-cases it.
func hostOnly(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}
