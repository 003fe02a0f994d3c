package acl

import "strings"

// Perm is a permission set (Apache's Permission byte): DENY wins over
// everything, ANY asks for PUB or SUB.
type Perm uint8

const (
	Deny Perm = 1 << iota
	Any
	Pub
	Sub
)

// ParsePerm is Permission.parsePermFromString: anything but PUB, SUB,
// PUB|SUB, SUB|PUB is DENY (an absent default permission too).
func ParsePerm(s string) Perm {
	switch strings.TrimSpace(s) {
	case "PUB":
		return Pub
	case "SUB":
		return Sub
	case "PUB|SUB", "SUB|PUB":
		return Pub | Sub
	}
	return Deny
}

// Allows is Permission.checkPermission: does owned grant needed.
func (owned Perm) Allows(needed Perm) bool {
	if owned&Deny != 0 {
		return false
	}
	if needed&Any != 0 {
		return owned&(Pub|Sub) != 0
	}
	return needed&owned != 0
}

func (p Perm) String() string {
	switch {
	case p&Deny != 0:
		return "DENY"
	case p&(Pub|Sub) == Pub|Sub:
		return "PUB|SUB"
	case p&Pub != 0:
		return "PUB"
	case p&Sub != 0:
		return "SUB"
	case p&Any != 0:
		return "ANY"
	}
	return "DENY"
}
