package acl

import (
	"net/netip"
	"testing"
)

func TestAddressPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"", nil, []string{"127.0.0.1"}},
		{"*", []string{"127.0.0.1", "::1"}, nil},
		{"*.*.*.*", []string{"10.1.2.3"}, nil},
		{"192.168.0.1", []string{"192.168.0.1", "::ffff:192.168.0.1"}, []string{"192.168.0.2"}},
		{"192.168.0.{1,2}", []string{"192.168.0.1", "192.168.0.2"}, []string{"192.168.0.3"}},
		{"192.168.0.1,10.0.0.1", []string{"10.0.0.1"}, []string{"10.0.0.2"}},
		{"192.168.1.1-100", []string{"192.168.1.1", "192.168.1.100"}, []string{"192.168.1.101", "192.168.2.50"}},
		{"192.168.*.*", []string{"192.168.200.3"}, []string{"192.169.0.1"}},
		{"10.10.103.*", []string{"10.10.103.7"}, []string{"10.10.104.7"}},
		// Apache compares only the first ranged octet: later ones are not read.
		{"10.1-3.7.7", []string{"10.2.9.9"}, []string{"10.4.7.7"}},
		{"010.1.1.*", nil, []string{"10.1.1.1"}},
		{"::1", []string{"::1"}, []string{"::2"}},
		{"fe80::{1,2}", []string{"fe80::2"}, []string{"fe80::3"}},
	}
	for _, tt := range tests {
		a, err := ParseAddress(tt.pattern)
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		for _, ip := range tt.match {
			if !a.Match(netip.MustParseAddr(ip)) {
				t.Errorf("%q does not match %s", tt.pattern, ip)
			}
		}
		for _, ip := range tt.miss {
			if a.Match(netip.MustParseAddr(ip)) {
				t.Errorf("%q matches %s", tt.pattern, ip)
			}
		}
	}
}

// Apache refuses these when it loads the file; so does rocketgo.
func TestAddressRefused(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"10.0.0.0/8", "192.168.1", "192.168.1.{1,2", "1.2.{3,4}", "192.168.1.300",
		"192.168.1.100-1", "192.168.1.-5", "1-2.3.4.5", "192.168.1.{1,x}", "::1-ff"} {
		if _, err := ParseAddress(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}
