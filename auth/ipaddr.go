package auth

import (
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
)

// A policy entry's sourceIps are IPAddressUtils' forms: one address,
// compared as text with the peer's (Java's InetAddress.getHostAddress),
// or a CIDR block "addr/bits", compared as numbers (the address's host
// bits ignored, as Apache masks them). Apache also resolves host names
// there (InetAddress.getByName); rocketgo accepts literals only.

// validSourceIP is IPAddressUtils.isValidIPOrCidr for literals.
func validSourceIP(s string) bool {
	addr, bitsStr, cidr := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap() // Java reads an IPv4-mapped literal as IPv4
	if !cidr {
		return true
	}
	n, err := strconv.Atoi(bitsStr)
	if err != nil || n < 0 {
		return false
	}
	if a.Is4() {
		return n <= 32
	}
	return n <= 128
}

// javaHost is InetAddress.getHostAddress of a peer: dotted IPv4, or the
// eight uncompressed hex groups of IPv6.
func javaHost(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is4() || !ip.IsValid() {
		return ip.String()
	}
	b := ip.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	return sb.String()
}

// inRange is IPAddressUtils.isIPInRange(ip, cidr) for the peer address
// ip (host its javaHost form).
func inRange(ip netip.Addr, host, cidr string) bool {
	addr, bitsStr, isCIDR := strings.Cut(cidr, "/")
	if !isCIDR {
		return host == cidr
	}
	if strings.Contains(bitsStr, "/") {
		return false
	}
	c, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	c = c.Unmap()
	n, err := strconv.Atoi(bitsStr)
	if err != nil {
		return false
	}
	width := c.BitLen()
	if n < 0 || n > width {
		return false
	}
	// Apache compares unsigned numbers of each address's own width: an
	// IPv4 peer against an IPv6 block is a small number, not a mapped one.
	lo := toU128(c)
	span := u128{}
	if sh := width - n; sh > 0 {
		span = u128{lo: ^uint64(0), hi: ^uint64(0)}.shr(128 - sh)
	}
	lo = lo.and(span.not())
	hi := lo.add(span)
	v := toU128(ip.Unmap())
	return !v.less(lo) && !hi.less(v)
}

type u128 struct{ hi, lo uint64 }

func toU128(a netip.Addr) u128 {
	if a.Is4() {
		b := a.As4()
		return u128{lo: uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])}
	}
	b := a.As16()
	var v u128
	for i := 0; i < 8; i++ {
		v.hi = v.hi<<8 | uint64(b[i])
		v.lo = v.lo<<8 | uint64(b[i+8])
	}
	return v
}

func (v u128) not() u128       { return u128{^v.hi, ^v.lo} }
func (v u128) and(w u128) u128 { return u128{v.hi & w.hi, v.lo & w.lo} }
func (v u128) less(w u128) bool {
	return v.hi < w.hi || v.hi == w.hi && v.lo < w.lo
}
func (v u128) add(w u128) u128 {
	lo, c := bits.Add64(v.lo, w.lo, 0)
	hi, _ := bits.Add64(v.hi, w.hi, c)
	return u128{hi, lo}
}

// shr shifts right by n (0..128).
func (v u128) shr(n int) u128 {
	switch {
	case n >= 128:
		return u128{}
	case n >= 64:
		return u128{lo: v.hi >> (n - 64)}
	case n == 0:
		return v
	}
	return u128{hi: v.hi >> n, lo: v.lo>>n | v.hi<<(64-n)}
}
