package proxy

import (
	"context"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/remoting"
)

// maxTxGroups bounds the transactional producer groups registered per broker.
const maxTxGroups = 10_000

// txGroupIdle is how long a producer group is heartbeated to a broker after
// its last half message there: long enough for the broker's checks
// (transactionTimeOut 6 s, up to 15 checks a minute apart).
const txGroupIdle = 30 * time.Minute

// Heartbeat is Apache's ClientActivity.heartbeat: a client with settings is
// (re)registered; one without is UNRECOGNIZED_CLIENT_TYPE.
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	meta := metaOf(ctx)
	c := s.clients.lookup(meta.clientID)
	var settings *v2.Settings
	if c != nil {
		c.mu.Lock()
		settings = c.settings
		c.seen = time.Now()
		c.mu.Unlock()
	}
	if settings == nil {
		return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE,
			Message: "cannot find client settings for this client"}}, nil
	}
	switch settings.GetClientType() {
	case v2.ClientType_PRODUCER:
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER,
		v2.ClientType_LITE_PUSH_CONSUMER, v2.ClientType_LITE_SIMPLE_CONSUMER:
		if err := validateGroup(req.GetGroup()); err != nil {
			return &v2.HeartbeatResponse{Status: statusOf(err)}, nil
		}
		if err := s.checkLiteMode(ctx, settings, req.GetGroup().GetName()); err != nil {
			return &v2.HeartbeatResponse{Status: statusOf(err)}, nil
		}
	default:
		return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE,
			Message: settings.GetClientType().String()}}, nil
	}
	return &v2.HeartbeatResponse{Status: okStatus()}, nil
}

// NotifyClientTermination forgets the client (Apache: removes its
// settings and channel).
func (s *Server) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	c := s.clients.remove(metaOf(ctx).clientID)
	var settings *v2.Settings
	if c != nil {
		c.mu.Lock()
		settings = c.settings
		c.mu.Unlock()
	}
	if settings == nil {
		return &v2.NotifyClientTerminationResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE,
			Message: "cannot find client settings for this client"}}, nil
	}
	switch settings.GetClientType() {
	case v2.ClientType_PRODUCER:
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER,
		v2.ClientType_LITE_PUSH_CONSUMER, v2.ClientType_LITE_SIMPLE_CONSUMER:
		if err := validateGroup(req.GetGroup()); err != nil {
			return &v2.NotifyClientTerminationResponse{Status: statusOf(err)}, nil
		}
		s.offlineLite(metaOf(ctx).clientID, settings)
	default:
		return &v2.NotifyClientTerminationResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE,
			Message: settings.GetClientType().String()}}, nil
	}
	return &v2.NotifyClientTerminationResponse{Status: okStatus()}, nil
}

// heartbeatLoop registers the transactional producer groups with the
// brokers holding their half messages every transactionHeartbeatPeriodSecond
// (and at once when a group is new), and sweeps idle clients and expired
// transaction data.
func (s *Server) heartbeatLoop() {
	period := time.Duration(max(1, s.cfg.TransactionHeartbeatPeriodSecond)) * time.Second
	t := time.NewTicker(period)
	defer t.Stop()
	sweep := time.NewTicker(10 * time.Second)
	defer sweep.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.heartbeatBrokers()
		case <-s.beat:
			s.heartbeatBrokers()
		case now := <-sweep.C:
			s.clients.sweep(now)
			s.txs.sweep(now)
		}
	}
}

func (s *Server) heartbeatBrokers() {
	now := time.Now()
	plan := map[string][]string{}
	s.txGroupsMu.Lock()
	for addr, groups := range s.txGroups {
		for g, last := range groups {
			if now.Sub(last) > txGroupIdle {
				delete(groups, g)
				continue
			}
			plan[addr] = append(plan[addr], g)
		}
		if len(groups) == 0 {
			delete(s.txGroups, addr)
		}
	}
	s.txGroupsMu.Unlock()
	for addr, groups := range plan {
		body := heartbeatBody(s.proxyClientID(), groups)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { // Shutdown must not wait for a dead broker's timeout
			select {
			case <-s.quit:
				cancel()
			case <-ctx.Done():
			}
		}()
		resp, err := s.cluster.invoke(ctx, addr, remoting.NewRequest(remoting.HeartBeat, nil, body))
		cancel()
		if err != nil || resp.Code != remoting.Success {
			s.sampled.Warn().Err(err).Str("brokerAddr", addr).Msg("heartbeat of transactional producer groups failed")
		}
	}
}

// proxyClientID is the clientID the proxy registers producer groups with
// (MQClientInstance's name@pid form), fixed in New.
func (s *Server) proxyClientID() string { return s.proxyID }

// heartbeatBody is HeartbeatData's JSON with producer groups only.
func heartbeatBody(clientID string, groups []string) []byte {
	b := []byte(`{"clientID":`)
	b = remoting.AppendJSONString(b, clientID)
	b = append(b, `,"consumerDataSet":[],"producerDataSet":[`...)
	for i, g := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"groupName":`...)
		b = remoting.AppendJSONString(b, g)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
