package role

// Controller mode (enableControllerMode=true): Apache 5.3.3's
// ReplicasManager wired into the broker, with package replicas doing the
// talking.
//
//   - At start the broker is a slave with no master: writes refused, no
//     special services, not registered with the name servers (Apache starts
//     fenced: its store refuses writes until the controller answered).
//   - One goroutine (run) registers with the controllers (identity files,
//     1012 → 1013 → 1003, retried until it succeeds), sends a heartbeat,
//     asks for an election when the set has no master (1002), takes the role
//     answered, then polls the replica info (1004) every
//     syncBrokerMetadataPeriod and looks the leader up again every
//     syncControllerMetadataPeriod. Another goroutine sends the heartbeats
//     (904) to every controller every brokerHeartbeatInterval.
//   - NOTIFY_BROKER_ROLE_CHANGED (1008) is taken only from the hosts of
//     controllerAddr (RoleChangeAllowed, on the event loop: the IPs are
//     resolved at start, at every leader lookup and after a push from an
//     unknown address), then reaches
//     RoleChanged on a broker worker (processor's controller-mode
//     handlers). The
//     push is a hint: the broker asks the controller leader (1004) and
//     applies its answer, never the push; a push the answer does not bear
//     out is refused and logged (replicas.Confirm). So a forged epoch is
//     never remembered as the last one acted on.
//   - Every controller answer goes through apply, under one mutex: role
//     changes are serialised, and replicas.Roles drops answers whose master
//     epoch is not above the last one acted on. Only the controller's own
//     answers (register, elect, 1004) reach apply.
//   - A role taken (takeRole, roleswitch.go) registers with every name
//     server at once, with the whole table and a new data version, so that
//     clients route to the new master.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
	"github.com/rocketgo/rocketgo/store"
)

// EpochFileName is Apache's storePathEpochFile under the store root.
const EpochFileName = "epochFileCheckpoint"

// registerRetry bounds the wait between registration attempts (Apache
// retries every 5 s).
const registerRetry = 5 * time.Second

// ErrNotControllerMode answers a controller-mode request to a broker
// without enableControllerMode.
var ErrNotControllerMode = errors.New("role: not in controller mode")

// controlled is the controller-mode state; nil outside controller mode.
type controlled struct {
	s       *Service
	client  *replicas.Client
	files   replicas.IdentityFiles
	epochs  *store.EpochCache
	log     zerolog.Logger
	sampled zerolog.Logger

	ips   *replicas.ControllerIPs // who may push 1008
	auto  autoReplicator          // the AutoSwitch HA service, set in Start
	id    atomic.Int64            // the controller-assigned id; -1 until registered
	roles atomic.Pointer[replicas.Roles]

	mu        sync.Mutex     // serialises role changes; guards what follows
	role      *replicas.Role // the role in force; nil before the first
	syncState []int64        // the SyncStateSet last seen (master)
	syncEpoch int32          // and its epoch
	term      chan struct{}  // closed to end the role's services
	termWG    sync.WaitGroup // the role's services
	mastered  bool           // the broker was master since it started (Deps.RunMaster's first)
}

// newControlled opens the epoch file; the controller client shares the
// registrar's remoting client.
func newControlled(s *Service) (*controlled, error) {
	root := s.d.StoreRoot
	epochs, err := store.OpenEpochFile(filepath.Join(root, EpochFileName))
	if err != nil {
		return nil, fmt.Errorf("broker: epoch file: %w", err)
	}
	cfg := s.d.Config().Controller
	log := s.root.With().Str("component", "replicas").Logger()
	c := &controlled{s: s, epochs: epochs, files: replicas.IdentityFiles{Root: root}, log: log,
		sampled: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute}),
		client:  replicas.NewClient(s.client, cfg.Addr, max(cfg.SendHeartbeatTimeout, 3*time.Second))}
	c.ips = replicas.NewControllerIPs(c.client.Addrs())
	c.id.Store(-1)
	return c, nil
}

// run is the controller-mode lifecycle, until quit.
func (c *controlled) run(quit <-chan struct{}) {
	ctx, cancel := untilQuit(quit)
	defer cancel()
	c.resolve(ctx)
	cfg := c.s.d.Config()
	var st replicas.ReplicaState
	for {
		id, rs, err := replicas.Register(ctx, c.client, c.files,
			replicas.Broker{Cluster: cfg.ClusterName, BrokerName: cfg.BrokerName, Addr: cfg.Addr})
		if err == nil {
			c.id.Store(id)
			c.roles.Store(replicas.NewRoles(id, c.epochs, c.s.d.Store.MaxPhyOffset, c.log))
			c.log.Info().Int64("controllerBrokerId", id).Msg("registered with the controller")
			st = rs
			break
		}
		c.sampled.Warn().Err(err).Str("controllerAddr", cfg.Controller.Addr).Msg("controller registration failed; retrying")
		if !sleep(quit, min(registerRetry, cfg.Controller.SyncBrokerMetadataPeriod)) {
			return
		}
	}
	c.s.d.Go(func() { c.heartbeatLoop(ctx, quit) })
	c.heartbeat(ctx)
	c.settle(ctx, st, "register")

	poll := time.NewTicker(cfg.Controller.SyncBrokerMetadataPeriod)
	defer poll.Stop()
	leader := time.NewTicker(cfg.Controller.SyncControllerMetadataPeriod)
	defer leader.Stop()
	resolved := time.Now()
	for {
		select {
		case <-quit:
			return
		case <-leader.C:
			if _, err := c.client.Leader(ctx); err != nil {
				c.sampled.Warn().Err(err).Msg("controller leader lookup failed")
			}
			c.resolve(ctx)
			resolved = time.Now()
		case <-c.ips.Misses():
			// A push from an unknown address: perhaps a controller whose
			// name moved. A stranger's pushes cause a lookup a second at most.
			if time.Since(resolved) >= time.Second {
				c.resolve(ctx)
				resolved = time.Now()
			}
		case <-poll.C:
			c.poll(ctx)
		}
	}
}

// untilQuit is a context cancelled when quit is closed (or cancel called).
func untilQuit(quit <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// resolve looks the controllers' host names up for RoleChangeAllowed.
func (c *controlled) resolve(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.client.Timeout())
	defer cancel()
	if err := c.ips.Resolve(ctx, net.DefaultResolver); err != nil {
		c.sampled.Warn().Err(err).Msg("controller host lookup failed; its last addresses are kept")
	}
}

// settle takes a controller answer; when it names no master, the broker
// asks to be elected (Apache's brokerElect) and takes that answer.
func (c *controlled) settle(ctx context.Context, st replicas.ReplicaState, source string) {
	if st.MasterID == nil {
		cfg := c.s.d.Config()
		e, err := c.client.Elect(ctx, cfg.ClusterName, cfg.BrokerName, c.id.Load())
		if err != nil {
			c.sampled.Warn().Err(err).Msg("no master in the broker set; election refused")
			return
		}
		st, source = e, "elect"
	}
	if err := c.apply(st, source); err != nil {
		c.log.Error().Err(err).Str("source", source).Msg("role change failed")
	}
}

// poll is one replica info request (1004). A controller that lost the
// broker's metadata (CONTROLLER_BROKER_METADATA_NOT_EXIST) gets the
// registration again, as Apache's poll does.
func (c *controlled) poll(ctx context.Context) {
	cfg := c.s.d.Config()
	st, err := c.client.ReplicaInfo(ctx, cfg.BrokerName)
	var ref *replicas.RefusedError
	if errors.As(err, &ref) && ref.Code == remoting.ControllerMetadataNotExist {
		st, err = c.client.Register(ctx, cfg.ClusterName, cfg.BrokerName, c.id.Load(), cfg.Addr)
	}
	if err != nil {
		c.sampled.Warn().Err(err).Msg("replica info poll failed")
		return
	}
	c.settle(ctx, st, "poll")
}

// heartbeatLoop sends a heartbeat every brokerHeartbeatInterval.
func (c *controlled) heartbeatLoop(ctx context.Context, quit <-chan struct{}) {
	t := time.NewTicker(c.s.d.Config().Controller.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			c.heartbeat(ctx)
		}
	}
}

// heartbeat sends BROKER_HEARTBEAT (904) to every controller: the last
// epoch, the commit log's max offset and the confirm offset (the max
// offset).
func (c *controlled) heartbeat(ctx context.Context) {
	cfg := c.s.d.Config()
	maxOff := c.s.d.Store.MaxPhyOffset()
	err := c.client.SendHeartbeat(ctx, replicas.Heartbeat{Cluster: cfg.ClusterName, BrokerName: cfg.BrokerName,
		BrokerAddr: cfg.Addr, BrokerID: c.id.Load(), Epoch: c.epochs.LastEpoch(), MaxOffset: maxOff,
		ConfirmOffset: c.confirmOffset(c.s.d.Store), TimeoutMillis: cfg.Controller.HeartbeatTimeoutMillis,
		ElectionPriority: cfg.Controller.ElectionPriority})
	if err != nil {
		c.sampled.Warn().Err(err).Msg("controller heartbeat failed")
	}
}

// apply acts on one controller answer: a role change when its master
// epoch is new, else the SyncStateSet of a master.
func (c *controlled) apply(st replicas.ReplicaState, source string) error {
	roles := c.roles.Load()
	if roles == nil {
		c.log.Info().Str("source", source).Msg("controller answer before registration ignored")
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := roles.Epoch()
	role, changed, err := roles.Apply(st)
	if err != nil {
		return err
	}
	if !changed {
		if c.role != nil && c.role.Master && st.MasterID != nil && *st.MasterID == c.id.Load() &&
			st.MasterEpoch == c.role.MasterEpoch && st.SyncStateSetEpoch > c.syncEpoch {
			c.syncState, c.syncEpoch = slices.Clone(st.SyncStateSet), st.SyncStateSetEpoch
			if c.auto != nil {
				c.auto.SyncStateSetChanged(st.SyncStateSet, st.SyncStateSetEpoch)
			}
			c.log.Info().Ints64("syncStateSet", st.SyncStateSet).Int32("syncStateSetEpoch", st.SyncStateSetEpoch).
				Msg("SyncStateSet changed")
		}
		return nil
	}
	c.log.Info().Str("source", source).Bool("master", role.Master).Int64("brokerId", role.BrokerID).
		Int64("masterBrokerId", role.MasterID).Str("masterAddress", role.MasterAddr).
		Int32("masterEpoch", role.MasterEpoch).Msg("role change")
	if err := c.takeRole(role); err != nil {
		roles.Reset(prev) // the next poll or push tries again
		return fmt.Errorf("take role (master %v, epoch %d): %w", role.Master, role.MasterEpoch, err)
	}
	if role.Master {
		c.syncState, c.syncEpoch = slices.Clone(role.SyncStateSet), role.SyncStateSetEpoch
	}
	return nil
}

// confirmTries and confirmWait bound the wait for the controller leader
// to answer the epoch it just pushed: its state machine may apply the
// election a moment after the push left.
const (
	confirmTries = 4
	confirmWait  = 250 * time.Millisecond
)

// RoleChanged is NOTIFY_BROKER_ROLE_CHANGED (1008), on a broker worker:
// the controller's push after an election. The broker asks the
// controller leader for the replica info and applies that answer; the
// push is refused (replicas.ErrNotConfirmed) when the answer does not
// bear it out. Outside controller mode, or before registration, it is
// ignored, as Apache's broker without a ReplicasManager does.
func (s *Service) RoleChanged(pushed replicas.ReplicaState) error {
	if s.ctrl == nil {
		return nil
	}
	return s.ctrl.confirm(pushed)
}

func (c *controlled) confirm(pushed replicas.ReplicaState) error {
	if c.roles.Load() == nil {
		c.log.Info().Msg("role change push before registration ignored")
		return nil
	}
	ctx, cancel := untilQuit(c.s.d.Quit)
	defer cancel()
	name := c.s.d.Config().BrokerName
	var st replicas.ReplicaState
	for try := 1; ; try++ {
		var err error
		if st, err = c.client.ReplicaInfo(ctx, name); err != nil {
			return fmt.Errorf("%w: replica info: %w", replicas.ErrNotConfirmed, err)
		}
		if pushed.MasterEpoch <= st.MasterEpoch || try == confirmTries {
			break
		}
		if !sleepCtx(ctx, confirmWait) {
			return ctx.Err()
		}
	}
	if err := c.apply(st, "notify"); err != nil {
		return err
	}
	if err := replicas.Confirm(pushed, st); err != nil {
		c.sampled.Warn().Err(err).Int32("pushedMasterEpoch", pushed.MasterEpoch).
			Str("pushedMasterAddress", pushed.MasterAddr).Int32("controllerMasterEpoch", st.MasterEpoch).
			Msg("NOTIFY_BROKER_ROLE_CHANGED refused: the controller leader does not confirm it")
		return err
	}
	return nil
}

// epochEntry and epochEntryCache are Apache's EpochEntry and
// EpochEntryCache, fields in fastjson's (alphabetical) order.
type epochEntry struct {
	EndOffset   int64 `json:"endOffset"`
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
}

type epochEntryCache struct {
	BrokerID    int64        `json:"brokerId"`
	BrokerName  string       `json:"brokerName"`
	ClusterName string       `json:"clusterName"`
	EpochList   []epochEntry `json:"epochList"`
	MaxOffset   int64        `json:"maxOffset"`
}

// EpochCacheBody is GET_BROKER_EPOCH_CACHE's body (mqadmin getBrokerEpoch):
// the broker's id in force (0 on the master), its epoch entries (the last
// one open, endOffset Long.MAX_VALUE) and the commit log's max offset.
func (s *Service) EpochCacheBody() ([]byte, error) {
	if s.ctrl == nil {
		return nil, ErrNotControllerMode
	}
	cfg := s.d.Config()
	all := s.ctrl.epochs.All()
	out := epochEntryCache{BrokerID: cfg.BrokerID, BrokerName: cfg.BrokerName, ClusterName: cfg.ClusterName,
		EpochList: make([]epochEntry, len(all)), MaxOffset: s.d.Store.MaxPhyOffset()}
	for i, e := range all {
		out.EpochList[i] = epochEntry{EndOffset: e.EndOffset, Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return json.Marshal(out)
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sleep waits d; false when quit came first.
func sleep(quit <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-quit:
		return false
	case <-t.C:
		return true
	}
}
