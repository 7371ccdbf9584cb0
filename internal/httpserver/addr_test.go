package httpserver

import "testing"

// 0.0.0.0 means every IPv4 interface, as the help and the README say. Go
// would otherwise open a dual-stack socket for it and listen on IPv6 too,
// where a firewall written for IPv4 does not look; [::] asks for both.
func TestWildcardAddressFamilies(t *testing.T) {
	for _, tc := range []struct{ in, network string }{
		{"0.0.0.0:8080", "tcp4"},
		{"[::]:8080", "tcp"},
		{"8080", "tcp"},
		{"192.168.1.5:8080", "tcp"},
		{"[::1]:8080", "tcp"},
	} {
		got, err := resolveAddr(tc.in)
		if err != nil {
			t.Fatalf("resolveAddr(%q): %v", tc.in, err)
		}
		if got.network != tc.network {
			t.Errorf("resolveAddr(%q) listens on %q, want %q", tc.in, got.network, tc.network)
		}
	}
}
