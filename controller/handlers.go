package controller

import (
	"fmt"
	"strings"

	"github.com/hashicorp/raft"

	"github.com/rocketgo/rocketgo/remoting"
)

// Handlers is the controller's dispatch table. Codes it does not list get
// REQUEST_CODE_NOT_SUPPORTED, as on Apache's controller (GET_BROKER_EPOCH_CACHE
// 1007 is a broker's code: mqadmin getBrokerEpoch asks the brokers). Each
// handler runs after the authentication check (auth.go).
func (c *Controller) Handlers() remoting.Table {
	t := remoting.Table{
		remoting.BrokerHeartbeat:             c.heartbeat,
		remoting.ControllerGetMetadataInfo:   c.metadata,
		remoting.ControllerAlterSyncStateSet: c.alterSyncStateSet,
		remoting.ControllerElectMaster:       c.electMaster,
		remoting.ControllerRegisterBroker:    c.registerBroker,
		remoting.ControllerGetReplicaInfo:    c.replicaInfo,
		remoting.ControllerGetSyncStateData:  c.syncStateData,
		remoting.CleanBrokerData:             c.cleanBrokerData,
		remoting.ControllerGetNextBrokerID:   c.nextBrokerID,
		remoting.ControllerApplyBrokerID:     c.applyBrokerID,
		remoting.UpdateControllerConfig:      c.updateConfig,
		remoting.GetControllerConfig:         c.getConfig,
	}
	c.userTable(t)
	c.aclTable(t)
	return c.guard(t)
}

// badRequest answers a header or body Apache's decoder or handler would
// throw on: SYSTEM_ERROR with the reason.
func badRequest(req *remoting.Command, err error) *remoting.Command {
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}

// park runs fn on a worker (it may wait for raft) and answers with
// Conn.Reply; SYSTEM_BUSY when the queue is full, as Apache's executor
// rejection is answered.
func (c *Controller) park(conn *remoting.Conn, req *remoting.Command, fn func() *result) *remoting.Command {
	stub := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	oneway := req.IsOneway()
	ok := c.offload(func() {
		r := c.run(fn)
		if r.code == remoting.Success && r.elected != nil {
			c.notifyRoleChanged(r.elected) // an election an admin or broker asked for
		}
		if oneway {
			return
		}
		conn.Reply(respond(stub, r))
	})
	if !ok {
		return remoting.NewResponse(req, remoting.SystemBusy, "[OVERLOAD]system busy, start flow control for a while")
	}
	return nil
}

func respond(req *remoting.Command, r *result) *remoting.Command {
	resp := remoting.NewResponse(req, r.code, r.remark)
	for _, f := range r.header {
		resp.Set(f.Key, f.Value)
	}
	resp.Body = r.body
	return resp
}

func (c *Controller) heartbeat(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	hb, hasID := decodeHeartbeat(req)
	if !hasID {
		return remoting.NewResponse(req, remoting.ControllerInvalidRequest, "Heart beat with empty brokerId")
	}
	// The connection identifies the broker for onBrokerChannelClose.
	if !c.hb.onHeartbeat(hb, conn) {
		c.warn.Warn().Str("brokerName", hb.BrokerName).Int64("brokerId", hb.BrokerID).Int("controllerMaxHeartbeats", c.cfg.ControllerMaxHeartbeats).
			Msg("heartbeat refused: table full")
		return remoting.NewResponse(req, remoting.ControllerInvalidRequest, "too many brokers: controllerMaxHeartbeats reached")
	}
	return remoting.NewResponse(req, remoting.Success, "Heart beat success")
}

// metadata is CONTROLLER_GET_METADATA_INFO, answered by every controller:
// who leads, and the peers ("n0:127.0.0.1:9878;n1:…;").
func (c *Controller) metadata(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	if c.cfg.ControllerDLegerGroup != "" {
		resp.Set("group", c.cfg.ControllerDLegerGroup)
	}
	_, leaderID := c.node.r.LeaderWithID()
	for _, p := range c.peers {
		if string(leaderID) == p.ID && p.ID != "" {
			resp.Set("controllerLeaderId", p.ID)
			resp.Set("controllerLeaderAddress", p.Addr)
		}
	}
	if c.node.r.State() == raft.Leader {
		resp.Set("isLeader", "true")
	} else {
		resp.Set("isLeader", "false")
	}
	var b strings.Builder
	for _, p := range c.peers {
		b.WriteString(p.ID + ":" + p.Addr + ";")
	}
	resp.Set("peers", b.String())
	return resp
}

func (c *Controller) alterSyncStateSet(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	a, err := decodeAlter(req)
	if err != nil {
		return badRequest(req, err)
	}
	return c.park(conn, req, func() *result { return c.ru.alterSyncStateSet(a.BrokerName, a.MasterID, a.MasterEpoch, a.Body) })
}

func (c *Controller) electMaster(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	e, err := decodeElect(req)
	if err != nil {
		return badRequest(req, err)
	}
	return c.park(conn, req, func() *result { return c.ru.electMaster(e) })
}

func (c *Controller) registerBroker(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := decodeRegister(req)
	if err != nil {
		return badRequest(req, err)
	}
	return c.park(conn, req, func() *result { return c.ru.registerBroker(r.Cluster, r.BrokerName, r.BrokerID, r.Addr) })
}

func (c *Controller) replicaInfo(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	name := optStr(req, "brokerName")
	if name == nil {
		return badRequest(req, npe("brokerName"))
	}
	return c.park(conn, req, func() *result { return c.ru.replicaInfo(*name) })
}

func (c *Controller) syncStateData(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, "not set any response code")
	}
	names, err := decodeBrokerNames(req.Body)
	if err != nil {
		return badRequest(req, err)
	}
	if len(names) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, "not set any response code")
	}
	return c.park(conn, req, func() *result { return c.ru.syncStateData(names) })
}

func (c *Controller) cleanBrokerData(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	cr, err := decodeClean(req)
	if err != nil {
		return badRequest(req, err)
	}
	if cr.CleanLiving && !c.superCaller(req) && c.ru.setAlive(cr.BrokerName) {
		// Apache erases a living set on anyone's word; here only a Super
		// user's (authenticationEnabled), else its brokers must stop first.
		c.warn.Warn().Str("brokerName", short(cr.BrokerName)).Stringer("remote", conn.RemoteAddr).Msg("clean of a living broker set refused")
		return remoting.NewResponse(req, remoting.ControllerInvalidCleanData, fmt.Sprintf("Broker %s is still alive, clean up failure", cr.BrokerName))
	}
	return c.park(conn, req, func() *result { return c.ru.cleanBrokerData(cr) })
}

func (c *Controller) nextBrokerID(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	name := optStr(req, "brokerName")
	if name == nil {
		return badRequest(req, npe("brokerName"))
	}
	cluster := req.Str("clusterName")
	return c.park(conn, req, func() *result { return c.ru.nextBrokerID(cluster, *name) })
}

func (c *Controller) applyBrokerID(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	a, err := decodeApply(req)
	if err != nil {
		return badRequest(req, err)
	}
	return c.park(conn, req, func() *result { return c.ru.applyBrokerID(a.Cluster, a.BrokerName, a.BrokerID, a.CheckCode) })
}
