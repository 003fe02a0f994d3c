package processor

// The broker's controller-mode codes, as Apache 5.3.3's
// AdminBrokerProcessor serves them: GET_BROKER_EPOCH_CACHE (1007, mqadmin
// getBrokerEpoch) and NOTIFY_BROKER_ROLE_CHANGED (1008, the controller's
// push after an election).

import (
	"errors"

	"github.com/rocketgo/rocketgo/broker/role"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
)

func (p *brokerProcs) registerControllerMode(t remoting.Table) {
	t[remoting.GetBrokerEpochCache] = p.brokerEpochCache
	t[remoting.NotifyBrokerRoleChanged] = p.roleChanged
}

// brokerEpochCache is GET_BROKER_EPOCH_CACHE: Apache's EpochEntryCache;
// outside controller mode SYSTEM_ERROR with Apache's remark.
func (p *brokerProcs) brokerEpochCache(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.roles.EpochCacheBody()
	if errors.Is(err, role.ErrNotControllerMode) {
		return remoting.NewResponse(req, remoting.SystemError, "this request only for controllerMode ")
	}
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// roleChanged is NOTIFY_BROKER_ROLE_CHANGED: refused NO_PERMISSION unless
// the peer's IP is a controller host's (Apache takes it from anyone);
// decoded here, confirmed with the controller leader and applied on a
// broker worker (a role change stops and starts services and writes the
// epoch file), answered once applied, as Apache answers after its
// changeBrokerRole; a push the controller does not confirm, or a failed
// change, is SYSTEM_ERROR with its text.
func (p *brokerProcs) roleChanged(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !p.roles.RoleChangeAllowed(c.RemoteAddr.Addr()) {
		p.refused.Warn().Stringer("remote", c.RemoteAddr).Str("masterAddress", logName(req.Str("masterAddress"))).
			Str("masterEpoch", logName(req.Str("masterEpoch"))).Msg("NOTIFY_BROKER_ROLE_CHANGED refused: not from a controller host")
		return remoting.NewResponse(req, remoting.NoPermission, "NOTIFY_BROKER_ROLE_CHANGED is accepted from the controllers only")
	}
	st, err := replicas.DecodeRoleChanged(req)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	// req is recycled when the handler returns: the answer is made from a
	// copy of what it needs.
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	oneway := req.IsOneway()
	// Role changes run one at a time: a flood of pushes (from a controller
	// host, or a stranger on it) would queue a goroutine each; past
	// maxRolePending they are refused, and the broker's poll (1004) still
	// brings the latest role.
	if p.rolePending.Add(1) > maxRolePending {
		p.rolePending.Add(-1)
		p.refused.Warn().Stringer("remote", c.RemoteAddr).Msg("NOTIFY_BROKER_ROLE_CHANGED refused: too many pending")
		return remoting.NewResponse(req, remoting.SystemError, "too many role changes pending")
	}
	if !p.host.Go(func() {
		defer p.rolePending.Add(-1)
		err := p.roles.RoleChanged(st)
		switch {
		case errors.Is(err, replicas.ErrNotConfirmed):
			p.refused.Warn().Err(err).Stringer("remote", c.RemoteAddr).Msg("NOTIFY_BROKER_ROLE_CHANGED refused")
		case err != nil:
			p.log.Error().Err(err).Msg("NOTIFY_BROKER_ROLE_CHANGED: role change failed")
		}
		if oneway {
			return
		}
		if err != nil {
			c.Reply(remoting.NewResponse(head, remoting.SystemError, err.Error()))
			return
		}
		c.Reply(remoting.NewResponse(head, remoting.Success, ""))
	}) {
		p.rolePending.Add(-1)
		return remoting.NewResponse(req, remoting.SystemError, "broker shutting down")
	}
	return nil
}

// maxRolePending bounds the 1008 pushes waiting for a role change; a
// controller sends one per election.
const maxRolePending = 8
