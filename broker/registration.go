package broker

import (
	"context"
	"strconv"
	"sync"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/remoting"
)

// registrar keeps the broker registered with every name server: at start,
// every registerNameServerPeriod, and at once when the topic table changes.
type registrar struct {
	b       *Broker
	client  *remoting.Client
	trigger chan struct{}
}

func newRegistrar(b *Broker) *registrar {
	return &registrar{b: b, client: remoting.NewClient(b.root), trigger: make(chan struct{}, 1)}
}

// poke asks for a registration soon; never blocks.
func (r *registrar) poke() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

func (r *registrar) run(quit <-chan struct{}) {
	period := time.Duration(r.b.Config.RegisterNameServerPeriod) * time.Millisecond
	if period < time.Second {
		period = time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		r.registerAll()
		select {
		case <-quit:
			return
		case <-t.C:
		case <-r.trigger:
		}
	}
}

// registerBody is Apache's RegisterBrokerBody.
type registerBody struct {
	FilterServerList            []string            `json:"filterServerList"`
	TopicConfigSerializeWrapper jsoniter.RawMessage `json:"topicConfigSerializeWrapper"`
}

func (r *registrar) registerAll() {
	wrapper, err := r.b.Topics.MarshalWrapper()
	if err != nil {
		r.b.log.Error().Err(err).Msg("encode topic table for registration")
		return
	}
	body, err := jsoniter.Marshal(registerBody{FilterServerList: []string{}, TopicConfigSerializeWrapper: wrapper})
	if err != nil {
		r.b.log.Error().Err(err).Msg("encode registration body")
		return
	}
	timeout := time.Duration(r.b.Config.RegisterBrokerTimeoutMills) * time.Millisecond
	var wg sync.WaitGroup
	for _, addr := range r.b.Config.NamesrvAddrs() {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			req := remoting.NewRequest(remoting.RegisterBroker, r.header(), body)
			resp, err := r.client.Invoke(ctx, addr, req)
			switch {
			case err != nil:
				r.b.log.Warn().Err(err).Str("namesrvAddr", addr).Msg("register broker failed")
			case resp.Code != remoting.Success:
				r.b.log.Warn().Int32("code", resp.Code).Str("remark", resp.Remark).Str("namesrvAddr", addr).
					Msg("register broker refused")
			default:
				r.b.log.Debug().Str("namesrvAddr", addr).Msg("registered broker")
			}
		}(addr)
	}
	wg.Wait()
}

func (r *registrar) header() map[string]string {
	c := &r.b.Config
	return map[string]string{
		"brokerName":   c.BrokerName,
		"brokerAddr":   c.Addr(),
		"clusterName":  c.BrokerClusterName,
		"haServerAddr": c.BrokerIP1 + ":" + strconv.Itoa(c.ListenPort+1),
		"brokerId":     strconv.FormatInt(c.BrokerID, 10),
		"compressed":   "false",
		"bodyCrc32":    "0", // 0 = not checked, as Apache's name server treats it
	}
}

// unregisterAll tells every name server the broker is leaving.
func (r *registrar) unregisterAll(ctx context.Context) {
	c := &r.b.Config
	for _, addr := range c.NamesrvAddrs() {
		req := remoting.NewRequest(remoting.UnregisterBroker, map[string]string{
			"brokerName":  c.BrokerName,
			"brokerAddr":  c.Addr(),
			"clusterName": c.BrokerClusterName,
			"brokerId":    strconv.FormatInt(c.BrokerID, 10),
		}, nil)
		if _, err := r.client.Invoke(ctx, addr, req); err != nil {
			r.b.log.Warn().Err(err).Str("namesrvAddr", addr).Msg("unregister broker failed")
		}
	}
}
