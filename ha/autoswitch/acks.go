package autoswitch

// How many replicas a SYNC_MASTER send waits for, as Apache 5.3.3's
// CommitLog decides it in controller mode:
//
//   - Before the append: a SyncStateSet smaller than minInSyncReplicas
//     refuses the send (IN_SYNC_REPLICAS_NOT_ENOUGH; nothing is stored).
//   - The acks needed, the master included, are allAckInSyncStateSet's
//     "every member" or else inSyncReplicas. One (the default) or zero
//     needs nobody: the send is answered once stored. Every member of a
//     set of one is the master alone.
//   - Otherwise the send waits until that many replicas hold it (slaves
//     counted by their acknowledged offset) or slaveTimeout passes
//     (FLUSH_SLAVE_TIMEOUT). enableAutoInSyncReplicas plays no part here:
//     Apache reads it only for slave-acting-master.

import (
	"errors"
	"slices"
)

// ErrInSyncReplicasNotEnough refuses a SYNC_MASTER send while the
// SyncStateSet is smaller than minInSyncReplicas.
var ErrInSyncReplicasNotEnough = errors.New("in-sync replicas not enough")

// allAcks is Apache's MixAll.ALL_ACK_IN_SYNC_STATE_SET: every member.
const allAcks = -1

// needAcks is the number of replicas (master included) a send waits for,
// or allAcks.
func (c *Config) needAcks() int {
	if c.AllAckInSyncStateSet {
		return allAcks
	}
	return c.InSyncReplicas
}

// SendNeedsReplicas is the decision for one SYNC_MASTER send, made before
// it is appended: an error refuses it; false answers it once stored; true
// waits for store.Replicated to pass its end. Cheap: one atomic load.
func (s *Service) SendNeedsReplicas() (bool, error) {
	n := int(s.inSync.Load())
	if n < s.cfg.MinInSyncReplicas {
		s.sampled.Warn().Int("syncStateSetSize", n).Int("minInSyncReplicas", s.cfg.MinInSyncReplicas).
			Msg("send refused: in-sync replicas not enough")
		return false, ErrInSyncReplicasNotEnough
	}
	switch need := s.cfg.needAcks(); {
	case need == allAcks:
		return n > 1, nil
	case need == 0 || need == 1:
		return false, nil
	}
	return true, nil
}

// replicated is the offset every send waiting for replicas may be answered
// up to, from the slaves' acknowledged offsets (by slave id) and the set:
// with allAcks the least of the other members' acks (the master alone: its
// end); with n > 1 the (n-1)th best ack; with any other value below
// allAcks, the best ack (Apache compares push2SlaveMaxOffset then).
func replicated(need int, maxOff, self int64, set []int64, acks map[int64]int64) int64 {
	switch {
	case need == allAcks:
		reached := maxOff
		for _, id := range set {
			if id != self {
				reached = min(reached, acks[id])
			}
		}
		return reached
	case need == 0 || need == 1:
		return maxOff
	}
	best := make([]int64, 0, len(acks))
	for _, a := range acks {
		best = append(best, a)
	}
	slices.Sort(best)
	slices.Reverse(best)
	k := 1
	if need > 1 {
		k = need - 1
	}
	if k > len(best) {
		return 0
	}
	return best[k-1]
}
