package proxy

import (
	"context"
	"net"
	"net/netip"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// QueryRoute answers the topic's queues, each on a broker whose endpoints
// are the ones the client reached the proxy at (cluster mode: every call
// goes through the proxy) or, in local mode, that broker's own proxy, as
// Apache's RouteActivity.
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.QueryRouteResponse{Status: statusOf(err)}, nil
	}
	r, err := s.cluster.route(ctx, req.GetTopic().GetName())
	if err != nil {
		return &v2.QueryRouteResponse{Status: statusOf(err)}, nil
	}
	var mqs []*v2.MessageQueue
	for _, qd := range r.Queues {
		addr := r.master(qd.BrokerName)
		if addr == "" {
			continue
		}
		types := s.topicMessageTypes(ctx, req.GetTopic().GetName(), addr)
		b := &v2.Broker{Name: qd.BrokerName, Id: 0, Endpoints: s.brokerEndpoints(req.GetEndpoints(), addr)}
		mqs = append(mqs, queuesOf(qd.Perm, qd.ReadQueueNums, qd.WriteQueueNums, req.GetTopic(), b, types)...)
	}
	return &v2.QueryRouteResponse{Status: okStatus(), MessageQueues: mqs}, nil
}

// brokerEndpoints is where a client reaches the broker at addr: through
// this proxy in cluster mode (the endpoints the client used), at the
// broker's host and this proxy's gRPC port in local mode (Apache's
// ProxyTopicRouteData: every broker runs its own local proxy on the same
// port).
func (s *Server) brokerEndpoints(used *v2.Endpoints, addr string) *v2.Endpoints {
	if s.local == nil {
		return used
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return used
	}
	scheme := v2.AddressScheme_DOMAIN_NAME
	if ip, err := netip.ParseAddr(host); err == nil {
		scheme = v2.AddressScheme_IPv4
		if ip.Is6() && !ip.Is4In6() {
			scheme = v2.AddressScheme_IPv6
		}
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(s.port)}}}
}

// queuesOf is RouteActivity.genMessageQueueFromQueueData: read-only queues,
// then write-only, then read-write; NONE queues when the perm allows nothing.
func queuesOf(perm, readN, writeN int32, topic *v2.Resource, b *v2.Broker, types []v2.MessageType) []*v2.MessageQueue {
	var r, w, rw, n int32
	switch {
	case perm&permWrite != 0 && perm&permRead != 0:
		rw = min(readN, writeN)
		r, w = readN-rw, writeN-rw
	case perm&permWrite != 0:
		w = writeN
	case perm&permRead != 0:
		r = readN
	case perm&(permRead|permWrite|permInherit) == 0:
		n = max(1, max(readN, writeN))
	}
	out := make([]*v2.MessageQueue, 0, r+w+rw+n)
	id := int32(0)
	add := func(count int32, p v2.Permission) {
		for i := int32(0); i < count; i++ {
			out = append(out, &v2.MessageQueue{Topic: topic, Id: id, Permission: p, Broker: b, AcceptMessageTypes: types})
			id++
		}
	}
	add(r, v2.Permission_READ)
	add(w, v2.Permission_WRITE)
	add(rw, v2.Permission_READ_WRITE)
	add(n, v2.Permission_NONE)
	return out
}

// permInherit is PermName.PERM_INHERIT (isAccessible counts it).
const permInherit int32 = 1 << 0

func permissionOf(perm int32) v2.Permission {
	switch {
	case perm&permRead != 0 && perm&permWrite != 0:
		return v2.Permission_READ_WRITE
	case perm&permRead != 0:
		return v2.Permission_READ
	case perm&permWrite != 0:
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// QueryAssignment answers one assignment per broker with readable queues
// (queue id -1: the broker picks the queue for each pop), or one per queue
// when the group consumes orderly, as Apache's RouteActivity.
func (s *Server) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.QueryAssignmentResponse{Status: statusOf(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.QueryAssignmentResponse{Status: statusOf(err)}, nil
	}
	r, err := s.cluster.route(ctx, req.GetTopic().GetName())
	if err != nil {
		return &v2.QueryAssignmentResponse{Status: statusOf(err)}, nil
	}
	fifo := false
	if g, _ := s.groupConfig(ctx, req.GetGroup().GetName()); g != nil {
		// A lite group pops by client, never by queue: one assignment per
		// broker even when it consumes orderly.
		fifo = g.ConsumeMessageOrderly && g.liteBindTopic() == ""
	}
	var as []*v2.Assignment
	for _, qd := range r.Queues {
		if qd.Perm&permRead == 0 || qd.ReadQueueNums <= 0 || r.master(qd.BrokerName) == "" {
			continue
		}
		b := &v2.Broker{Name: qd.BrokerName, Id: 0, Endpoints: s.brokerEndpoints(req.GetEndpoints(), r.master(qd.BrokerName))}
		p := permissionOf(qd.Perm)
		if fifo {
			for i := int32(0); i < qd.ReadQueueNums; i++ {
				as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: i, Permission: p, Broker: b}})
			}
			continue
		}
		as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: -1, Permission: p, Broker: b}})
	}
	if len(as) == 0 {
		return &v2.QueryAssignmentResponse{Status: &v2.Status{Code: v2.Code_FORBIDDEN, Message: "no readable queue"}}, nil
	}
	return &v2.QueryAssignmentResponse{Status: okStatus(), Assignments: as}, nil
}
