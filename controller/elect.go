package controller

import "slices"

// electPolicy is Apache's DefaultElectPolicy over the heartbeat table:
// alive replicas only; the old master if it is still alive (and no other
// broker was designated); else the designated broker if alive; else the best
// by (epoch desc, maxOffset desc, electionPriority asc). The SyncStateSet is
// tried first; all replicas only when unclean elections are enabled (all is
// nil otherwise).
func electPolicy(hb *Heartbeats, cluster, brokerName string, syncSet, all []int64, oldMaster, prefer *int64) *int64 {
	if syncSet != nil {
		if m := tryElect(hb, cluster, brokerName, syncSet, oldMaster, prefer); m != nil {
			return m
		}
	}
	if all != nil {
		return tryElect(hb, cluster, brokerName, all, oldMaster, prefer)
	}
	return nil
}

func tryElect(hb *Heartbeats, cluster, brokerName string, ids []int64, oldMaster, prefer *int64) *int64 {
	var alive []liveInfo
	for _, id := range ids {
		if !hb.active(cluster, brokerName, id) {
			continue
		}
		if li, ok := hb.info(cluster, brokerName, id); ok {
			alive = append(alive, li)
		}
	}
	if len(alive) == 0 {
		return nil
	}
	has := func(id int64) bool {
		return slices.ContainsFunc(alive, func(li liveInfo) bool { return li.id == id })
	}
	if oldMaster != nil && has(*oldMaster) && (prefer == nil || *prefer == *oldMaster) {
		m := *oldMaster
		return &m
	}
	if prefer != nil {
		if has(*prefer) {
			m := *prefer
			return &m
		}
		return nil
	}
	// Apache sorts into a TreeSet with this comparator; the int casts are
	// Java's (the offset difference truncated to int, the priority
	// difference wrapping), so ties and their overflow quirks come out the
	// same. Equal elements keep the first inserted (ascending id).
	best := alive[0]
	for _, li := range alive[1:] {
		if compareLive(li, best) < 0 {
			best = li
		}
	}
	m := best.id
	return &m
}

func compareLive(a, b liveInfo) int32 {
	if a.epoch == b.epoch {
		if a.maxOffset == b.maxOffset {
			return a.priority - b.priority
		}
		return int32(b.maxOffset - a.maxOffset)
	}
	return b.epoch - a.epoch
}
