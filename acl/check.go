package acl

import (
	"fmt"
	"net/netip"

	"github.com/rocketgo/rocketgo/remoting"
)

// Rules is the ACL in force: every loaded file merged. It is immutable;
// Files replaces it whole.
type Rules struct {
	global   []Address
	accounts map[string]*Account
}

// Merge builds Rules from files in load order: white addresses add up, an
// access key defined twice keeps its first account (Apache: "The
// accessKey is repeated in multiple ACL files"); dup lists the repeats.
func Merge(files []*PlainFile) (r *Rules, dup []string) {
	r = &Rules{accounts: map[string]*Account{}}
	for _, f := range files {
		r.global = append(r.global, f.GlobalWhite...)
		for _, a := range f.Accounts {
			if _, ok := r.accounts[a.AccessKey]; ok {
				dup = append(dup, a.AccessKey)
				continue
			}
			r.accounts[a.AccessKey] = a
		}
	}
	return r, dup
}

// Accounts is the number of accounts.
func (r *Rules) Accounts() int { return len(r.accounts) }

// adminCodes need an admin account (Permission.ADMIN_CODE, 5.3.1), and
// UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, which Apache lets any account send:
// it would let any account open the broker to every address.
var adminCodes = map[int32]bool{
	remoting.UpdateGlobalWhiteAddrsConfig: true, // rocketgo only
	remoting.UpdateAndCreateTopic:         true,
	remoting.UpdateBrokerConfig:           true,
	remoting.DeleteTopicInBroker:          true,
	remoting.UpdateAndCreateSubscription:  true,
	remoting.DeleteSubscriptionGroup:      true,
	remoting.UpdateAndCreateStaticTopic:   true,
	remoting.UpdateAndCreateACLConfig:     true,
	remoting.DeleteACLConfig:              true,
	remoting.GetBrokerClusterACLInfo:      true,
}

// traceTopic is TopicValidator.RMQ_SYS_TRACE_TOPIC: sending to it needs
// nothing but a valid signature.
const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// Denied is Apache's AclException: Msg is its message, frame the first
// stack frame Apache's answer names (5.3.1's classes and line numbers).
type Denied struct {
	Msg   string
	frame string
}

func (d *Denied) Error() string { return d.Msg }

// Remark is the answer's remark, RemotingHelper.exceptionSimpleDesc.
func (d *Denied) Remark() string {
	return "org.apache.rocketmq.acl.common.AclException: " + d.Msg + ", " + d.frame
}

const (
	frameValidate = "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:"
	frameCheck    = "org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:"
	frameParse    = "org.apache.rocketmq.acl.plain.PlainAccessResource.parse(PlainAccessResource.java:174)"
)

func denied(frame string, format string, args ...any) *Denied {
	return &Denied{Msg: fmt.Sprintf(format, args...), frame: frame}
}

// Check decides req from the peer at ip, in PlainPermissionManager.validate's
// order (5.3.1); nil allows it. scratch is reused for the request's resources.
func (r *Rules) Check(req *remoting.Command, ip netip.Addr, scratch []need) *Denied {
	for _, a := range r.global {
		if a.Match(ip) {
			return nil
		}
	}
	ak, ok := req.Lookup(fieldAccessKey)
	if !ok {
		return denied(frameValidate+"602)", "No accessKey is configured")
	}
	acct := r.accounts[ak]
	if acct == nil {
		return denied(frameValidate+"606)", "No acl config for %s", ak)
	}
	if acct.White.Match(ip) {
		return nil
	}
	// Apache parses the resources before validating: a body it cannot
	// decode is refused whatever the signature.
	ns, err := needsOf(req, scratch[:0])
	if err != nil {
		return denied(frameParse, "%s", err.Error())
	}
	sig, _ := req.Lookup(fieldSignature)
	if !acct.verify(req, sig) {
		return denied(frameValidate+"622)", "Check signature failed for accessKey=%s", ak)
	}
	for _, n := range ns {
		if n.res == traceTopic && n.perm == Pub {
			return nil
		}
	}
	return acct.checkPerm(req.Code, ns)
}

// checkPerm is PlainPermissionChecker.check (5.3.1): an admin may do
// everything. (4.9.8 still checked an admin's listed permissions, and
// said "No default permission" for a listed one too.)
func (a *Account) checkPerm(code int32, ns []need) *Denied {
	if a.Admin {
		return nil
	}
	if adminCodes[code] {
		return denied(frameCheck+"36)", "Need admin permission for request code=%d, but accessKey=%s is not", code, a.AccessKey)
	}
	javaOrder(ns)
	for _, n := range ns {
		group := isRetry(n.res)
		owned, listed := a.Perms[n.res]
		if !listed {
			owned = a.DefaultTopic
			if group {
				owned = a.DefaultGroup
			}
			if !owned.Allows(n.perm) {
				return denied(frameCheck+"57)", "No default permission for %s", printRes(n.res, group))
			}
			continue
		}
		if !owned.Allows(n.perm) {
			return denied(frameCheck+"62)", "No permission for %s", printRes(n.res, group))
		}
	}
	return nil
}

// printRes is PlainAccessResource.printStr.
func printRes(res string, group bool) string {
	if group {
		return "group:" + res[len("%RETRY%"):]
	}
	return "topic:" + res
}
