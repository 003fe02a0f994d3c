package processor

import (
	"errors"
	"hash/crc32"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/remoting"
)

// Name-server request codes remoting/codes.go does not name.
const (
	nsCodeWipeWritePermOfBroker int32 = 205
	nsCodeAddWritePermOfBroker  int32 = 327
	nsCodeBrokerHeartbeat       int32 = 904
)

// nsFAQSuffix is Apache's FAQUrl.suggestTodo(APPLY_TOPIC_URL).
const nsFAQSuffix = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// nsHandlers serves name-server requests from the namesrv tables.
type nsHandlers struct {
	ns     *namesrv.Server
	routes *namesrv.Routes
	kv     *namesrv.KV
	cfg    namesrv.Config
	log    zerolog.Logger
	// sampled carries per-request warnings a client can trigger at will.
	sampled zerolog.Logger
}

// NamesrvTable returns the name server's request table.
func NamesrvTable(ns *namesrv.Server, log zerolog.Logger) Table {
	h := &nsHandlers{ns: ns, routes: ns.Routes, kv: ns.KV, cfg: ns.Config,
		log: log.With().Str("component", "namesrv-processor").Logger()}
	h.sampled = h.log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Minute})
	return Table{
		remoting.PutKVConfig:                   h.putKVConfig,
		remoting.GetKVConfig:                   h.getKVConfig,
		remoting.DeleteKVConfig:                h.deleteKVConfig,
		remoting.GetKVListByNamespace:          h.getKVListByNamespace,
		remoting.RegisterBroker:                h.offloaded(h.registerBroker),
		remoting.UnregisterBroker:              h.offloaded(h.unregisterBroker),
		remoting.QueryDataVersion:              h.queryDataVersion,
		nsCodeBrokerHeartbeat:                  h.brokerHeartbeat,
		remoting.GetRouteInfoByTopic:           h.getRouteInfoByTopic,
		remoting.GetBrokerClusterInfo:          h.getBrokerClusterInfo,
		remoting.GetAllTopicListFromNameServer: h.getAllTopicList,
		remoting.GetTopicsByCluster:            h.getTopicsByCluster,
		remoting.GetSystemTopicListFromNS:      h.getSystemTopicList,
		remoting.GetUnitTopicList:              h.topicsWithFlags(namesrv.TopicSysFlagUnit, 0),
		remoting.GetHasUnitSubTopicList:        h.topicsWithFlags(namesrv.TopicSysFlagUnitSub, 0),
		remoting.GetHasUnitSubUnunitTopicList:  h.topicsWithFlags(namesrv.TopicSysFlagUnitSub, namesrv.TopicSysFlagUnit),
		remoting.DeleteTopicInNamesrv:          h.deleteTopicInNamesrv,
		remoting.RegisterTopicInNamesrv:        h.registerTopicInNamesrv,
		nsCodeWipeWritePermOfBroker:            h.wipeWritePerm,
		nsCodeAddWritePermOfBroker:             h.addWritePerm,
	}
}

// offloaded serves fn on the name server's worker rather than on the event
// loop, answering later: a registration of 100,000 topics takes 130–250 ms
// to decode. Registrations and unregistrations all take this one queue, so
// none overtakes another from the same broker.
func (h *nsHandlers) offloaded(fn HandlerFunc) HandlerFunc {
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		own := req.Clone() // req is recycled when this returns
		if !h.ns.Offload(func() {
			if resp := fn(c, own); resp != nil && c != nil && !own.IsOneway() {
				c.Reply(resp)
			}
		}) {
			h.sampled.Warn().Int32("code", req.Code).Msg("name server worker queue full; request refused")
			return remoting.NewResponse(req, remoting.SystemBusy, "[REJECTREQUEST]system busy, start flow control for a while")
		}
		return nil
	}
}

// nsError maps namesrv sentinels to codes; everything else goes through the
// shared translation in errors.go.
func (h *nsHandlers) nsError(req *remoting.Command, err error) *remoting.Command {
	switch {
	case errors.Is(err, namesrv.ErrRegisterRejected):
		return remoting.NewResponse(req, remoting.SystemError, "register broker failed")
	case errors.Is(err, namesrv.ErrDisabled):
		return remoting.NewResponse(req, remoting.SystemError, "disable")
	case errors.Is(err, namesrv.ErrBadBody):
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	return errorResponse(&h.log, req, err)
}

func nsSuccess(req *remoting.Command, body []byte) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// nsRequire reads required header fields in order.
func nsRequire(req *remoting.Command, keys ...string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		v, err := req.RequireStr(k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (h *nsHandlers) putKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := nsRequire(req, "namespace", "key", "value")
	if err != nil {
		return h.nsError(req, err)
	}
	h.kv.Put(f[0], f[1], f[2])
	return nsSuccess(req, nil)
}

func (h *nsHandlers) getKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := nsRequire(req, "namespace", "key")
	if err != nil {
		return h.nsError(req, err)
	}
	v, err := h.kv.Value(f[0], f[1])
	if errors.Is(err, namesrv.ErrKVNotFound) {
		return remoting.NewResponse(req, remoting.QueryNotFound, "No config item, Namespace: "+f[0]+" Key: "+f[1])
	}
	resp := nsSuccess(req, nil)
	resp.Set("value", v)
	return resp
}

func (h *nsHandlers) deleteKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := nsRequire(req, "namespace", "key")
	if err != nil {
		return h.nsError(req, err)
	}
	h.kv.Delete(f[0], f[1])
	return nsSuccess(req, nil)
}

func (h *nsHandlers) getKVListByNamespace(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	ns, err := req.RequireStr("namespace")
	if err != nil {
		return h.nsError(req, err)
	}
	body, err := h.kv.AppendNamespace(nil, ns)
	if errors.Is(err, namesrv.ErrKVNotFound) {
		return remoting.NewResponse(req, remoting.QueryNotFound, "No config item, Namespace: "+ns)
	}
	return nsSuccess(req, body)
}

// nsBrokerKey reads clusterName and brokerAddr.
func nsBrokerKey(req *remoting.Command) (namesrv.BrokerAddr, error) {
	f, err := nsRequire(req, "clusterName", "brokerAddr")
	if err != nil {
		return namesrv.BrokerAddr{}, err
	}
	return namesrv.BrokerAddr{Cluster: f[0], Addr: f[1]}, nil
}

func (h *nsHandlers) registerBroker(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := nsRequire(req, "brokerName", "brokerAddr", "clusterName", "haServerAddr")
	if err != nil {
		return h.nsError(req, err)
	}
	id, err := req.Int64("brokerId")
	if err != nil {
		return h.nsError(req, err)
	}
	if want := req.OptInt64("bodyCrc32", 0); want != 0 {
		// UtilAll.crc32: CRC32 (IEEE) masked to a non-negative int.
		if got := int64(crc32.ChecksumIEEE(req.Body) & 0x7fffffff); got != want {
			h.log.Warn().Str("brokerAddr", f[1]).Int64("bodyCrc32", want).Int64("crc32", got).Msg("register broker body crc32 mismatch")
			return remoting.NewResponse(req, remoting.SystemError, "crc32 not match")
		}
	}
	var body namesrv.RegisterBody
	// Apache 5.3.3's broker deflates the body under compressedRegister=true
	// but still sends compressed=false (BrokerOuterAPI.registerBrokerAll):
	// a zlib header, which no JSON body starts with, says so too.
	if req.Bool("compressed") || namesrv.IsZlib(req.Body) {
		body, err = namesrv.DecodeCompressedRegisterBody(req.Body, h.cfg.RegisterBodyMaxInflatedBytes)
	} else {
		body, err = namesrv.DecodeRegisterBody(req.Body, req.Version)
	}
	if err != nil {
		h.sampled.Warn().Err(err).Str("brokerAddr", f[1]).Int("bodyLen", len(req.Body)).Msg("register broker body refused")
		return h.nsError(req, err)
	}
	reg := namesrv.Registration{
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
		reg.Topics = map[string]namesrv.TopicConfig{}
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
		return h.nsError(req, err)
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
	resp := nsSuccess(req, nil)
	if res.HAServerAddr != "" {
		resp.Set("haServerAddr", res.HAServerAddr)
	}
	if res.MasterAddr != "" {
		resp.Set("masterAddr", res.MasterAddr)
	}
	if h.cfg.ReturnOrderTopicConfigToBroker {
		if b, err := h.kv.AppendNamespace(nil, namesrv.NamespaceOrderTopicConfig); err == nil {
			resp.Body = b
		}
	}
	return resp
}

func (h *nsHandlers) unregisterBroker(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := nsBrokerKey(req)
	if err != nil {
		return h.nsError(req, err)
	}
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.nsError(req, err)
	}
	if _, err := req.Int64("brokerId"); err != nil {
		return h.nsError(req, err)
	}
	h.routes.Unregister(key, name)
	h.log.Info().Str("clusterName", key.Cluster).Str("brokerAddr", key.Addr).Str("brokerName", name).Msg("broker unregistered")
	return nsSuccess(req, nil)
}

func (h *nsHandlers) queryDataVersion(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := nsBrokerKey(req)
	if err != nil {
		return h.nsError(req, err)
	}
	dv, err := namesrv.DecodeDataVersion(req.Body)
	if err != nil {
		return h.nsError(req, err)
	}
	changed, have := h.routes.QueryDataVersion(key, dv, time.Now())
	resp := nsSuccess(req, nil)
	if have != nil {
		resp.Body = have.AppendJSON(nil)
	}
	resp.Set("changed", strconv.FormatBool(changed))
	return resp
}

func (h *nsHandlers) brokerHeartbeat(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	key, err := nsBrokerKey(req)
	if err != nil {
		return h.nsError(req, err)
	}
	h.routes.Heartbeat(key, time.Now())
	return nsSuccess(req, nil)
}

func (h *nsHandlers) getRouteInfoByTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.nsError(req, err)
	}
	rd, err := h.routes.Route(topic)
	if errors.Is(err, namesrv.ErrTopicNotExist) {
		return remoting.NewResponse(req, remoting.TopicNotExist,
			"No topic route info in name server for the topic: "+topic+nsFAQSuffix)
	}
	if h.cfg.OrderMessageEnable {
		rd.OrderTopicConf, _ = h.kv.Value(namesrv.NamespaceOrderTopicConfig, topic) // absent: not ordered
	}
	return nsSuccess(req, rd.AppendJSON(make([]byte, 0, 512)))
}

func (h *nsHandlers) getBrokerClusterInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return nsSuccess(req, h.routes.ClusterInfo().AppendJSON(nil))
}

func (h *nsHandlers) getAllTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !h.cfg.EnableAllTopicList {
		return h.nsError(req, namesrv.ErrDisabled)
	}
	return nsSuccess(req, h.routes.Topics().AppendJSON(nil))
}

func (h *nsHandlers) getTopicsByCluster(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !h.cfg.EnableTopicList {
		return h.nsError(req, namesrv.ErrDisabled)
	}
	cluster, err := req.RequireStr("cluster")
	if err != nil {
		return h.nsError(req, err)
	}
	return nsSuccess(req, h.routes.TopicsByCluster(cluster).AppendJSON(nil))
}

func (h *nsHandlers) getSystemTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return nsSuccess(req, h.routes.SystemTopics().AppendJSON(nil))
}

func (h *nsHandlers) topicsWithFlags(want, without int32) HandlerFunc {
	return func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		if !h.cfg.EnableTopicList {
			return h.nsError(req, namesrv.ErrDisabled)
		}
		return nsSuccess(req, h.routes.TopicsWithFlags(want, without).AppendJSON(nil))
	}
}

func (h *nsHandlers) deleteTopicInNamesrv(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.nsError(req, err)
	}
	cluster := req.Str("clusterName")
	h.routes.DeleteTopic(topic, cluster)
	h.log.Info().Str("topic", topic).Str("clusterName", cluster).Msg("topic deleted")
	return nsSuccess(req, nil)
}

func (h *nsHandlers) registerTopicInNamesrv(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.nsError(req, err)
	}
	qds, err := namesrv.DecodeRouteQueueDatas(req.Body)
	if err != nil {
		return h.nsError(req, err)
	}
	h.routes.RegisterTopic(topic, qds)
	return nsSuccess(req, nil)
}

func (h *nsHandlers) wipeWritePerm(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.nsError(req, err)
	}
	n := h.routes.WipeWritePerm(name)
	h.log.Info().Str("brokerName", name).Int("topics", n).Msg("write perm wiped")
	resp := nsSuccess(req, nil)
	resp.SetInt64("wipeTopicCount", int64(n))
	return resp
}

func (h *nsHandlers) addWritePerm(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, err := req.RequireStr("brokerName")
	if err != nil {
		return h.nsError(req, err)
	}
	n := h.routes.AddWritePerm(name)
	h.log.Info().Str("brokerName", name).Int("topics", n).Msg("write perm added")
	resp := nsSuccess(req, nil)
	resp.SetInt64("addTopicCount", int64(n))
	return resp
}
