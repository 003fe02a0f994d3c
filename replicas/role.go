package replicas

// Role changes as Apache's ReplicasManager.changeBrokerRole decides them:
// a controller answer (register, elect, the replica info poll, or a
// NOTIFY_BROKER_ROLE_CHANGED push) matters only when it names a master
// with an epoch above the one this broker last acted on. Becoming master
// appends (epoch, commit log max offset) to the epoch file, first dropping
// entries of that epoch or later; brokers then serve as brokerId 0. Becoming
// slave keeps the controller-assigned id and follows the named master.

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Role is what the broker must become.
type Role struct {
	Master            bool
	BrokerID          int64 // 0 for the master, else the controller-assigned id
	ControllerID      int64 // this broker's id at the controller
	MasterID          int64
	MasterAddr        string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	SyncStateSet      []int64
}

// Roles tracks the master epoch a broker acted on and keeps its epoch file.
type Roles struct {
	mu        sync.Mutex
	self      int64
	epoch     int32
	epochs    *store.EpochCache
	maxOffset func() int64
	log       zerolog.Logger
}

// NewRoles returns the tracker of the broker with controller id self;
// maxOffset is its commit log's max offset.
func NewRoles(self int64, epochs *store.EpochCache, maxOffset func() int64, log zerolog.Logger) *Roles {
	return &Roles{self: self, epochs: epochs, maxOffset: maxOffset, log: log}
}

// Epoch returns the master epoch last acted on (0: none yet).
func (r *Roles) Epoch() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.epoch
}

// Reset sets the epoch last acted on back to epoch (a value Epoch
// returned before an Apply) when the broker failed to take the role that
// Apply returned: the next answer naming that master epoch is applied
// again instead of being dropped as old.
func (r *Roles) Reset(epoch int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if epoch < r.epoch {
		r.epoch = epoch
	}
}

// Apply returns the role st asks for; false when st changes nothing (no
// master, or an epoch not above the current one).
func (r *Roles) Apply(st ReplicaState) (Role, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.MasterID == nil || st.MasterEpoch <= r.epoch {
		return Role{}, false, nil
	}
	role := Role{ControllerID: r.self, MasterID: *st.MasterID, MasterAddr: st.MasterAddr,
		MasterEpoch: st.MasterEpoch, SyncStateSetEpoch: st.SyncStateSetEpoch,
		SyncStateSet: append([]int64(nil), st.SyncStateSet...)}
	if *st.MasterID != r.self {
		role.BrokerID = r.self
		r.epoch = st.MasterEpoch
		r.log.Info().Int64("masterBrokerId", role.MasterID).Str("masterAddress", role.MasterAddr).
			Int32("masterEpoch", role.MasterEpoch).Msg("change to slave")
		return role, true, nil
	}
	role.Master = true
	// The HA service records the term again at the commit log end it
	// finds once replication has stopped (autoswitch.BecomeMaster).
	start := r.maxOffset()
	if err := r.epochs.BeginTerm(st.MasterEpoch, start); err != nil {
		return Role{}, false, fmt.Errorf("change to master epoch %d: %w", st.MasterEpoch, err)
	}
	r.epoch = st.MasterEpoch
	r.log.Info().Int32("masterEpoch", st.MasterEpoch).Int64("startOffset", start).Msg("change to master")
	return role, true, nil
}

// ErrNotConfirmed is a NOTIFY_BROKER_ROLE_CHANGED push the controller
// leader's own answer does not bear out.
var ErrNotConfirmed = errors.New("role change not confirmed by the controller")

// Confirm compares a NOTIFY_BROKER_ROLE_CHANGED push with the controller
// leader's replica info (1004), asked right after it: the push is only a
// hint, what the broker acts on is ctl. A push naming a master epoch the
// controller has not reached, or another master at the same epoch, is
// refused (it is forged, or from a controller that lost its leadership);
// an older one is harmless, ctl being newer. Addresses are not compared:
// the broker takes ctl's.
func Confirm(pushed, ctl ReplicaState) error {
	switch {
	case pushed.MasterEpoch > ctl.MasterEpoch:
		return fmt.Errorf("%w: master epoch %d is ahead of the controller's %d", ErrNotConfirmed,
			pushed.MasterEpoch, ctl.MasterEpoch)
	case pushed.MasterEpoch == ctl.MasterEpoch && !sameMaster(pushed, ctl):
		return fmt.Errorf("%w: master %s at epoch %d, the controller names %s", ErrNotConfirmed,
			masterString(pushed), pushed.MasterEpoch, masterString(ctl))
	}
	return nil
}

func sameMaster(a, b ReplicaState) bool {
	if a.MasterID == nil || b.MasterID == nil {
		return a.MasterID == nil && b.MasterID == nil
	}
	return *a.MasterID == *b.MasterID
}

func masterString(s ReplicaState) string {
	if s.MasterID == nil {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", *s.MasterID, s.MasterAddr)
}

// DecodeRoleChanged reads NOTIFY_BROKER_ROLE_CHANGED (1008): the header's
// masterBrokerId, masterAddress, masterEpoch, syncStateSetEpoch and the
// SyncStateSet body.
func DecodeRoleChanged(req *remoting.Command) (ReplicaState, error) {
	if req.Code != remoting.NotifyBrokerRoleChanged {
		return ReplicaState{}, fmt.Errorf("code %d is not NOTIFY_BROKER_ROLE_CHANGED", req.Code)
	}
	return decodeState(req)
}
