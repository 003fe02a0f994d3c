package broker

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// RuntimeInfo is GET_BROKER_RUNTIME_INFO: Apache's KVTable of counters,
// with the keys mqadmin's brokerStatus and clusterList read; the put and get
// figures are runtimestats.go's. What rocketgo does not measure (thread
// pools, transient store) is reported as an idle Apache broker reports it.
func (b *Broker) RuntimeInfo() map[string]string {
	st := b.Store
	rs := b.stats.report(b.Config().IsSlave())
	earliest := int64(-1)
	for t, qs := range st.Topics() {
		for _, q := range qs {
			if ts, err := st.EarliestMessageTime(t, q); err == nil && (earliest < 0 || ts < earliest) {
				earliest = ts
			}
		}
	}
	pullQueued, pullCapacity := b.Pulls.Queue()
	_, cqRatio, _ := st.DiskUsedRatios()
	info := map[string]string{
		"brokerActive":                    strconv.FormatBool(!b.Config().IsSlave()), // Apache: the special services run (a master)
		"brokerVersionDesc":               remoting.VersionName(remoting.ServerVersion()),
		"brokerVersion":                   strconv.Itoa(int(remoting.ServerVersion())),
		"msgPutTotalYesterdayMorning":     strconv.FormatInt(rs.putYesterdayMorning, 10),
		"msgPutTotalTodayMorning":         strconv.FormatInt(rs.putTodayMorning, 10),
		"msgPutTotalTodayNow":             strconv.FormatInt(rs.putNow, 10),
		"msgGetTotalYesterdayMorning":     strconv.FormatInt(rs.getYesterdayMorning, 10),
		"msgGetTotalTodayMorning":         strconv.FormatInt(rs.getTodayMorning, 10),
		"msgGetTotalTodayNow":             strconv.FormatInt(rs.getNow, 10),
		"dispatchBehindBytes":             strconv.FormatInt(st.MaxPhyOffset()-st.DispatchedPhyOffset(), 10),
		"pageCacheLockTimeMills":          "0",
		"earliestMessageTimeStamp":        strconv.FormatInt(earliest, 10),
		"startAcceptSendRequestTimeStamp": "0",
		"timerReadBehind":                 "0",
		"timerOffsetBehind":               "0",
		"timerCongestNum":                 "0",
		"timerEnqueueTps":                 "0.0",
		"timerDequeueTps":                 "0.0",
		// Apache's remainTransientStoreBufferNumbs without a transient
		// store pool (rocketgo has none): Integer.MAX_VALUE.
		"remainTransientStoreBufferNumbs":          "2147483647",
		"remainHowManyDataToFlush":                 "0 B",
		"commitLogDiskRatio":                       strconv.FormatFloat(st.CommitLogDiskRatio(), 'f', -1, 64),
		"commitLogDiskRatio_" + st.CommitLogDir():  strconv.FormatFloat(st.CommitLogDiskRatio(), 'f', -1, 64),
		"consumeQueueDiskRatio":                    strconv.FormatFloat(cqRatio, 'f', -1, 64),
		"commitLogMaxOffset":                       strconv.FormatInt(st.MaxPhyOffset(), 10),
		"commitLogMinOffset":                       strconv.FormatInt(st.MinPhyOffset(), 10),
		"bootTimestamp":                            strconv.FormatInt(b.stats.started.UnixMilli(), 10),
		"runtime":                                  runtimeText(time.Since(b.stats.started)),
		"putTps":                                   rs.putTps,
		"getFoundTps":                              rs.getFoundTps,
		"getMissTps":                               rs.getMissTps,
		"getTransferredTps":                        rs.getTransferredTps,
		"getTransferedTps":                         rs.getTransferredTps, // 4.9 tools' spelling
		"getTotalTps":                              rs.getTotalTps,
		"sendThreadPoolQueueSize":                  "0",
		"sendThreadPoolQueueCapacity":              "10000",
		"pullThreadPoolQueueSize":                  strconv.Itoa(pullQueued),
		"pullThreadPoolQueueCapacity":              strconv.Itoa(pullCapacity),
		"litePullThreadPoolQueueSize":              "0",
		"queryThreadPoolQueueSize":                 "0",
		"sendThreadPoolQueueHeadWaitTimeMills":     "0",
		"pullThreadPoolQueueHeadWaitTimeMills":     "0",
		"queryThreadPoolQueueHeadWaitTimeMills":    "0",
		"litePullThreadPoolQueueHeadWaitTimeMills": "0",
		"EndTransactionQueueSize":                  "0",
		// Pools rocketgo does not have, as an idle Apache broker with
		// Apache's default capacities reports them (the dashboard's broker
		// status lists every key).
		"litePullThreadPoolQueueCapacity":       "100000",
		"queryThreadPoolQueueCapacity":          "20000",
		"ackThreadPoolQueueSize":                "0",
		"ackThreadPoolQueueCapacity":            "100000",
		"ackThreadPoolQueueHeadWaitTimeMills":   "0",
		"EndTransactionThreadPoolQueueCapacity": "100000",
	}
	if !b.Config().IsSlave() {
		_, inBytes, _, _ := b.Stats.Totals()
		b.stats.store.report(info, rs.putsAll, inBytes)
	} else {
		b.stats.store.report(info, 0, 0)
	}
	if total, free, err := st.CommitLogCapacity(); err == nil {
		info["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(total), humanBytes(free))
	}
	return info
}

// humanBytes is Apache's MixAll.humanReadableByteCount(bytes, false):
// "512 B", "1.5 KiB", "20.0 GiB".
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(1024))
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(1024, float64(exp)), "KMGTPE"[exp-1])
}

// runtimeText is Apache's "[ 0 days, 0 hours, 1 minutes, 5 seconds ]".
func runtimeText(d time.Duration) string {
	s := int64(d.Seconds())
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", s/86400, s%86400/3600, s%3600/60, s%60)
}
