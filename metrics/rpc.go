package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketgo/rocketgo/remoting"
)

// rpcBuckets are RemotingMetricsManager's rocketmq_rpc_latency buckets (ms).
var rpcBuckets = []float64{1, 3, 5, 7, 10, 100, 1000, 2000, 3000}

// maxRPCSeries bounds the label sets of rocketmq_rpc_latency: a request
// code is the client's choice, and one Apache does not name is labelled by
// its number (as Apache does) only until the bound, then "other".
const maxRPCSeries = 1024

// RPC is the processor interceptor that records rocketmq_rpc_latency for
// every answered request. A label set is resolved once and cached (a
// copy-on-write map read with one atomic load), so an answer costs a map
// read and a histogram observation.
type RPC struct {
	hist    *prometheus.HistogramVec
	creates creates

	mu    sync.Mutex                                     // serialises cache updates
	cache atomic.Pointer[map[uint64]prometheus.Observer] // rpcKey -> observer
}

func newRPC(constLabels prometheus.Labels) *RPC {
	r := &RPC{creates: newCreates(constLabels), hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "rocketmq_rpc_latency_milliseconds", // Apache's exposition appends the unit
		Help:        "Rpc latency",
		ConstLabels: constLabels,
		Buckets:     rpcBuckets,
	}, []string{"protocol_type", "request_code", "response_code", "is_long_polling", "result"})}
	m := map[uint64]prometheus.Observer{}
	r.cache.Store(&m)
	return r
}

// Before lets every request through.
func (r *RPC) Before(*remoting.Conn, *remoting.Command) *remoting.Command { return nil }

// After records the answer's latency in milliseconds. An answer written
// after its handler returned (Exchange.Late) is a long poll when it answers
// a pull or a pop: Apache's is_long_polling (the request was suspended).
func (r *RPC) After(x remoting.Exchange) {
	long := x.Late && (x.Code == remoting.PullMessage || x.Code == remoting.PopMessage)
	k := uint64(uint32(x.Code))<<32 | uint64(uint32(x.Resp.Code))<<1
	if long {
		k |= 1
	}
	o, ok := (*r.cache.Load())[k]
	if !ok {
		o = r.resolve(k, x.Code, x.Resp.Code, long)
	}
	o.Observe(float64(x.Took.Nanoseconds()) / 1e6)
	r.creates.observe(x)
}

func (r *RPC) resolve(k uint64, code, resp int32, long bool) prometheus.Observer {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.cache.Load()
	if o, ok := old[k]; ok {
		return o
	}
	req := requestName(code)
	if _, named := requestCodeNames[code]; !named && len(old) >= maxRPCSeries {
		req = "other"
	}
	o := r.hist.WithLabelValues("remoting", req, responseName(resp), strconv.FormatBool(long), "success")
	if len(old) >= maxRPCSeries {
		return o // not cached: the label values are bounded, the cache too
	}
	m := make(map[uint64]prometheus.Observer, len(old)+1)
	for kk, v := range old {
		m[kk] = v
	}
	m[k] = o
	r.cache.Store(&m)
	return o
}
