package broker

// The broker side of classic master/slave replication, as
// Apache's BrokerController wires its HAService and SlaveSynchronize:
//
//   - ha.Service copies the commit log (package ha). The broker starts it
//     after the store and shuts it down before the store; a slave learns its
//     master's HA address (haServerAddr) from every registration answer,
//     unless haMasterAddress fixes it.
//   - A slave copies the master's metadata over Remoting (Apache's
//     SlaveSynchronize; when, see slaveSyncLoop): topics
//     (GET_ALL_TOPIC_CONFIG 21, replaced when the data version differs),
//     consumer offsets (GET_ALL_CONSUMER_OFFSET 43, merged), delay offsets
//     (GET_ALL_DELAY_OFFSET 45, replaced) and subscription groups
//     (GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201, replaced when the data version
//     differs) and the timer's progress (GET_TIMER_CHECK_POINT 60,
//     broker/timer), from the master's remoting address (masterAddr of the
//     registration answer).
//   - A slave refuses writes and runs none of the master's special services
//     (delay and timer delivery, transaction checks): Apache's
//     changeSpecialServiceStatus(brokerId == 0).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// replicator is what the broker uses of ha.Service; tests give a fake.
type replicator interface {
	Start() error
	Shutdown(ctx context.Context) error
	Addr() string
	UpdateMasterAddress(addr string)
	Status() ha.Status
}

// newHAService is ha.New as a replicator.
func newHAService(cfg ha.Config, listen string, st *store.Store, log zerolog.Logger) (replicator, error) {
	s, err := ha.New(cfg, listen, st, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// haAddressMinLength is Apache's HA_ADDRESS_MIN_LENGTH: a haMasterAddress
// at least this long fixes the slave's master; the name servers' answers
// are then ignored.
const haAddressMinLength = 6

// replication is the broker's replication state.
type replication struct {
	svc replicator // nil until Start
	// masterAddr is the master's remoting address a slave syncs metadata
	// from (the registration answer's masterAddr); "" = unknown.
	masterAddr atomic.Pointer[string]
	// haAddr is the master HA address last passed to the service.
	haAddr  atomic.Pointer[string]
	syncNow chan struct{} // the master changed: sync now
	// lastSync is when the last metadata sync completed (unix ms), 0 = never.
	lastSync atomic.Int64
}

// ErrSlave: a slave does not take the write asked for.
var ErrSlave = send.ErrSlave

// RejectsSends reports a broker that refuses sends and send backs before
// reading them (Apache 5.x SendMessageProcessor.rejectRequest: a slave).
func (b *Broker) RejectsSends() bool { return b.Config().IsSlave() }

// RejectsPulls reports a broker that refuses pulls before reading them
// (Apache 5.x PullMessageProcessor.rejectRequest: a slave without
// slaveReadEnable).
func (b *Broker) RejectsPulls() bool {
	c := b.Config()
	return c.IsSlave() && !c.SlaveReadEnable
}

// IsSlave reports brokerRole SLAVE.
func (b *Broker) IsSlave() bool { return b.Config().IsSlave() }

// HAStatus is the replication state (runtime info, tests).
func (b *Broker) HAStatus() ha.Status {
	if b.repl.svc == nil {
		return ha.Status{Role: b.Config().HA.BrokerRole}
	}
	return b.repl.svc.Status()
}

// MasterAddr is the remoting address of a slave's master as last learned
// ("" if unknown, or on a master).
func (b *Broker) MasterAddr() string {
	if p := b.repl.masterAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// startHA makes and starts the replication service (after the store).
func (b *Broker) startHA() error {
	cfg := b.Config()
	listen := net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.HA.HAListenPort))
	if b.ctrl != nil { // controller mode: AutoSwitch HA (autoswitch.go)
		return b.startAutoSwitch(listen)
	}
	hc := cfg.HA
	hc.AuthSecret = []byte(cfg.HAAuthSecret)
	svc, err := b.newHA(hc, listen, b.Store, b.root)
	if err != nil {
		return fmt.Errorf("broker: ha: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("broker: start ha: %w", err)
	}
	b.repl.svc = svc
	b.log.Info().Stringer("brokerRole", cfg.HA.BrokerRole).Int64("brokerId", cfg.BrokerID).
		Str("haServerAddr", cfg.HAServerAddr()).Str("haListen", svc.Addr()).Msg("replication started")
	return nil
}

// shutdownHA stops the replication service (before the store).
func (b *Broker) shutdownHA(ctx context.Context) error {
	if b.repl.svc == nil {
		return nil
	}
	if err := b.repl.svc.Shutdown(ctx); err != nil {
		return fmt.Errorf("ha: %w", err)
	}
	return nil
}

// fixedMaster reports a haMasterAddress that fixes a slave's master.
func fixedMaster(c *Config) bool { return len(c.HA.HAMasterAddress) >= haAddressMinLength }

// learnMaster takes a slave's registration answer: the master's remoting
// address (metadata sync) and HA address. Empty values (a name server
// that knows no master for the broker name) change nothing: a name server
// restarted after the master left must not make the slave forget a master
// the others still know; a dead master is noticed by the HA connection and
// the failing syncs. Called concurrently, one call per name server answer.
func (b *Broker) learnMaster(masterAddr, haAddr string) {
	cfg := b.Config()
	if !cfg.IsSlave() || b.ctrl != nil { // in controller mode the controller names the master
		return
	}
	if masterAddr != "" && masterAddr != cfg.Addr() {
		if old := b.repl.masterAddr.Swap(&masterAddr); old == nil || *old != masterAddr {
			b.log.Info().Str("masterAddr", masterAddr).Msg("master address learned")
			select {
			case b.repl.syncNow <- struct{}{}:
			default:
			}
		}
	}
	if haAddr != "" && !fixedMaster(cfg) && b.repl.svc != nil {
		if old := b.repl.haAddr.Swap(&haAddr); old == nil || *old != haAddr {
			b.log.Info().Str("haServerAddr", haAddr).Msg("master ha address learned")
			b.repl.svc.UpdateMasterAddress(haAddr)
		}
	}
}

// slaveSyncLoop copies the master's metadata, and at once when the
// master's address changes. A classic slave copies everything every
// slaveSynchronizePeriod. A controller-mode slave keeps Apache's
// ReplicasManager schedule: it looks every 3 s, copies the timer's
// progress each time and everything else once 10 s have passed since the
// last whole copy, so a topic created on the master reaches it within
// about 13 s, before a failover can make it master without it.
func (b *Broker) slaveSyncLoop(quit <-chan struct{}) {
	tick, whole := b.slaveSyncPeriods()
	t := time.NewTimer(tick)
	defer t.Stop()
	var last time.Time
	for {
		force := false
		select {
		case <-quit:
			return
		case <-t.C:
		case <-b.repl.syncNow:
			force = true
		}
		if addr := b.MasterAddr(); addr != "" {
			all := force || time.Since(last) >= whole
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			go func() { // a Shutdown must not wait for a hanging master
				select {
				case <-quit:
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := b.syncFromMaster(ctx, addr, all); err != nil {
				b.sampled.Warn().Err(err).Str("masterAddr", addr).Msg("slave metadata sync failed")
			} else if all {
				last = time.Now()
			}
			cancel()
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		tick, whole = b.slaveSyncPeriods()
		t.Reset(tick)
	}
}

// Apache's controller-mode slave schedule (ReplicasManager.handleSlaveSynchronize).
const (
	controllerSyncTick  = 3 * time.Second
	controllerSyncWhole = 10 * time.Second
)

// slaveSyncPeriods is how often the slave looks and how long it goes
// between whole copies.
func (b *Broker) slaveSyncPeriods() (tick, whole time.Duration) {
	if b.ctrl != nil {
		return controllerSyncTick, controllerSyncWhole
	}
	p := time.Duration(b.Config().SlaveSynchronizePeriod) * time.Millisecond
	return p, p
}

// syncPart is one request of the metadata sync and what takes its answer.
type syncPart struct {
	name string
	code int32
	take func(*remoting.Command) error
}

// SyncFromMaster copies topics, consumer offsets, delay offsets,
// subscription groups, the timer checkpoint and the timer's per-topic counts
// from the master at addr (Apache's syncAll and syncTimerCheckPoint). Each
// part is independent: one failing does not stop the others.
func (b *Broker) SyncFromMaster(ctx context.Context, addr string) error {
	return b.syncFromMaster(ctx, addr, true)
}

// syncFromMaster is SyncFromMaster; without all, only the timer's parts.
func (b *Broker) syncFromMaster(ctx context.Context, addr string, all bool) error {
	var errs []error
	body := func(take func([]byte) error) func(*remoting.Command) error {
		return func(resp *remoting.Command) error { return take(resp.Body) }
	}
	var parts []syncPart
	if all {
		parts = []syncPart{
			{"topics", remoting.GetAllTopicConfig, body(b.takeTopics)},
			{"consumer offsets", remoting.GetAllConsumerOffset, body(b.takeOffsets)},
			{"delay offsets", remoting.GetAllDelayOffset, body(b.delays.Take)},
			{"subscription groups", remoting.GetAllSubscriptionGroupConfig, body(b.takeGroups)},
		}
	}
	if b.Config().TimerWheelEnable { // as Apache's slave asks only then
		parts = append(parts, syncPart{"timer checkpoint", remoting.GetTimerCheckPoint, b.timers.TakeCheckpoint},
			syncPart{"timer metrics", remoting.GetTimerMetrics, body(b.takeTimerMetrics)})
	}
	for _, part := range parts {
		resp, err := b.registrar.client.Invoke(ctx, addr, remoting.NewRequest(part.code, nil, nil))
		if err == nil && resp.Code != remoting.Success {
			err = fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
		}
		if err == nil {
			err = part.take(resp)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", part.name, err))
		}
	}
	if len(errs) == 0 && all {
		b.repl.lastSync.Store(time.Now().UnixMilli())
	}
	return errors.Join(errs...)
}

// takeTopics replaces the topic table with the master's when its data
// version differs (Apache's syncTopicConfig). Topics the broker adds
// itself (system topics) stay.
func (b *Broker) takeTopics(body []byte) error {
	return b.Topics.ReplaceWith(config.QuoteBareKeys(body), b.sampled)
}

// takeGroups replaces the subscription group table with the master's when
// its data version differs (Apache's syncSubscriptionGroupConfig).
func (b *Broker) takeGroups(body []byte) error {
	return b.Groups.ReplaceWith(config.QuoteBareKeys(body), b.sampled)
}

// takeOffsets merges the master's consumer offsets over the slave's, a
// topic@group at a time (Apache's putAll in syncConsumerOffset): a group
// the master does not know keeps what the slave has.
func (b *Broker) takeOffsets(body []byte) error {
	return b.Offsets.MergeWith(config.QuoteBareKeys(body), b.sampled)
}

// TimerCheckpoint answers GET_TIMER_CHECK_POINT: the timer's checkpoint in
// Apache's encoding, and the lowOffset to send along; SYSTEM_ERROR with
// Apache's remark when the timer is off (timerWheelEnable=false: Apache
// has no checkpoint then).
func (b *Broker) TimerCheckpoint() (body []byte, lowOffset int64, err error) {
	if !b.Config().TimerWheelEnable {
		return nil, 0, remoting.Refuse(remoting.SystemError, nil, "The checkpoint is null")
	}
	body, lowOffset = b.timers.Checkpoint()
	return body, lowOffset, nil
}

// AllConsumerOffsets is GET_ALL_CONSUMER_OFFSET's body: Apache's
// ConsumerOffsetManager.encode, the offset table with a data version (a
// 5.x slave reads the version; rocketgo keeps none, so it is the time of
// the answer).
func (b *Broker) AllConsumerOffsets() []byte {
	return withDataVersion(b.Offsets.Marshal())
}

// AllDelayOffsets is GET_ALL_DELAY_OFFSET's body: Apache's
// ScheduleMessageService.encode, the delay levels' offsets with a data
// version.
func (b *Broker) AllDelayOffsets() []byte {
	return withDataVersion(b.delays.Marshal())
}

// withDataVersion adds "dataVersion" to a JSON object ending in '}'.
func withDataVersion(obj []byte) []byte {
	v, _ := json.Marshal(remoting.DataVersion{Timestamp: time.Now().UnixMilli()}) // a struct of ints: cannot fail
	obj = append(obj[:len(obj)-1], `,"dataVersion":`...)
	obj = append(obj, v...)
	return append(obj, '}')
}

// haRuntimeInfo is Apache 5.x's HARuntimeInfo (GET_BROKER_HA_STATUS 907,
// mqadmin haStatus), fields in fastjson's order.
type haRuntimeInfo struct {
	HAClientRuntimeInfo      haClientRuntimeInfo       `json:"haClientRuntimeInfo"`
	HAConnectionInfo         []haConnectionRuntimeInfo `json:"haConnectionInfo"`
	InSyncSlaveNums          int                       `json:"inSyncSlaveNums"`
	Master                   bool                      `json:"master"`
	MasterCommitLogMaxOffset int64                     `json:"masterCommitLogMaxOffset"`
}

type haConnectionRuntimeInfo struct {
	Addr                    string `json:"addr"`
	Diff                    int64  `json:"diff"`
	InSync                  bool   `json:"inSync"`
	SlaveAckOffset          int64  `json:"slaveAckOffset"`
	TransferFromWhere       int64  `json:"transferFromWhere"`
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
}

type haClientRuntimeInfo struct {
	Activated               bool   `json:"activated"`
	LastReadTimestamp       int64  `json:"lastReadTimestamp"`
	LastWriteTimestamp      int64  `json:"lastWriteTimestamp"`
	MasterAddr              string `json:"masterAddr"`
	MasterFlushOffset       int64  `json:"masterFlushOffset"`
	MaxOffset               int64  `json:"maxOffset"`
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
}

// HARuntimeInfo is GET_BROKER_HA_STATUS's body: a master's slaves (in sync
// = less than haSlaveFallbehindMax behind, Apache 5.x's haMaxGapNotInSync
// check), or a slave's connection to its master.
func (b *Broker) HARuntimeInfo() ([]byte, error) {
	cfg := b.Config()
	st := b.HAStatus()
	var info haRuntimeInfo
	if cfg.IsSlave() {
		info.HAClientRuntimeInfo = haClientRuntimeInfo{Activated: st.Connected, LastReadTimestamp: st.LastReadUnixMill,
			MasterAddr: st.MasterHAAddr, MaxOffset: b.Store.MaxPhyOffset()}
	} else {
		info.Master = true
		info.MasterCommitLogMaxOffset = b.Store.MaxPhyOffset()
		info.HAConnectionInfo = make([]haConnectionRuntimeInfo, 0, len(st.Slaves))
		for _, sl := range st.Slaves {
			diff := info.MasterCommitLogMaxOffset - sl.AckOffset
			c := haConnectionRuntimeInfo{Addr: sl.Addr, Diff: diff, InSync: diff < cfg.HA.FallbehindMax(),
				SlaveAckOffset: sl.AckOffset}
			if c.InSync {
				info.InSyncSlaveNums++
			}
			info.HAConnectionInfo = append(info.HAConnectionInfo, c)
		}
	}
	return json.Marshal(info)
}
