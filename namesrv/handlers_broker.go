package namesrv

import (
	"hash/crc32"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// What brokers send: REGISTER_BROKER (103), UNREGISTER_BROKER (104),
// QUERY_DATA_VERSION (322), BROKER_HEARTBEAT (904), and the admin codes that
// change a broker's write permission, WIPE_WRITE_PERM_OF_BROKER (205) and
// ADD_WRITE_PERM_OF_BROKER (327).

// brokerKey reads clusterName and brokerAddr.
func brokerKey(req *remoting.Command) (BrokerAddr, error) {
	f, err := require(req, "clusterName", "brokerAddr")
	if err != nil {
		return BrokerAddr{}, err
	}
	return BrokerAddr{Cluster: f[0], Addr: f[1]}, nil
}

// registerBroker runs on the worker (offloaded), never on an event loop.
func (h *handlers) registerBroker(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := require(req, "brokerName", "brokerAddr", "clusterName", "haServerAddr")
	if err != nil {
		return h.refuse(req, err)
	}
	id, err := req.Int64("brokerId")
	if err != nil {
		return h.refuse(req, err)
	}
	if want := req.OptInt64("bodyCrc32", 0); want != 0 {
		// UtilAll.crc32: CRC32 (IEEE) masked to a non-negative int.
		if got := int64(crc32.ChecksumIEEE(req.Body) & 0x7fffffff); got != want {
			h.log.Warn().Str("brokerAddr", f[1]).Int64("bodyCrc32", want).Int64("crc32", got).Msg("register broker body crc32 mismatch")
			return remoting.NewResponse(req, remoting.SystemError, "crc32 not match")
		}
	}
	var body RegisterBody
	// Apache 5.3.3's broker deflates the body under compressedRegister=true
	// but still sends compressed=false (BrokerOuterAPI.registerBrokerAll):
	// a zlib header, which no JSON body starts with, says so too.
	if req.Bool("compressed") || IsZlib(req.Body) {
		body, err = DecodeCompressedRegisterBody(req.Body, h.cfg().RegisterBodyMaxInflatedBytes)
	} else {
		body, err = DecodeRegisterBody(req.Body, req.Version)
	}
	if err != nil {
		h.sampled.Warn().Err(err).Str("brokerAddr", f[1]).Int("bodyLen", len(req.Body)).Msg("register broker body refused")
		return h.refuse(req, err)
	}
	reg := Registration{
		BrokerName:       f[0],
		BrokerAddr:       f[1],
		ClusterName:      f[2],
		HAServerAddr:     f[3],
		BrokerID:         id,
		ZoneName:         req.Str("__ZONE_NAME"),
		HeartbeatTimeout: time.Duration(req.OptInt64("heartbeatTimeoutMillis", 0)) * time.Millisecond,
		DataVersion:      body.TopicConfigSerializeWrapper.DataVersion,
		Topics:           body.TopicConfigSerializeWrapper.TopicConfigTable,
		FilterServers:    body.FilterServerList,
	}
	if len(req.Body) != 0 && reg.Topics == nil {
		reg.Topics = map[string]TopicConfig{}
	}
	if v := req.Str("enableActingMaster"); v != "" {
		b := req.Bool("enableActingMaster")
		reg.EnableActingMaster = &b
	}
	if c != nil {
		reg.ConnID = c.ID
	}
	res, err := h.routes.Register(reg, time.Now())
	if err != nil {
		return h.refuse(req, err)
	}
	if c != nil && c.Closed() && c.ClosedByServer() == nil {
		// Registered off the loop after the broker's connection had gone
		// (connClosed found nothing to drop yet): drop it now. A close after
		// this check runs connClosed after the registration, as on the loop.
		h.routes.ConnClosed(c.ID)
	}
	if res.First {
		h.log.Info().Str("clusterName", reg.ClusterName).Str("brokerName", reg.BrokerName).
			Int64("brokerId", reg.BrokerID).Str("brokerAddr", reg.BrokerAddr).Msg("broker registered")
	}
	resp := success(req, nil)
	if res.HAServerAddr != "" {
		resp.Set("haServerAddr", res.HAServerAddr)
	}
	if res.MasterAddr != "" {
		resp.Set("masterAddr", res.MasterAddr)
	}
	if h.cfg().ReturnOrderTopicConfigToBroker {
		if b, err := h.kv.AppendNamespace(nil, NamespaceOrderTopicConfig); err == nil {
			resp.Body = b
		}
	}
	return resp
}

// unregisterBroker runs on the worker (offloaded), behind any registration
// the same broker sent before it.
func (h *handlers) unregisterBroker(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := brokerKey(req)
	if err != nil {
		return h.refuse(req, err)
	}
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.refuse(req, err)
	}
	if _, err := req.Int64("brokerId"); err != nil {
		return h.refuse(req, err)
	}
	h.routes.Unregister(key, name)
	h.log.Info().Str("clusterName", key.Cluster).Str("brokerAddr", key.Addr).Str("brokerName", name).Msg("broker unregistered")
	return success(req, nil)
}

func (h *handlers) queryDataVersion(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := brokerKey(req)
	if err != nil {
		return h.refuse(req, err)
	}
	dv, err := DecodeDataVersion(req.Body)
	if err != nil {
		return h.refuse(req, err)
	}
	changed, have := h.routes.QueryDataVersion(key, dv, time.Now())
	resp := success(req, nil)
	if have != nil {
		resp.Body = have.AppendJSON(nil)
	}
	resp.Set("changed", strconv.FormatBool(changed))
	return resp
}

func (h *handlers) brokerHeartbeat(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := brokerKey(req)
	if err != nil {
		return h.refuse(req, err)
	}
	h.routes.Heartbeat(key, time.Now())
	return success(req, nil)
}

func (h *handlers) wipeWritePerm(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.refuse(req, err)
	}
	n := h.routes.WipeWritePerm(name)
	h.log.Info().Str("brokerName", name).Int("topics", n).Msg("write perm wiped")
	resp := success(req, nil)
	resp.SetInt64("wipeTopicCount", int64(n))
	return resp
}

func (h *handlers) addWritePerm(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.refuse(req, err)
	}
	n := h.routes.AddWritePerm(name)
	h.log.Info().Str("brokerName", name).Int("topics", n).Msg("write perm added")
	resp := success(req, nil)
	resp.SetInt64("addTopicCount", int64(n))
	return resp
}
