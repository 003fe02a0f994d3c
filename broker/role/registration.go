package role

// Registration with the name servers (Apache BrokerController.registerBrokerAll
// and BrokerOuterAPI.registerBrokerAll).
//
// Full registrations (at start and every registerNameServerPeriod) carry the
// whole topic table; between them a change of the table sends only the
// topics added or changed since the last registration that every name server
// accepted (Apache's registerIncrementBrokerData), with the new data version,
// so a broker whose table grows by heartbeats does not re-send 100,000
// topics for each new one.
//
// Body forms (REGISTER_BROKER 103):
//   - JSON RegisterBrokerBody (default);
//   - compressedRegister=true: Apache's RegisterBrokerBody.encode(true), a
//     zlib stream of length-prefixed fields (namesrv/body_compressed.go has
//     the layout), with header compressed=true.
//
// Split registration (enableSplitRegistration=true): the table is sent as
// parts of splitRegistrationSize topics, each a registration of its own, and
// a last part with the rest (possibly none), as Apache's loop does. Every
// part carries the same data version. A name server merges them: topics a
// registration omits keep their routes (unless the name server runs with
// deleteTopicWithBrokerRegistration, which does not mix with split
// registration, in Apache as here).
//
// With both keys false, Apache sends one body whatever its size; a body past
// the name server's 16 MiB frame limit is refused as a bad frame, Apache's
// name server closes the connection and drops the broker, and every later
// registration fails the same way: the broker leaves the cluster. rocketgo
// instead splits such a table into parts of splitRegistrationSize topics
// (logged, sampled), which any name server accepts.

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// maxRegisterBody is the largest registration body sent in one request:
// a frame (16 MiB) less room for the header.
const maxRegisterBody = remoting.MaxFrameLength - 64<<10

// compressLevel: Apache deflates at BEST_COMPRESSION; any level inflates the
// same, and the default level is several times faster for ~5% more bytes.
const compressLevel = zlib.DefaultCompression

// registrar keeps the broker registered with every name server: at start,
// every registerNameServerPeriod, and soon after the topic table changes.
//
// Each name server has its own goroutine (a peer) and its own record of
// what it accepted, so one that is dead or hangs (accepts and never
// answers, for up to registerBrokerTimeoutMills) delays no registration
// with the others: Apache waits for every name server's answer in each
// round, so a hanging one holds back every change for the time-out.
type registrar struct {
	s       *Service
	trigger chan struct{}
	full    atomic.Bool // the next poke registers the whole table
	sampled zerolog.Logger
	// ctx ends the registrations in flight when the broker stops.
	ctx    context.Context
	cancel context.CancelFunc
	// halt stops run before the broker unregisters, so that no
	// registration follows the unregistration; stopped is closed once run
	// and its peers have returned.
	halt     chan struct{}
	stopped  chan struct{}
	launched atomic.Bool // run was started (Service.Run, or the first role taken)
	// changes counts the pokes: a registration that read n before its
	// snapshot holds every change poked up to n (registered.go).
	changes atomic.Int64

	mu      sync.Mutex
	peers   map[string]*peer // by name server address
	waiters []*regWaiter     // sends waiting for a registration (registered.go)
}

// peer is the registration state of one name server.
type peer struct {
	addr    string
	trigger chan struct{}
	full    atomic.Bool // the next registration is a full one
	quit    chan struct{}
	offered atomic.Int64 // r.changes as read before the last registration attempt

	mu sync.Mutex // serialises registrations with addr; guards sent
	// sent is the table as last accepted by addr (values are never mutated
	// after insertion, so pointers tell changes); nil until a full
	// registration succeeded.
	sent map[string]*tables.TopicConfig
}

func newRegistrar(s *Service) *registrar {
	ctx, cancel := context.WithCancel(context.Background())
	return &registrar{s: s, trigger: make(chan struct{}, 1),
		sampled: s.log.Sample(&zerolog.BurstSampler{Burst: 3, Period: 10 * time.Minute}),
		ctx:     ctx, cancel: cancel, peers: make(map[string]*peer),
		halt: make(chan struct{}), stopped: make(chan struct{})}
}

// stop halts the registrations and waits until none is in flight (the
// broker then unregisters). Once.
func (r *registrar) stop(ctx context.Context) {
	close(r.halt)
	defer r.settle(true)
	if !r.launched.Load() {
		return
	}
	select {
	case <-r.stopped:
	case <-ctx.Done():
	}
}

// pokeFull asks for a full registration soon (after brokerPermission
// changed); never blocks.
func (r *registrar) pokeFull() {
	r.full.Store(true)
	r.poke()
}

// poke asks for a registration soon; never blocks.
func (r *registrar) poke() {
	r.changes.Add(1)
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

func (p *peer) poke(full bool) {
	if full {
		p.full.Store(true)
	}
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

func (r *registrar) run(quit <-chan struct{}) {
	period := r.s.d.Config().RegisterPeriod
	if period < time.Second {
		period = time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	var wg sync.WaitGroup
	running := make(map[string]*peer)
	defer func() {
		r.cancel() // a registration hanging on a name server ends now
		for _, p := range running {
			close(p.quit)
		}
		wg.Wait()
		close(r.stopped)
	}()
	full := true
	for {
		if isClosed(r.halt) {
			return // stopped before this round: register no more
		}
		// namesrvAddr may change at runtime: a peer per address in force.
		addrs := r.s.d.Config().NamesrvAddrs
		for addr, p := range running {
			if !slices.Contains(addrs, addr) {
				close(p.quit)
				delete(running, addr)
			}
		}
		for _, addr := range addrs {
			p := running[addr]
			if p == nil {
				p = r.peer(addr)
				running[addr] = p
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.serve(p)
				}()
			}
			p.poke(full)
		}
		select {
		case <-quit:
			return
		case <-r.halt:
			return
		case <-t.C:
			full = true
		case <-r.trigger:
			full = r.full.Swap(false)
		}
	}
}

// peer returns addr's registration state, made on first use. A peer whose
// address left namesrvAddr is made anew when it comes back.
func (r *registrar) peer(addr string) *peer {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.peers[addr]
	if p == nil || isClosed(p.quit) {
		p = &peer{addr: addr, trigger: make(chan struct{}, 1), quit: make(chan struct{})}
		r.peers[addr] = p
	}
	return p
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// serve registers with one name server whenever poked, until its quit.
func (r *registrar) serve(p *peer) {
	for {
		select {
		case <-p.quit:
			return
		case <-p.trigger:
		}
		r.registerWith(p, p.full.Swap(false))
	}
}

// register registers with every name server in force now and returns when
// each answered or failed (tests; the broker's loop registers with each on
// its own goroutine).
func (r *registrar) register(full bool) {
	var wg sync.WaitGroup
	for _, addr := range r.s.d.Config().NamesrvAddrs {
		p := r.peer(addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.registerWith(p, full)
		}()
	}
	wg.Wait()
}

// registerWith sends one name server the whole table (full) or the topics
// changed since it last accepted a registration, falling back to a full one
// when that fails.
func (r *registrar) registerWith(p *peer, full bool) {
	p.mu.Lock()
	seen := r.changes.Load()
	defer func() {
		p.offered.Store(max(p.offered.Load(), seen))
		p.mu.Unlock()
		r.settle(false)
	}()
	table, version := r.s.d.Topics.Snapshot()
	if !full && p.sent != nil {
		var changed []*tables.TopicConfig
		for name, tc := range table {
			if p.sent[name] != tc {
				changed = append(changed, tc)
			}
		}
		if len(changed) == 0 {
			return // deletions only: name servers keep omitted topics anyway
		}
		if len(changed) < len(table)/2 && r.send(p.addr, changed, version, "increment") {
			for _, tc := range changed {
				p.sent[tc.TopicName] = tc
			}
			return
		}
	}
	topics := make([]*tables.TopicConfig, 0, len(table))
	for _, tc := range table {
		topics = append(topics, tc)
	}
	if r.send(p.addr, topics, version, "full") {
		p.sent = table
	} else {
		p.sent = nil
	}
}

// send registers topics with the name server at addr, in parts when split
// registration is on or one body would not fit a frame; it reports whether
// it accepted every part.
func (r *registrar) send(addr string, topics []*tables.TopicConfig, version remoting.DataVersion, kind string) bool {
	slices.SortFunc(topics, func(a, b *tables.TopicConfig) int { return cmpString(a.TopicName, b.TopicName) })
	c := r.s.d.Config()
	topics = maskPerms(topics, c.Permission)
	size := c.SplitRegistrationSize
	var parts [][]*tables.TopicConfig
	switch {
	case c.SplitRegistration && len(topics) >= size:
		parts = chunk(topics, size, true)
	case !c.SplitRegistration && len(topics) > size && r.estimate(topics) > maxRegisterBody:
		r.sampled.Warn().Int("topics", len(topics)).Int("splitRegistrationSize", size).
			Msg("topic table exceeds a frame: registering in parts (set enableSplitRegistration or compressedRegister)")
		parts = chunk(topics, size, false)
	default:
		parts = [][]*tables.TopicConfig{topics}
	}
	bodies := make([][]byte, len(parts))
	for i, p := range parts {
		body, err := r.encode(p, version)
		if err != nil {
			r.s.log.Error().Err(err).Msg("encode registration body")
			return false
		}
		if len(body) > maxRegisterBody {
			r.sampled.Error().Int("bodyLen", len(body)).Int("topics", len(p)).
				Msg("registration body exceeds a frame even in parts")
		}
		bodies[i] = body
	}
	timeout := c.RegisterTimeout
	header := r.header()
	for i, body := range bodies {
		if err := r.invoke(addr, header, body, timeout); err != nil {
			r.s.log.Warn().Err(err).Str("namesrvAddr", addr).Str("kind", kind).Int("part", i+1).
				Int("parts", len(bodies)).Msg("register broker failed")
			return false
		}
	}
	r.s.log.Debug().Str("namesrvAddr", addr).Str("kind", kind).Int("topics", len(topics)).
		Int("parts", len(bodies)).Msg("registered broker")
	return true
}

var errRegisterRefused = errors.New("role: registration refused")

func (r *registrar) invoke(addr string, header map[string]string, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	defer cancel()
	resp, err := r.s.client.Invoke(ctx, addr, remoting.NewRequest(remoting.RegisterBroker, header, body))
	if err != nil {
		return err
	}
	if resp.Code != remoting.Success {
		return fmt.Errorf("%w: code %d: %s", errRegisterRefused, resp.Code, resp.Remark)
	}
	// A slave learns its master from the answer (RegisterBrokerResponseHeader).
	r.s.learnMaster(resp.Str("masterAddr"), resp.Str("haServerAddr"))
	return nil
}

// maskPerms gives the name servers each topic's perm less what the broker
// refuses (brokerPermission without read or write), as Apache's
// registerBrokerAll: clients then route neither sends nor pulls to it.
func maskPerms(topics []*tables.TopicConfig, brokerPerm int32) []*tables.TopicConfig {
	if brokerPerm&(message.PermRead|message.PermWrite) == message.PermRead|message.PermWrite {
		return topics
	}
	out := make([]*tables.TopicConfig, len(topics))
	for i, tc := range topics {
		m := *tc
		m.Perm &= brokerPerm
		out[i] = &m
	}
	return out
}

// chunk cuts topics into parts of size; withRest adds the (possibly empty)
// remainder as Apache's split loop does.
func chunk(topics []*tables.TopicConfig, size int, withRest bool) [][]*tables.TopicConfig {
	var parts [][]*tables.TopicConfig
	for len(topics) >= size {
		parts = append(parts, topics[:size])
		topics = topics[size:]
	}
	if len(topics) > 0 || withRest {
		parts = append(parts, topics)
	}
	return parts
}

// estimate bounds the encoded size of a body from above without encoding it.
func (r *registrar) estimate(topics []*tables.TopicConfig) int {
	if r.s.d.Config().CompressedRegister {
		return 0 // encoded and checked instead: deflate gains too much to guess
	}
	n := 256
	for _, tc := range topics {
		n += 192 + 2*len(tc.TopicName) + 2*len(tc.TopicFilterType)
		for k, v := range tc.Attributes {
			n += 8 + 2*(len(k)+len(v))
		}
	}
	return n
}

// registerBody is Apache's RegisterBrokerBody.
type registerBody struct {
	FilterServerList            []string       `json:"filterServerList"`
	TopicConfigSerializeWrapper registerTopics `json:"topicConfigSerializeWrapper"`
}

// registerTopics is Apache's TopicConfigAndMappingSerializeWrapper with no
// static topic mapping: Apache's broker always sends the mapping fields,
// and a name server that requires them (rocketmq-rust's) refuses a body
// without them.
type registerTopics struct {
	DataVersion                remoting.DataVersion           `json:"dataVersion"`
	MappingDataVersion         remoting.DataVersion           `json:"mappingDataVersion"`
	TopicConfigTable           map[string]*tables.TopicConfig `json:"topicConfigTable"`
	TopicQueueMappingDetailMap struct{}                       `json:"topicQueueMappingDetailMap"`
	TopicQueueMappingInfoMap   struct{}                       `json:"topicQueueMappingInfoMap"`
}

func (r *registrar) encode(topics []*tables.TopicConfig, version remoting.DataVersion) ([]byte, error) {
	if r.s.d.Config().CompressedRegister {
		return encodeCompressedBody(topics, version)
	}
	m := make(map[string]*tables.TopicConfig, len(topics))
	for _, tc := range topics {
		m[tc.TopicName] = tc
	}
	return json.Marshal(registerBody{FilterServerList: []string{},
		TopicConfigSerializeWrapper: registerTopics{DataVersion: version, TopicConfigTable: m,
			MappingDataVersion: remoting.DataVersion{Timestamp: time.Now().UnixMilli()}}})
}

// encodeCompressedBody writes RegisterBrokerBody.encode(true): a zlib stream
// of the data version, the topics (TopicConfig.encode: "name read write perm
// filterType attributes"), an empty filter server list and no queue mappings.
func encodeCompressedBody(topics []*tables.TopicConfig, version remoting.DataVersion) ([]byte, error) {
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, compressLevel)
	if err != nil {
		return nil, err
	}
	var scratch []byte
	field := func(b []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		_, _ = zw.Write(n[:]) // writes to a bytes.Buffer; errors surface at Close
		_, _ = zw.Write(b)
	}
	count := func(n int) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(n))
		_, _ = zw.Write(b[:])
	}
	dv, err := json.Marshal(version)
	if err != nil {
		return nil, err
	}
	field(dv)
	count(len(topics))
	for _, tc := range topics {
		attrs, err := json.Marshal(tc.Attributes)
		if err != nil {
			return nil, err
		}
		scratch = append(scratch[:0], tc.TopicName...)
		scratch = append(scratch, ' ')
		scratch = strconv.AppendInt(scratch, int64(tc.ReadQueueNums), 10)
		scratch = append(scratch, ' ')
		scratch = strconv.AppendInt(scratch, int64(tc.WriteQueueNums), 10)
		scratch = append(scratch, ' ')
		scratch = strconv.AppendInt(scratch, int64(tc.Perm), 10)
		scratch = append(scratch, ' ')
		scratch = append(scratch, tc.TopicFilterType...)
		scratch = append(scratch, ' ')
		scratch = append(scratch, attrs...)
		field(scratch)
	}
	field([]byte("[]"))
	count(0)
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("deflate registration body: %w", err)
	}
	return out.Bytes(), nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (r *registrar) header() map[string]string {
	c := r.s.d.Config()
	return map[string]string{
		"brokerName":   c.BrokerName,
		"brokerAddr":   c.Addr,
		"clusterName":  c.ClusterName,
		"haServerAddr": c.HAServerAddr,
		"brokerId":     strconv.FormatInt(c.BrokerID, 10),
		"compressed":   strconv.FormatBool(c.CompressedRegister),
		"bodyCrc32":    "0", // 0 = not checked, as Apache's name server treats it
		// As a 5.x broker: a name server then takes the topics of a slave
		// registering while its master is away (the prime slave), so
		// consumers still find them.
		"enableActingMaster": "false",
	}
}

// unregisterAll tells every name server the broker is leaving, in
// parallel, each within 3 s (Apache's unregisterBroker time-out): a dead
// or hanging name server holds back neither the others nor the shutdown.
func (r *registrar) unregisterAll(ctx context.Context) {
	c := r.s.d.Config()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, addr := range c.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := remoting.NewRequest(remoting.UnregisterBroker, map[string]string{
				"brokerName":  c.BrokerName,
				"brokerAddr":  c.Addr,
				"clusterName": c.ClusterName,
				"brokerId":    strconv.FormatInt(c.BrokerID, 10),
			}, nil)
			if _, err := r.s.client.Invoke(ctx, addr, req); err != nil {
				r.s.log.Warn().Err(err).Str("namesrvAddr", addr).Msg("unregister broker failed")
			}
		}()
	}
	wg.Wait()
}
