package namesrv

import (
	"errors"

	"github.com/rocketgo/rocketgo/remoting"
)

// PUT_KV_CONFIG (100), GET_KV_CONFIG (101), DELETE_KV_CONFIG (102),
// GET_KVLIST_BY_NAMESPACE (219): Apache's KVConfigManager over Remoting.

func (h *handlers) putKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := require(req, "namespace", "key", "value")
	if err != nil {
		return h.refuse(req, err)
	}
	h.kv.Put(f[0], f[1], f[2])
	return success(req, nil)
}

func (h *handlers) getKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := require(req, "namespace", "key")
	if err != nil {
		return h.refuse(req, err)
	}
	v, err := h.kv.Value(f[0], f[1])
	if errors.Is(err, ErrKVNotFound) {
		return remoting.NewResponse(req, remoting.QueryNotFound, "No config item, Namespace: "+f[0]+" Key: "+f[1])
	}
	resp := success(req, nil)
	resp.Set("value", v)
	return resp
}

func (h *handlers) deleteKVConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	f, err := require(req, "namespace", "key")
	if err != nil {
		return h.refuse(req, err)
	}
	h.kv.Delete(f[0], f[1])
	return success(req, nil)
}

func (h *handlers) getKVListByNamespace(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	ns, err := req.RequireStr("namespace")
	if err != nil {
		return h.refuse(req, err)
	}
	body, err := h.kv.AppendNamespace(nil, ns)
	if errors.Is(err, ErrKVNotFound) {
		return remoting.NewResponse(req, remoting.QueryNotFound, "No config item, Namespace: "+ns)
	}
	return success(req, body)
}
