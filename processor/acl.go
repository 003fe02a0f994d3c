package processor

import (
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/remoting"
)

// ACL 1.0's admin codes (AdminBrokerProcessor, 5.3.1). Who may call them
// is the ACL interceptor's business (50, 51, 52 need an admin account);
// these handlers decode, hand the edit to a broker worker (it writes a
// file) and answer from there.

// Apache's answer codes for a failed ACL edit (ResponseCode).
const (
	updateACLConfigFailed   int32 = 209
	deleteACLConfigFailed   int32 = 210
	updateGlobalWhiteFailed int32 = 211
)

// ACLAdmin is the ACL configuration the admin codes change (acl.Files).
// Its edits write files: they run on broker workers, never on a loop. An
// edit's error text is Apache's remark for it.
type ACLAdmin interface {
	UpdateAccount(acl.AccountUpdate) error
	DeleteAccount(accessKey string) error
	UpdateGlobalWhite(addrs []string, file string) error
	Version() remoting.DataVersion
	Versions() map[string]remoting.DataVersion
}

type aclProcs struct {
	host Host
	a    ACLAdmin // nil: aclEnable=false
	log  zerolog.Logger
}

// RegisterACL serves the ACL 1.0 admin codes from a (nil without
// aclEnable: they fail as Apache's do without a validator: 209, 210, 211
// without a remark, and GET_BROKER_CLUSTER_ACL_INFO unanswered).
// GET_BROKER_CLUSTER_ACL_CONFIG (54) is not served: 5.3.1 dropped it.
func RegisterACL(t remoting.Table, a ACLAdmin, host Host, log zerolog.Logger) {
	p := &aclProcs{host: host, a: a, log: log.With().Str("component", "acl-admin").Logger()}
	t[remoting.UpdateAndCreateACLConfig] = p.updateAccount
	t[remoting.DeleteACLConfig] = p.deleteAccount
	t[remoting.UpdateGlobalWhiteAddrsConfig] = p.updateGlobalWhite
	t[remoting.GetBrokerClusterACLInfo] = p.version
}

// edit runs fn on a broker worker and answers its result: SUCCESS, or
// failed with the error's text (Apache's e.getMessage()).
func (p *aclProcs) edit(c *remoting.Conn, req *remoting.Command, failed int32, fn func() error) *remoting.Command {
	if p.a == nil {
		return remoting.NewResponse(req, failed, "")
	}
	// req is recycled when the handler returns: the answer is made from a
	// copy of what it needs.
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	if !p.host.Go(func() {
		if err := fn(); err != nil {
			c.Reply(remoting.NewResponse(head, failed, err.Error()))
			return
		}
		c.Reply(remoting.NewResponse(head, remoting.Success, ""))
	}) {
		return remoting.NewResponse(req, remoting.SystemError, "broker shutting down")
	}
	return nil
}

// updateAccount is UPDATE_AND_CREATE_ACL_CONFIG (50).
func (p *aclProcs) updateAccount(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	ak, err := req.RequireStr("accessKey")
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	u := acl.AccountUpdate{AccessKey: ak, SecretKey: req.Str("secretKey"), Admin: req.Bool("admin"),
		DefaultTopicPerm: req.Str("defaultTopicPerm"), DefaultGroupPerm: req.Str("defaultGroupPerm")}
	u.WhiteRemoteAddress, u.HasWhite = req.Lookup("whiteRemoteAddress")
	var tp, gp string
	tp, u.HasTopicPerms = req.Lookup("topicPerms")
	gp, u.HasGroupPerms = req.Lookup("groupPerms")
	u.TopicPerms, u.GroupPerms = splitList(tp), splitList(gp)
	return p.edit(c, req, updateACLConfigFailed, func() error {
		err := p.a.UpdateAccount(u)
		// Never the error's text: it may hold the secret key.
		p.log.Info().Str("accessKey", ak).Str("remote", c.Remote).Bool("ok", err == nil).Msg("acl account updated")
		return err
	})
}

// deleteAccount is DELETE_ACL_CONFIG (51).
func (p *aclProcs) deleteAccount(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	ak, err := req.RequireStr("accessKey")
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	return p.edit(c, req, deleteACLConfigFailed, func() error {
		err := p.a.DeleteAccount(ak)
		p.log.Info().Str("accessKey", ak).Str("remote", c.Remote).Err(err).Msg("acl account deleted")
		if err != nil {
			return &remoting.Refusal{Code: deleteACLConfigFailed, Err: err,
				Remark: "The accessKey[" + ak + "] corresponding to accessConfig has been deleted failed."}
		}
		return nil
	})
}

// updateGlobalWhite is UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53).
func (p *aclProcs) updateGlobalWhite(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	addrs, err := req.RequireStr("globalWhiteAddrs")
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	file, err := req.RequireStr("aclFileFullPath")
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	return p.edit(c, req, updateGlobalWhiteFailed, func() error {
		err := p.a.UpdateGlobalWhite(splitList(addrs), file)
		p.log.Info().Str("globalWhiteAddrs", addrs).Str("file", file).Str("remote", c.Remote).Err(err).Msg("acl global white addresses updated")
		if err != nil {
			return &remoting.Refusal{Code: updateGlobalWhiteFailed, Err: err,
				Remark: "The globalWhiteAddresses[" + addrs + "] has been updated failed."}
		}
		return nil
	})
}

// version is GET_BROKER_CLUSTER_ACL_INFO (52): GetBrokerAclConfigResponseHeader,
// with 4.9.8's allAclFileVersion, without which a 4.9.8 client fails to
// read the answer (5.3.1 no longer sends it; its clients ignore it).
func (p *aclProcs) version(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if p.a == nil {
		return nil // Apache: a NullPointerException, logged, and no answer
	}
	v, err := json.Marshal(p.a.Version())
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	all, err := json.Marshal(p.a.Versions())
	if err != nil {
		return errorResponse(&p.log, req, err)
	}
	cfg := p.host.Config()
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Set("version", string(v))
	resp.Set("brokerName", cfg.BrokerName)
	resp.Set("brokerAddr", cfg.Addr())
	resp.Set("clusterName", cfg.BrokerClusterName)
	resp.Set("allAclFileVersion", string(all))
	return resp
}

// splitList is UtilAll.split(s, ","): empty for a blank string.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}
