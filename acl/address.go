package acl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Address is one whiteRemoteAddress / globalWhiteRemoteAddresses pattern,
// as RemoteAddressStrategyFactory reads it:
//
//	""                  matches nothing (a blank account address)
//	*  *.*.*.*          matches everything (also *:*:*:*:*:*:*:*)
//	192.168.0.1         one address (IPv4 or IPv6)
//	192.168.0.{1,2}     a set: the prefix plus each member
//	192.168.0.1,10.0.0.1  a set
//	192.168.1.1-100     a range of the first octet (after the first) that
//	192.168.*.*         is "*" or "a-b"; later octets are not compared
//
// Apache has no CIDR: "10.0.0.0/8" is refused as it refuses it. IPv6
// ranges ("::1-ff") are refused by rocketgo (not read yet); IPv6 single
// addresses and sets work.
type Address struct {
	kind   addrKind
	set    map[netip.Addr]struct{} // addrOne, addrSet
	head   [3]int                  // addrRange: the octets before idx, compared as they are
	idx    int                     // addrRange: the octet compared (1..3)
	lo, hi int
	// never: a head octet written with a leading zero ("010"): Apache
	// compares text, so no peer address matches it.
	never bool
}

type addrKind uint8

const (
	addrNone addrKind = iota
	addrAll
	addrSet
	addrRange
)

// ParseAddress reads one pattern; the error is Apache's message.
func ParseAddress(s string) (Address, error) {
	if strings.TrimSpace(s) == "" {
		return Address{kind: addrNone}, nil
	}
	if s == "*" || s == "*.*.*.*" || s == "*:*:*:*:*:*:*:*" {
		return Address{kind: addrAll}, nil
	}
	if strings.HasSuffix(s, "}") {
		sep := "."
		if strings.Contains(s, ":") {
			sep = ":"
		}
		parts := split(s, sep)
		if sep == "." && len(parts) < 4 {
			return Address{}, fmt.Errorf("multipleRemoteAddressStrategy has got a/some wrong format IP(s) %s", s)
		}
		last := parts[len(parts)-1]
		if !strings.HasPrefix(last, "{") {
			return Address{}, fmt.Errorf("multipleRemoteAddressStrategy netaddress examine scope Exception netaddress %s", s)
		}
		prefix := s[:strings.IndexByte(s, '{')]
		members := split(last[1:len(last)-1], ",")
		for i, m := range members {
			members[i] = prefix + m
		}
		return setOf(members)
	}
	if strings.Contains(s, ",") {
		return setOf(split(s, ","))
	}
	if strings.Contains(s, "*") || strings.Contains(s, "-") {
		return parseRange(s)
	}
	return setOf([]string{s})
}

func setOf(members []string) (Address, error) {
	a := Address{kind: addrSet, set: make(map[netip.Addr]struct{}, len(members))}
	for _, m := range members {
		ip, err := netip.ParseAddr(m)
		if err != nil || ip.Zone() != "" {
			return Address{}, fmt.Errorf("netaddress examine Exception netaddress is %s", m)
		}
		a.set[ip.Unmap()] = struct{}{}
	}
	return a, nil
}

// parseRange is RangeRemoteAddressStrategy for IPv4: the first of octets
// 1..3 that is "*" or "a-b" is the one compared.
func parseRange(s string) (Address, error) {
	if strings.Contains(s, ":") {
		return Address{}, fmt.Errorf("ipv6 address range %s is not supported by rocketgo", s)
	}
	parts := split(s, ".")
	if len(parts) != 4 {
		return Address{}, fmt.Errorf("netaddress examine scope Exception netaddress is %s", s)
	}
	for i := 1; i <= 3; i++ {
		v := strings.TrimSpace(parts[i])
		lo, hi := 0, 0
		switch {
		case v == "*":
			lo, hi = 0, 255
		case strings.Contains(v, "-"):
			if strings.HasPrefix(v, "-") {
				return Address{}, fmt.Errorf("rangeRemoteAddressStrategy netaddress examine scope Exception value %s", v)
			}
			ends := split(v, "-")
			if len(ends) != 2 {
				return Address{}, fmt.Errorf("rangeRemoteAddressStrategy netaddress examine scope Exception value %s", v)
			}
			var err1, err2 error
			lo, err1 = strconv.Atoi(ends[0])
			hi, err2 = strconv.Atoi(ends[1])
			if err1 != nil || err2 != nil || lo < 0 || hi > 255 || lo > hi {
				return Address{}, fmt.Errorf("rangeRemoteAddressStrategy netaddress examine scope Exception start is %s , end is %s", ends[0], ends[1])
			}
		}
		if hi == 0 {
			continue
		}
		a := Address{kind: addrRange, idx: i, lo: lo, hi: hi}
		for j := 0; j < i; j++ {
			t := strings.TrimSpace(parts[j])
			o, err := strconv.Atoi(t)
			if err != nil || o < 0 || o > 255 {
				return Address{}, fmt.Errorf("netaddress examine scope Exception netaddress is %s", s)
			}
			a.head[j] = o
			a.never = a.never || strconv.Itoa(o) != t
		}
		return a, nil
	}
	// Apache accepts this and then fails every match (a null head).
	return Address{}, fmt.Errorf("netaddress examine scope Exception netaddress is %s", s)
}

// Match says whether the peer address ip matches.
func (a Address) Match(ip netip.Addr) bool {
	switch a.kind {
	case addrAll:
		return true
	case addrSet:
		_, ok := a.set[ip.Unmap()]
		return ok
	case addrRange:
		ip = ip.Unmap()
		if !ip.Is4() || a.never {
			return false
		}
		b := ip.As4()
		for j := 0; j < a.idx; j++ {
			if int(b[j]) != a.head[j] {
				return false
			}
		}
		o := int(b[a.idx])
		return o >= a.lo && o <= a.hi
	}
	return false
}

// split is StringUtils.split: empty tokens are dropped.
func split(s, sep string) []string {
	raw := strings.Split(s, sep)
	out := raw[:0]
	for _, r := range raw {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}
