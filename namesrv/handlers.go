package namesrv

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// Name-server request codes remoting/codes.go does not name.
const (
	codeWipeWritePermOfBroker int32 = 205
	codeAddWritePermOfBroker  int32 = 327
	codeBrokerHeartbeat       int32 = 904
)

// HandlerFunc and Table are remoting's: the name server's table is its own
// value of them, so that mqnamesrv links neither processor nor what
// processor serves from (broker, store).
type (
	HandlerFunc = remoting.HandlerFunc
	Table       = remoting.Table
)

// handlers serve name-server requests: each decodes its header and body,
// calls Routes or KV, and encodes the answer.
type handlers struct {
	routes *Routes
	kv     *KV
	live   *atomic.Pointer[Config] // the config in force (UPDATE_NAMESRV_CONFIG changes it: config_admin.go)
	// offload runs fn off the event loop, in order: Server.Offload (the fuzz
	// target runs fn at once).
	offload func(fn func()) bool
	log     zerolog.Logger
	// sampled carries per-request warnings a client can trigger at will.
	sampled zerolog.Logger
	// users, with authenticationEnabled, sign the writes (auth.go); nil
	// when it is off.
	users users
}

// Handlers returns the name server's request table, served from s's Routes
// and KV; pass it (or a wrapper of it) to Start.
func (s *Server) Handlers() Table { return s.newHandlers(s.Offload).table() }

func (s *Server) newHandlers(offload func(func()) bool) *handlers {
	h := &handlers{routes: s.Routes, kv: s.KV, live: &s.live, offload: offload, users: s.users,
		log: s.root.With().Str("component", "namesrv-handler").Logger()}
	h.sampled = h.log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Minute})
	return h
}

// codeAccess is who may send each code with authentication on; a code
// missing here is taken for a write that needs a Super user.
var codeAccess = map[int32]access{
	remoting.GetKVConfig:                   open,
	remoting.GetKVListByNamespace:          open,
	remoting.GetRouteInfoByTopic:           open,
	remoting.GetBrokerClusterInfo:          open,
	remoting.GetAllTopicListFromNameServer: open,
	remoting.GetTopicsByCluster:            open,
	remoting.GetSystemTopicListFromNS:      open,
	remoting.GetUnitTopicList:              open,
	remoting.GetHasUnitSubTopicList:        open,
	remoting.GetHasUnitSubUnunitTopicList:  open,
	remoting.GetNamesrvConfig:              open, // secrets print as ***
	remoting.RegisterBroker:                brokerUser,
	remoting.UnregisterBroker:              brokerUser,
	codeBrokerHeartbeat:                    brokerUser,
	remoting.QueryDataVersion:              brokerUser, // refreshes the broker's liveness
	remoting.PutKVConfig:                   superUser,
	remoting.DeleteKVConfig:                superUser,
	remoting.DeleteTopicInNamesrv:          superUser,
	remoting.RegisterTopicInNamesrv:        superUser,
	codeWipeWritePermOfBroker:              superUser,
	codeAddWritePermOfBroker:               superUser,
	remoting.UpdateNamesrvConfig:           superUser,
}

// signedFor is signed with code's access (codeAccess).
func (h *handlers) signedFor(code int32, fn HandlerFunc) HandlerFunc {
	a, ok := codeAccess[code]
	if !ok {
		a = superUser
	}
	return h.signed(a, fn)
}

// table is every code's handler, each behind the signature its code
// needs: registrations check it on the worker (it hashes the whole body),
// the others on the event loop.
func (h *handlers) table() Table {
	t := h.handlerTable()
	for code, fn := range t {
		switch code {
		case remoting.RegisterBroker:
			t[code] = h.offloaded(h.signedFor(code, h.registerBroker))
		case remoting.UnregisterBroker:
			t[code] = h.offloaded(h.signedFor(code, h.unregisterBroker))
		default:
			t[code] = h.signedFor(code, fn)
		}
	}
	return t
}

// handlerTable is every code's handler, unchecked.
func (h *handlers) handlerTable() Table {
	return Table{
		remoting.PutKVConfig:                   h.putKVConfig,
		remoting.GetKVConfig:                   h.getKVConfig,
		remoting.DeleteKVConfig:                h.deleteKVConfig,
		remoting.GetKVListByNamespace:          h.getKVListByNamespace,
		remoting.RegisterBroker:                nil, // table: offloaded, then signed
		remoting.UnregisterBroker:              nil,
		remoting.QueryDataVersion:              h.queryDataVersion,
		codeBrokerHeartbeat:                    h.brokerHeartbeat,
		remoting.GetRouteInfoByTopic:           h.getRouteInfoByTopic,
		remoting.GetBrokerClusterInfo:          h.getBrokerClusterInfo,
		remoting.GetAllTopicListFromNameServer: h.getAllTopicList,
		remoting.GetTopicsByCluster:            h.getTopicsByCluster,
		remoting.GetSystemTopicListFromNS:      h.getSystemTopicList,
		remoting.GetUnitTopicList:              h.topicsWithFlags(TopicSysFlagUnit, 0),
		remoting.GetHasUnitSubTopicList:        h.topicsWithFlags(TopicSysFlagUnitSub, 0),
		remoting.GetHasUnitSubUnunitTopicList:  h.topicsWithFlags(TopicSysFlagUnitSub, TopicSysFlagUnit),
		remoting.DeleteTopicInNamesrv:          h.deleteTopicInNamesrv,
		remoting.RegisterTopicInNamesrv:        h.registerTopicInNamesrv,
		codeWipeWritePermOfBroker:              h.wipeWritePerm,
		codeAddWritePermOfBroker:               h.addWritePerm,
		remoting.GetNamesrvConfig:              h.getConfig, // config_admin.go
		remoting.UpdateNamesrvConfig:           h.updateConfig,
	}
}

// offloaded serves fn on the name server's worker rather than on the event
// loop, answering later: a registration of 100,000 topics takes 130–250 ms
// to decode. Registrations and unregistrations all take this one queue, so
// none overtakes another from the same broker.
func (h *handlers) offloaded(fn HandlerFunc) HandlerFunc {
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		own := req.Clone() // req is recycled when this returns
		if !h.offload(func() {
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

// refuse is the name server's one translation of errors to answers, with
// Apache's codes and remarks. A bad or missing header field is the client's
// fault and is answered SYSTEM_ERROR with the reason, as Apache's header
// decoder does; anything else unexpected is logged here, once, and answered
// SYSTEM_ERROR.
func (h *handlers) refuse(req *remoting.Command, err error) *remoting.Command {
	switch {
	case errors.Is(err, ErrRegisterRejected):
		return remoting.NewResponse(req, remoting.SystemError, "register broker failed")
	case errors.Is(err, ErrDisabled):
		return remoting.NewResponse(req, remoting.SystemError, "disable")
	case errors.Is(err, ErrBadBody):
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	case errors.Is(err, remoting.ErrMissingField), errors.Is(err, remoting.ErrBadField):
	default:
		h.log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	}
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}

func success(req *remoting.Command, body []byte) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// require reads required header fields in order.
func require(req *remoting.Command, keys ...string) ([]string, error) {
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
