package role

// The broker side of classic master/slave replication, as
// Apache's BrokerController wires its HAService and SlaveSynchronize:
//
//   - ha.Service copies the commit log (package ha). The broker starts it
//     (StartHA) after the store and shuts it down (ShutdownHA) before the
//     store; a slave learns its
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
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Replicator is what the role uses of ha.Service; tests give a fake
// (Deps.NewHA).
type Replicator interface {
	Start() error
	Shutdown(ctx context.Context) error
	Addr() string
	UpdateMasterAddress(addr string)
	Status() ha.Status
}

// NewHA is ha.New as a Replicator.
func NewHA(cfg ha.Config, listen string, st *store.Store, log zerolog.Logger) (Replicator, error) {
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
	svc Replicator // nil until StartHA
	// masterAddr is the master's remoting address a slave syncs metadata
	// from (the registration answer's masterAddr); "" = unknown.
	masterAddr atomic.Pointer[string]
	// haAddr is the master HA address last passed to the service.
	haAddr  atomic.Pointer[string]
	syncNow chan struct{} // the master changed: sync now
	// lastSync is when the last metadata sync completed (unix ms), 0 = never.
	lastSync atomic.Int64
}

// HAStatus is the replication state (runtime info, tests).
func (s *Service) HAStatus() ha.Status {
	if s.repl.svc == nil {
		return ha.Status{Role: s.d.Config().HA.BrokerRole}
	}
	return s.repl.svc.Status()
}

// MasterAddr is the remoting address of a slave's master as last learned
// ("" if unknown, or on a master).
func (s *Service) MasterAddr() string {
	if p := s.repl.masterAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// StartHA makes and starts the replication service (after the store).
func (s *Service) StartHA() error {
	cfg := s.d.Config()
	if s.ctrl != nil { // controller mode: AutoSwitch HA (autoswitch.go)
		return s.startAutoSwitch(cfg)
	}
	svc, err := s.d.NewHA(cfg.HA, cfg.HAListen, s.d.Store, s.root)
	if err != nil {
		return fmt.Errorf("broker: ha: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("broker: start ha: %w", err)
	}
	s.repl.svc = svc
	s.log.Info().Stringer("brokerRole", cfg.HA.BrokerRole).Int64("brokerId", cfg.BrokerID).
		Str("haServerAddr", cfg.HAServerAddr).Str("haListen", svc.Addr()).Msg("replication started")
	return nil
}

// ShutdownHA stops the replication service (before the store, so that
// the store's Shutdown answers every SYNC_MASTER wait left).
func (s *Service) ShutdownHA(ctx context.Context) error {
	if s.repl.svc == nil {
		return nil
	}
	if err := s.repl.svc.Shutdown(ctx); err != nil {
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
func (s *Service) learnMaster(masterAddr, haAddr string) {
	cfg := s.d.Config()
	if !cfg.IsSlave() || s.ctrl != nil { // in controller mode the controller names the master
		return
	}
	if masterAddr != "" && masterAddr != cfg.Addr {
		if old := s.repl.masterAddr.Swap(&masterAddr); old == nil || *old != masterAddr {
			s.log.Info().Str("masterAddr", masterAddr).Msg("master address learned")
			s.syncSoon()
		}
	}
	if haAddr != "" && !fixedMaster(cfg) && s.repl.svc != nil {
		if old := s.repl.haAddr.Swap(&haAddr); old == nil || *old != haAddr {
			s.log.Info().Str("haServerAddr", haAddr).Msg("master ha address learned")
			s.repl.svc.UpdateMasterAddress(haAddr)
		}
	}
}

// syncSoon wakes the slave's metadata sync (the master changed); never
// blocks.
func (s *Service) syncSoon() {
	select {
	case s.repl.syncNow <- struct{}{}:
	default:
	}
}

// slaveSyncLoop copies the master's metadata, and at once when the
// master's address changes. A classic slave copies everything every
// slaveSynchronizePeriod. A controller-mode slave keeps Apache's
// ReplicasManager schedule: it looks every 3 s, copies the timer's
// progress each time and everything else once 10 s have passed since the
// last whole copy, so a topic created on the master reaches it within
// about 13 s, before a failover can make it master without it.
func (s *Service) slaveSyncLoop(quit <-chan struct{}) {
	tick, whole := s.slaveSyncPeriods()
	t := time.NewTimer(tick)
	defer t.Stop()
	var last time.Time
	for {
		force := false
		select {
		case <-quit:
			return
		case <-t.C:
		case <-s.repl.syncNow:
			force = true
		}
		if addr := s.MasterAddr(); addr != "" {
			all := force || time.Since(last) >= whole
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			go func() { // a Shutdown must not wait for a hanging master
				select {
				case <-quit:
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := s.syncFromMaster(ctx, addr, all); err != nil {
				s.sampled.Warn().Err(err).Str("masterAddr", addr).Msg("slave metadata sync failed")
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
		tick, whole = s.slaveSyncPeriods()
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
func (s *Service) slaveSyncPeriods() (tick, whole time.Duration) {
	if s.ctrl != nil {
		return controllerSyncTick, controllerSyncWhole
	}
	p := s.d.Config().SlaveSyncPeriod
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
func (s *Service) SyncFromMaster(ctx context.Context, addr string) error {
	return s.syncFromMaster(ctx, addr, true)
}

// syncFromMaster is SyncFromMaster; without all, only the timer's parts.
func (s *Service) syncFromMaster(ctx context.Context, addr string, all bool) error {
	var errs []error
	body := func(take func([]byte) error) func(*remoting.Command) error {
		return func(resp *remoting.Command) error { return take(resp.Body) }
	}
	var parts []syncPart
	if all {
		parts = []syncPart{
			{"topics", remoting.GetAllTopicConfig, body(s.takeTopics)},
			{"consumer offsets", remoting.GetAllConsumerOffset, body(s.takeOffsets)},
			{"delay offsets", remoting.GetAllDelayOffset, body(s.d.Delays.Take)},
			{"subscription groups", remoting.GetAllSubscriptionGroupConfig, body(s.takeGroups)},
		}
	}
	if s.d.Config().TimerWheelEnable { // as Apache's slave asks only then
		parts = append(parts, syncPart{"timer checkpoint", remoting.GetTimerCheckPoint, s.d.Timers.TakeCheckpoint},
			syncPart{"timer metrics", remoting.GetTimerMetrics, body(s.takeTimerMetrics)})
	}
	for _, part := range parts {
		resp, err := s.client.Invoke(ctx, addr, remoting.NewRequest(part.code, nil, nil))
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
		s.repl.lastSync.Store(time.Now().UnixMilli())
	}
	return errors.Join(errs...)
}

// takeTopics replaces the topic table with the master's when its data
// version differs (Apache's syncTopicConfig). Topics the broker adds
// itself (system topics) stay.
func (s *Service) takeTopics(body []byte) error {
	return s.d.Topics.ReplaceWith(config.QuoteBareKeys(body), s.sampled)
}

// takeGroups replaces the subscription group table with the master's when
// its data version differs (Apache's syncSubscriptionGroupConfig).
func (s *Service) takeGroups(body []byte) error {
	return s.d.Groups.ReplaceWith(config.QuoteBareKeys(body), s.sampled)
}

// takeOffsets merges the master's consumer offsets over the slave's, a
// topic@group at a time (Apache's putAll in syncConsumerOffset): a group
// the master does not know keeps what the slave has.
func (s *Service) takeOffsets(body []byte) error {
	return s.d.Offsets.MergeWith(config.QuoteBareKeys(body), s.sampled)
}

// TimerCheckpoint answers GET_TIMER_CHECK_POINT: the timer's checkpoint in
// Apache's encoding, and the lowOffset to send along; SYSTEM_ERROR with
// Apache's remark when the timer is off (timerWheelEnable=false: Apache
// has no checkpoint then).
func (s *Service) TimerCheckpoint() (body []byte, lowOffset int64, err error) {
	if !s.d.Config().TimerWheelEnable {
		return nil, 0, remoting.Refuse(remoting.SystemError, nil, "The checkpoint is null")
	}
	body, lowOffset = s.d.Timers.Checkpoint()
	return body, lowOffset, nil
}

// AllConsumerOffsets is GET_ALL_CONSUMER_OFFSET's body: Apache's
// ConsumerOffsetManager.encode, the offset table with a data version (a
// 5.x slave reads the version; rocketgo keeps none, so it is the time of
// the answer).
func (s *Service) AllConsumerOffsets() []byte {
	return withDataVersion(s.d.Offsets.Marshal())
}

// AllDelayOffsets is GET_ALL_DELAY_OFFSET's body: Apache's
// ScheduleMessageService.encode, the delay levels' offsets with a data
// version.
func (s *Service) AllDelayOffsets() []byte {
	return withDataVersion(s.d.Delays.Marshal())
}

// AllMessageRequestModes is GET_ALL_MESSAGE_REQUEST_MODE's body, which a
// 5.x slave asks its master for: Apache's MessageRequestModeManager.encode.
func (s *Service) AllMessageRequestModes() []byte {
	out, err := s.d.Modes.Marshal()
	if err != nil { // maps of strings and ints: cannot fail
		return []byte(`{"messageRequestModeMap":{}}`)
	}
	return out
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
func (s *Service) HARuntimeInfo() ([]byte, error) {
	cfg := s.d.Config()
	st := s.HAStatus()
	var info haRuntimeInfo
	if cfg.IsSlave() {
		info.HAClientRuntimeInfo = haClientRuntimeInfo{Activated: st.Connected, LastReadTimestamp: st.LastReadUnixMill,
			MasterAddr: st.MasterHAAddr, MaxOffset: s.d.Store.MaxPhyOffset()}
	} else {
		info.Master = true
		info.MasterCommitLogMaxOffset = s.d.Store.MaxPhyOffset()
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
