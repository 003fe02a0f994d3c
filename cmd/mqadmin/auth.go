package main

import (
	"fmt"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

// The ACL 2.0 commands: users and ACLs on a broker (-b) or on every broker
// of a cluster (-c; the reads: its masters, until one answers).

const (
	userFormat = "%-16s  %-22s  %-22s  %-22s\n"
	aclFormat  = "%-16s  %-10s  %-22s  %-20s  %-24s  %-10s\n"
)

// authTargets declares -b and -c as the ACL commands do (their order in the
// group is Apache's: it names them in "Missing required option") and
// returns a function giving the addresses once parsed: -b's, or the
// cluster's (masters and slaves when all), sorted (Apache: a HashSet);
// with cmd, a cluster without brokers is Apache's error naming cmd.
// Neither given: the usage is printed and there are none.
func authTargets(a *admin, o *options, clusterFirst bool, bDesc, cDesc string) func(all bool, cmd string) ([]string, error) {
	var broker, cluster *string
	if clusterFirst {
		cluster = o.String("c", "clusterName", cDesc)
		broker = o.String("b", "brokerAddr", bDesc)
		o.Group(true, "c", "b")
	} else {
		broker = o.String("b", "brokerAddr", bDesc)
		cluster = o.String("c", "clusterName", cDesc)
		o.Group(true, "b", "c")
	}
	return func(all bool, cmd string) ([]string, error) {
		switch {
		case o.Given("b"):
			return []string{strings.TrimSpace(*broker)}, nil
		case o.Given("c"):
			bs, err := a.clusterBrokers(strings.TrimSpace(*cluster))
			if err != nil {
				return nil, err
			}
			addrs := addrsOf(bs, all)
			if len(addrs) == 0 && cmd != "" {
				return nil, errNoBroker(cmd)
			}
			return addrs, nil
		}
		a.usage()
		return nil, nil
	}
}

// optStr is StringUtils.trim of an option's value: nil when not given.
func optStr(o *options, key string) *string {
	op := o.lookup(key)
	if op == nil || !op.given {
		return nil
	}
	v := strings.TrimSpace(op.value)
	return &v
}

// splitTrim is StringUtils.split(s, ',') with each part trimmed: no empty
// parts.
func splitTrim(s *string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(*s, ",") {
		if p != "" {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// javaStrList is a List<String>'s toString, "null" for none.
func javaStrList(l []string) string {
	if l == nil {
		return "null"
	}
	return javaList(l)
}

func createUser(a *admin, o *options, args []string) error {
	return editUser(a, o, args, remoting.AuthCreateUser, "create")
}

func updateUser(a *admin, o *options, args []string) error {
	return editUser(a, o, args, remoting.AuthUpdateUser, "update")
}

func editUser(a *admin, o *options, args []string, code int32, verb string) error {
	to := authTargets(a, o, true, verb+" user to which broker", verb+" user to which cluster")
	name := o.Req("u", "username", "the username of user to "+verb+".")
	if verb == "create" {
		o.Req("p", "password", "the password of user to create")
		o.String("t", "userType", "the userType of user to create")
	} else {
		o.String("p", "password", "the password of user to update")
		o.String("t", "userType", "the userType of user to update")
		o.String("s", "userStatus", "the userStatus of user to update")
		o.Group(true, "p", "t", "s")
	}
	if err := a.parse(o, args); err != nil {
		return err
	}
	u := strings.TrimSpace(*name)
	info := adminclient.UserInfo{Username: &u, Password: optStr(o, "p"), UserType: optStr(o, "t"), UserStatus: optStr(o, "s")}
	addrs, err := to(true, "")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		if err := a.AuthCall(addr, code, map[string]string{"username": u}, info, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "%s user to %s success.\n", verb, addr)
	}
	return nil
}

func deleteUser(a *admin, o *options, args []string) error {
	to := authTargets(a, o, true, "delete user from which broker", "delete acl from which cluster")
	name := o.Req("u", "username", "the username of user to delete.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	u := strings.TrimSpace(*name)
	addrs, err := to(true, "")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		if err := a.AuthCall(addr, remoting.AuthDeleteUser, map[string]string{"username": u}, nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "delete user to %s success.\n", addr)
	}
	return nil
}

func printUsers(a *admin, us []adminclient.UserInfo) {
	fmt.Fprintf(a.out, userFormat, "#UserName", "#Password", "#UserType", "#UserStatus")
	for _, u := range us {
		fmt.Fprintf(a.out, userFormat, deref(u.Username), deref(u.Password), deref(u.UserType), deref(u.UserStatus))
	}
}

// errNoBroker is the ACL reads' refusal of a cluster without a master.
func errNoBroker(cmd string) error {
	return fmt.Errorf("%s command failed, there is no broker in cluster", cmd)
}

func getUser(a *admin, o *options, args []string) error {
	to := authTargets(a, o, false, "get user for which broker", "get user for specified cluster")
	o.String("u", "username", "the username of user to get")
	if err := a.parse(o, args); err != nil {
		return err
	}
	ext := map[string]string{}
	if u := optStr(o, "u"); u != nil {
		ext["username"] = *u
	}
	addrs, err := to(false, "GetUserSubCommand")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		var u *adminclient.UserInfo
		if err := a.AuthCall(addr, remoting.AuthGetUser, ext, nil, &u); err != nil {
			return err
		}
		if u != nil {
			printUsers(a, []adminclient.UserInfo{*u})
			break
		}
	}
	return nil
}

func listUser(a *admin, o *options, args []string) error {
	to := authTargets(a, o, false, "list user for which broker", "list user for specified cluster")
	o.String("f", "filter", "the filter to list users")
	if err := a.parse(o, args); err != nil {
		return err
	}
	ext := map[string]string{}
	if f := optStr(o, "f"); f != nil {
		ext["filter"] = *f
	}
	addrs, err := to(false, "ListUserSubCommand")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		var us []adminclient.UserInfo
		if err := a.AuthCall(addr, remoting.AuthListUser, ext, nil, &us); err != nil {
			return err
		}
		if len(us) > 0 {
			printUsers(a, us)
			if o.Given("c") {
				fmt.Fprintf(a.out, "get user from %s success.\n", addr)
				break
			}
		}
	}
	return nil
}

func createAcl(a *admin, o *options, args []string) error {
	return editAcl(a, o, args, remoting.AuthCreateACL, "create")
}

func updateAcl(a *admin, o *options, args []string) error {
	return editAcl(a, o, args, remoting.AuthUpdateACL, "update")
}

func editAcl(a *admin, o *options, args []string, code int32, verb string) error {
	to := authTargets(a, o, true, verb+" acl to which broker", verb+" acl to which cluster")
	o.Req("s", "subject", "the subject of acl to "+verb+".")
	o.Req("r", "resources", "the resources of acl to "+verb)
	o.Req("a", "actions", "the actions of acl to "+verb)
	o.String("i", "sourceIp", "the sourceIps of acl to "+verb)
	o.Req("d", "decision", "the decision of acl to "+verb)
	if err := a.parse(o, args); err != nil {
		return err
	}
	subject := optStr(o, "s")
	rawList := func(key string) []string { // split before trimming, as Apache
		op := o.lookup(key)
		if !op.given {
			return nil
		}
		return splitTrim(&op.value)
	}
	resources, actions, ips := rawList("r"), rawList("a"), rawList("i")
	decision := optStr(o, "d")
	policy := adminclient.PolicyInfo{}
	for _, r := range resources {
		r := r
		policy.Entries = append(policy.Entries, adminclient.PolicyEntryInfo{Resource: &r, Actions: actions, SourceIps: ips, Decision: decision})
	}
	info := adminclient.AclInfo{Subject: subject, Policies: []adminclient.PolicyInfo{policy}}
	addrs, err := to(true, "")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		if err := a.AuthCall(addr, code, map[string]string{"subject": deref(subject)}, info, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "%s acl to %s success.\n", verb, addr)
	}
	return nil
}

func deleteAcl(a *admin, o *options, args []string) error {
	to := authTargets(a, o, true, "delete acl from which broker", "delete acl from which cluster")
	o.Req("s", "subject", "the subject of acl to delete.")
	o.String("r", "resources", "the resources of acl to delete")
	if err := a.parse(o, args); err != nil {
		return err
	}
	ext := map[string]string{"subject": deref(optStr(o, "s"))}
	if r := optStr(o, "r"); r != nil {
		ext["resource"] = *r
	}
	addrs, err := to(true, "")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		if err := a.AuthCall(addr, remoting.AuthDeleteACL, ext, nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "delete acl to %s success.\n", addr)
	}
	return nil
}

func printAcls(a *admin, acls []adminclient.AclInfo) {
	fmt.Fprintf(a.out, aclFormat, "#Subject", "#PolicyType", "#Resource", "#Actions", "#SourceIp", "#Decision")
	for _, acl := range acls {
		if len(acl.Policies) == 0 {
			fmt.Fprintf(a.out, aclFormat, deref(acl.Subject), "", "", "", "", "")
			continue
		}
		for _, p := range acl.Policies {
			for _, e := range p.Entries {
				fmt.Fprintf(a.out, aclFormat, deref(acl.Subject), deref(p.PolicyType), deref(e.Resource),
					javaStrList(e.Actions), javaStrList(e.SourceIps), deref(e.Decision))
			}
		}
	}
}

func getAcl(a *admin, o *options, args []string) error {
	to := authTargets(a, o, false, "get acl for which broker", "get acl for specified cluster")
	o.String("s", "subject", "the subject of acl to get")
	if err := a.parse(o, args); err != nil {
		return err
	}
	ext := map[string]string{}
	if s := optStr(o, "s"); s != nil {
		ext["subject"] = *s
	}
	addrs, err := to(false, "GetAclSubCommand")
	if err != nil {
		return err
	}
	for _, addr := range addrs { // Apache prints every master's
		var acl *adminclient.AclInfo
		if err := a.AuthCall(addr, remoting.AuthGetACL, ext, nil, &acl); err != nil {
			return err
		}
		if acl != nil {
			printAcls(a, []adminclient.AclInfo{*acl})
		}
	}
	return nil
}

func listAcl(a *admin, o *options, args []string) error {
	to := authTargets(a, o, false, "list acl for which broker.", "list acl for specified cluster.")
	o.String("s", "subject", "the subject of acl to filter.")
	o.String("r", "resource", "the resource of acl to filter.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	ext := map[string]string{}
	if s := optStr(o, "s"); s != nil {
		ext["subjectFilter"] = *s
	}
	if r := optStr(o, "r"); r != nil {
		ext["resourceFilter"] = *r
	}
	addrs, err := to(false, "ListAclSubCommand")
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		var acls []adminclient.AclInfo
		if err := a.AuthCall(addr, remoting.AuthListACL, ext, nil, &acls); err != nil {
			return err
		}
		if len(acls) > 0 {
			printAcls(a, acls)
		}
	}
	return nil
}

// splitNonBlank is StringUtils.split(s, ","): no empty parts, untrimmed.
func splitNonBlank(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func copyUser(a *admin, o *options, args []string) error {
	from := o.Req("f", "fromBroker", "the source broker that the users copy from")
	to := o.Req("t", "toBroker", "the target broker that the users copy to")
	o.String("u", "usernames", "the username list of user to copy.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	return copyAuth(a, *from, *to, optStr(o, "u"), authKind[adminclient.UserInfo]{
		what: "user", key: "username", get: remoting.AuthGetUser, list: remoting.AuthListUser,
		create: remoting.AuthCreateUser, update: remoting.AuthUpdateUser,
		name: func(u adminclient.UserInfo) string { return deref(u.Username) },
	})
}

func copyAcl(a *admin, o *options, args []string) error {
	from := o.Req("f", "fromBroker", "the source broker that the acls copy from")
	to := o.Req("t", "toBroker", "the target broker that the acls copy to")
	o.String("s", "subjects", "the subject list of acl to copy.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	return copyAuth(a, *from, *to, optStr(o, "s"), authKind[adminclient.AclInfo]{
		what: "acl", key: "subject", get: remoting.AuthGetACL, list: remoting.AuthListACL,
		create: remoting.AuthCreateACL, update: remoting.AuthUpdateACL,
		name: func(acl adminclient.AclInfo) string { return deref(acl.Subject) },
	})
}

// authKind is what copyUser and copyAcl differ in: the entry's type, its
// request codes and the header naming one.
type authKind[T any] struct {
	what, key                 string
	get, list, create, update int32
	name                      func(T) string
}

// copyAuth is Apache's CopyUsersSubCommand / CopyAclsSubCommand: the named
// entries (all when names is empty) of broker from, each created on broker
// to, or updated when it has it already.
func copyAuth[T any](a *admin, from, to string, names *string, k authKind[T]) error {
	src, dst := strings.TrimSpace(from), strings.TrimSpace(to)
	var entries []T
	if names != nil && *names != "" {
		for _, n := range splitNonBlank(*names) {
			var e *T
			if err := a.AuthCall(src, k.get, map[string]string{k.key: n}, nil, &e); err != nil {
				return err
			}
			if e != nil {
				entries = append(entries, *e)
			}
		}
	} else if err := a.AuthCall(src, k.list, nil, nil, &entries); err != nil {
		return err
	}
	for _, e := range entries {
		name := k.name(e)
		var there *T
		if err := a.AuthCall(dst, k.get, map[string]string{k.key: name}, nil, &there); err != nil {
			return err
		}
		code := k.update
		if there == nil {
			code = k.create
		}
		if err := a.AuthCall(dst, code, map[string]string{k.key: name}, e, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "copy %s of %s from %s to %s success.\n", k.what, name, src, dst)
	}
	return nil
}
