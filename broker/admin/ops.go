package admin

// Operators' switches of Apache 5.3.3's AdminBrokerProcessor, each
// answered as 5.3.3 answers it (TestReference compares them): the
// cold-data flow-control group table (2001-2003) and the commit log's
// read-ahead advice (2004). What Apache does with the cold-data
// table (throttling the pulls of groups that read cold data) it does only
// with coldDataFlowControlEnable, off by default; rocketgo keeps the table
// and has no such throttle, so the table changes nothing here either.

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// BrokerConfig's cgColdReadThreshold and globalColdReadThreshold defaults
// (bytes), which GET_COLD_DATA_FLOW_CTR_INFO prints.
const (
	coldReadThresholdGroup  = 3 * 1024 * 1024
	coldReadThresholdGlobal = 100 * 1024 * 1024
)

// maxColdDataGroups bounds the table (Apache has no bound): past it a new
// group is skipped with a log line, as an entry Apache cannot parse is.
const maxColdDataGroups = 100_000

// coldData is ColdDataCgCtrService's configured table: group → threshold.
type coldData struct {
	mu     sync.Mutex
	config map[string]int64
}

// UpdateColdDataFlowCtr is UPDATE_COLD_DATA_FLOW_CTR_CONFIG: a properties
// body of group=threshold; an entry whose threshold is not a number is
// logged and skipped, as Apache does, and the answer is SUCCESS.
func (s *Service) UpdateColdDataFlowCtr(body []byte, log zerolog.Logger) error {
	if len(body) == 0 {
		return nil
	}
	pairs, err := config.ReadProperties(bytes.NewReader(body))
	if err != nil {
		return remoting.Refuse(remoting.SystemError, err, "string2Properties error")
	}
	s.coldCtr.mu.Lock()
	defer s.coldCtr.mu.Unlock()
	if s.coldCtr.config == nil {
		s.coldCtr.config = map[string]int64{}
	}
	for _, kv := range pairs {
		n, err := strconv.ParseInt(kv[1], 10, 64)
		if err != nil {
			log.Error().Str("key", kv[0]).Str("value", kv[1]).Msg("updateColdDataFlowCtrGroupConfig: not a threshold, skipped")
			continue
		}
		if _, ok := s.coldCtr.config[kv[0]]; !ok && len(s.coldCtr.config) >= maxColdDataGroups {
			log.Warn().Str("group", kv[0]).Int("max", maxColdDataGroups).Msg("updateColdDataFlowCtrGroupConfig: table full, skipped")
			continue
		}
		s.coldCtr.config[kv[0]] = n
	}
	return nil
}

// RemoveColdDataFlowCtr is REMOVE_COLD_DATA_FLOW_CTR_CONFIG: the body is a
// group name.
func (s *Service) RemoveColdDataFlowCtr(body []byte) {
	s.coldCtr.mu.Lock()
	delete(s.coldCtr.config, string(body))
	s.coldCtr.mu.Unlock()
}

// ColdDataFlowCtrInfo is GET_COLD_DATA_FLOW_CTR_INFO's body, Apache's JSON:
// no runtime entries (no group is throttled), the configured table, the
// thresholds and the global accumulator.
func (s *Service) ColdDataFlowCtrInfo() []byte {
	s.coldCtr.mu.Lock()
	groups := make([]string, 0, len(s.coldCtr.config))
	for g := range s.coldCtr.config {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	out := []byte(`{"runtimeTable":{},"configTable":{`)
	for i, g := range groups {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, g)
		out = append(out, ':')
		out = strconv.AppendInt(out, s.coldCtr.config[g], 10)
	}
	s.coldCtr.mu.Unlock()
	return fmt.Appendf(out, `},"cgColdReadThreshold":%d,"globalColdReadThreshold":%d,"globalAcc":0}`,
		coldReadThresholdGroup, coldReadThresholdGlobal)
}

// Apache's LibC.MADV_NORMAL and MADV_RANDOM, the two READ_AHEAD_MODE values.
const (
	readAheadNormal = 0
	readAheadRandom = 1
)

// SetCommitLogReadMode is SET_COMMITLOG_READ_MODE: READ_AHEAD_MODE 0
// (MADV_NORMAL, read-ahead on) or 1 (MADV_RANDOM, off) advised over every
// mapped commit log file (Apache's scanFileAndSetReadMode); the remark is
// Apache's. Files mapped later get the kernel's default, as Apache's do.
func (s *Service) SetCommitLogReadMode(fields map[string]string) (string, error) {
	if fields == nil {
		return "", remoting.Refuse(remoting.SystemError, errBadReadMode, "set commitlog readahead mode param error")
	}
	mode, err := strconv.Atoi(fields["READ_AHEAD_MODE"])
	if err != nil {
		return "", remoting.Refuse(remoting.SystemError, errBadReadMode, "set commitlog readahead mode failed")
	}
	if mode != readAheadNormal && mode != readAheadRandom {
		return "", remoting.Refuse(remoting.InvalidParameter, errBadReadMode, "set commitlog readahead mode param value error")
	}
	s.d.Store.SetCommitLogReadAhead(mode == readAheadNormal)
	return "set commitlog readahead mode success, mode: " + strconv.Itoa(mode), nil
}

var errBadReadMode = fmt.Errorf("broker: bad READ_AHEAD_MODE")
