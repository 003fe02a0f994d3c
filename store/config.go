package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FlushDiskType is Apache's flushDiskType.
type FlushDiskType int

// Flush disk types.
const (
	AsyncFlush FlushDiskType = iota
	SyncFlush
)

func (t FlushDiskType) String() string {
	switch t {
	case AsyncFlush:
		return "ASYNC_FLUSH"
	case SyncFlush:
		return "SYNC_FLUSH"
	}
	return "FlushDiskType(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText writes the Apache name.
func (t FlushDiskType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses ASYNC_FLUSH or SYNC_FLUSH (case-insensitive).
func (t *FlushDiskType) UnmarshalText(b []byte) error {
	switch strings.ToUpper(strings.TrimSpace(string(b))) {
	case "ASYNC_FLUSH":
		*t = AsyncFlush
	case "SYNC_FLUSH":
		*t = SyncFlush
	default:
		return fmt.Errorf("store: flushDiskType %q: want ASYNC_FLUSH or SYNC_FLUSH", b)
	}
	return nil
}

// Config mirrors Apache's MessageStoreConfig (the keys this store uses).
type Config struct {
	// StorePathRootDir is the store directory (default $HOME/store).
	StorePathRootDir string `key:"storePathRootDir"`
	// StorePathCommitLog overrides <root>/commitlog (single path only).
	StorePathCommitLog string `key:"storePathCommitLog"`
	// MappedFileSizeCommitLog is the size of each commit log file (1 GiB).
	MappedFileSizeCommitLog int64 `key:"mappedFileSizeCommitLog"`
	// MappedFileSizeConsumeQueue is the size of each consume queue file in
	// bytes (300000 entries × 20); rounded up to a multiple of 20.
	MappedFileSizeConsumeQueue int64 `key:"mappedFileSizeConsumeQueue"`
	// FlushDiskType: ASYNC_FLUSH or SYNC_FLUSH (the broker decides who waits).
	FlushDiskType FlushDiskType `key:"flushDiskType"`
	// FlushIntervalCommitLog is the async flush period in ms (500).
	FlushIntervalCommitLog int `key:"flushIntervalCommitLog"`
	// FlushCommitLogLeastPages: flush only with this many dirty 4 KiB pages (4).
	FlushCommitLogLeastPages int `key:"flushCommitLogLeastPages"`
	// FlushCommitLogThoroughInterval: flush everything at least this often, ms (10000).
	FlushCommitLogThoroughInterval int `key:"flushCommitLogThoroughInterval"`
	// FlushIntervalConsumeQueue is the consume queue flush period in ms
	// (1000); a pass that moves the checkpoint writes it.
	FlushIntervalConsumeQueue int `key:"flushIntervalConsumeQueue"`
	// FlushConsumeQueueLeastPages: a pass flushes a queue file with this many
	// dirty 4 KiB pages (2), or full.
	FlushConsumeQueueLeastPages int `key:"flushConsumeQueueLeastPages"`
	// FlushConsumeQueueThoroughInterval: flush every queue, entries kept in
	// memory written first, at least this often, ms (60000).
	FlushConsumeQueueThoroughInterval int `key:"flushConsumeQueueThoroughInterval"`
	// MaxMessageSize limits the body, in bytes (4 MiB).
	MaxMessageSize int `key:"maxMessageSize"`
	// SyncFlushTimeout bounds WaitFlush, in ms (5000).
	SyncFlushTimeout int64 `key:"syncFlushTimeout"`
	// CheckCRCOnRecover verifies body CRCs during recovery (true).
	CheckCRCOnRecover bool `key:"checkCRCOnRecover"`
	// MessageIndexEnable builds the index files (true).
	MessageIndexEnable bool `key:"messageIndexEnable"`
	// MaxHashSlotNum is the number of hash slots per index file (5000000).
	MaxHashSlotNum int `key:"maxHashSlotNum"`
	// MaxIndexNum is the number of entries per index file (20000000).
	MaxIndexNum int `key:"maxIndexNum"`
	// MaxMsgsNumBatch caps the records one index query returns (64).
	MaxMsgsNumBatch int `key:"maxMsgsNumBatch"`
	// DefaultQueryMaxNum is maxNum for queries by unique key (32).
	DefaultQueryMaxNum int `key:"defaultQueryMaxNum"`
	// FileReservedTime is how long commit log files are kept, in hours (72).
	FileReservedTime int `key:"fileReservedTime"`
	// DeleteWhen lists the local hours ("04", "03;04") at which expired
	// files are deleted.
	DeleteWhen string `key:"deleteWhen"`
	// DiskMaxUsedSpaceRatio: above this disk usage (percent, 10–95)
	// expired files are deleted at any hour (75).
	DiskMaxUsedSpaceRatio int `key:"diskMaxUsedSpaceRatio"`
	// DiskSpaceCleanForciblyRatio: above this usage (percent, 30–85) files
	// are deleted whatever their age (85).
	DiskSpaceCleanForciblyRatio int `key:"diskSpaceCleanForciblyRatio"`
	// DiskSpaceWarningLevelRatio: above this usage (percent, 35–90) writes
	// are refused until usage drops to the force-clean ratio (90).
	DiskSpaceWarningLevelRatio int `key:"diskSpaceWarningLevelRatio"`
	// CleanFileForciblyEnable allows deleting unexpired files under disk pressure (true).
	CleanFileForciblyEnable bool `key:"cleanFileForciblyEnable"`
	// CleanResourceInterval is the cleanup period in ms (10000).
	CleanResourceInterval int `key:"cleanResourceInterval"`
	// DeleteCommitLogFilesInterval is the pause between two deletions in ms (100).
	DeleteCommitLogFilesInterval int `key:"deleteCommitLogFilesInterval"`
	// DeleteFileBatchMax bounds the commit log files deleted per run (10).
	DeleteFileBatchMax int `key:"deleteFileBatchMax"`
	// MaxMappedConsumeQueueFiles (rocketgo's own key) bounds the consume
	// queue files kept mapped; idle ones are unmapped beyond it and read
	// with pread (16384; the kernel allows 65530 mappings per process by
	// default, vm.max_map_count).
	MaxMappedConsumeQueueFiles int `key:"maxMappedConsumeQueueFiles"`
	// MessageDelayLevel lists the delay levels; used to compute the tags
	// code (delivery time) of SCHEDULE_TOPIC_XXXX entries.
	MessageDelayLevel string `key:"messageDelayLevel"`
	// AccessMessageInMemoryMaxRatio (40) is the share of physical memory,
	// in percent, that Apache takes the newest part of the commit log to
	// fill in the page cache (DefaultMessageStore.estimateInMemByCommitOffset).
	// Records that near the end are read on an event loop without a
	// residency check (views.go); 0 checks all but the last 16 MiB.
	AccessMessageInMemoryMaxRatio int `key:"accessMessageInMemoryMaxRatio"`
	// EnableLmq (false): names starting with %LMQ% in a message's
	// INNER_MULTI_DISPATCH are light message queues (one queue, id 0); the
	// append gives the message its next offset in each (lmq.go).
	EnableLmq bool `key:"enableLmq"`
	// EnableMultiDispatch (false): the dispatcher writes the LMQ consume
	// queue entries the append recorded. Lite topics need both flags.
	EnableMultiDispatch bool `key:"enableMultiDispatch"`
	// MaxLmqConsumeQueueNum (20000) is the LMQ count past which the
	// broker refuses messages for new LMQs, if EnableLmqQuota.
	MaxLmqConsumeQueueNum int `key:"maxLmqConsumeQueueNum"`
	// EnableLmqQuota (false) turns that refusal on (the broker's send).
	EnableLmqQuota bool `key:"enableLmqQuota"`
	// Replica: the store belongs to a slave (brokerRole=SLAVE; the broker
	// sets it from its HA config, no key of its own). Its commit log grows
	// only by AppendReplica, Put is refused, the dispatcher waits for the
	// rest of a record a frame split, and recovery is strict about the
	// last record (replica.go).
	Replica bool
	// ConfirmGate: the broker runs in controller mode (no key of its own;
	// the broker sets it from enableControllerMode). From Open on, consume
	// queues are dispatched only up to the confirm offset the checkpoint
	// kept (Apache's confirmPhyOffset, which a controller-mode broker
	// starting as SLAVE dispatches up to) until the HA service moves it
	// or lifts the gate (confirm.go).
	ConfirmGate bool
}

// DefaultConfig returns Apache's defaults.
func DefaultConfig() Config {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return Config{
		StorePathRootDir:                  filepath.Join(home, "store"),
		MappedFileSizeCommitLog:           1073741824,
		MappedFileSizeConsumeQueue:        300000 * cqEntrySize,
		FlushDiskType:                     AsyncFlush,
		FlushIntervalCommitLog:            500,
		FlushCommitLogLeastPages:          4,
		FlushCommitLogThoroughInterval:    10000,
		FlushIntervalConsumeQueue:         1000,
		FlushConsumeQueueLeastPages:       2,
		FlushConsumeQueueThoroughInterval: 60000,
		MaxMessageSize:                    4194304,
		SyncFlushTimeout:                  5000,
		CheckCRCOnRecover:                 true,
		FileReservedTime:                  72,
		DeleteWhen:                        "04",
		DiskMaxUsedSpaceRatio:             75,
		DiskSpaceCleanForciblyRatio:       85,
		DiskSpaceWarningLevelRatio:        90,
		CleanFileForciblyEnable:           true,
		CleanResourceInterval:             10000,
		DeleteCommitLogFilesInterval:      100,
		DeleteFileBatchMax:                10,
		MessageIndexEnable:                true,
		MaxHashSlotNum:                    5000000,
		MaxIndexNum:                       5000000 * 4,
		MaxMsgsNumBatch:                   64,
		DefaultQueryMaxNum:                32,
		MaxMappedConsumeQueueFiles:        16384,
		MessageDelayLevel:                 "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
		AccessMessageInMemoryMaxRatio:     40,
		MaxLmqConsumeQueueNum:             20000,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.StorePathRootDir == "":
		return fmt.Errorf("store config: storePathRootDir empty")
	case c.MappedFileSizeCommitLog < 4096 || c.MappedFileSizeCommitLog > 1<<31-1:
		return fmt.Errorf("store config: mappedFileSizeCommitLog %d out of range", c.MappedFileSizeCommitLog)
	case c.MappedFileSizeConsumeQueue < cqEntrySize || c.MappedFileSizeConsumeQueue > 1<<31-1:
		return fmt.Errorf("store config: mappedFileSizeConsumeQueue %d out of range", c.MappedFileSizeConsumeQueue)
	case c.FlushDiskType != AsyncFlush && c.FlushDiskType != SyncFlush:
		return fmt.Errorf("store config: flushDiskType %v", c.FlushDiskType)
	case c.FlushIntervalCommitLog <= 0 || c.FlushIntervalConsumeQueue <= 0:
		return fmt.Errorf("store config: flush intervals must be positive")
	case c.MaxMessageSize <= 0:
		return fmt.Errorf("store config: maxMessageSize %d", c.MaxMessageSize)
	case c.SyncFlushTimeout <= 0:
		return fmt.Errorf("store config: syncFlushTimeout %d", c.SyncFlushTimeout)
	case c.MessageIndexEnable && (c.MaxHashSlotNum <= 0 || c.MaxIndexNum < 2 ||
		indexFileSize(c.MaxHashSlotNum, c.MaxIndexNum) > 1<<31-1):
		return fmt.Errorf("store config: maxHashSlotNum %d / maxIndexNum %d out of range", c.MaxHashSlotNum, c.MaxIndexNum)
	case c.FileReservedTime < 0 || c.CleanResourceInterval <= 0 || c.DeleteCommitLogFilesInterval < 0 || c.DeleteFileBatchMax <= 0:
		return fmt.Errorf("store config: fileReservedTime, cleanResourceInterval, deleteCommitLogFilesInterval, deleteFileBatchMax out of range")
	case c.MaxMsgsNumBatch <= 0 || c.DefaultQueryMaxNum <= 0:
		return fmt.Errorf("store config: maxMsgsNumBatch and defaultQueryMaxNum must be positive")
	case c.MaxMappedConsumeQueueFiles < 16:
		return fmt.Errorf("store config: maxMappedConsumeQueueFiles %d below 16", c.MaxMappedConsumeQueueFiles)
	case c.AccessMessageInMemoryMaxRatio < 0 || c.AccessMessageInMemoryMaxRatio > 100:
		return fmt.Errorf("store config: accessMessageInMemoryMaxRatio %d not in 0..100", c.AccessMessageInMemoryMaxRatio)
	}
	if _, err := parseDelayLevels(c.MessageDelayLevel); err != nil {
		return err
	}
	return nil
}

// cqFileSize is MappedFileSizeConsumeQueue rounded up to whole entries.
func (c *Config) cqFileSize() int64 {
	return (c.MappedFileSizeConsumeQueue + cqEntrySize - 1) / cqEntrySize * cqEntrySize
}

func (c *Config) commitLogDir() string {
	if c.StorePathCommitLog != "" {
		return c.StorePathCommitLog
	}
	return mustStorePath(c.StorePathRootDir, dirCommitLog)
}

// parseDelayLevels parses "1s 5s 1m 2h 1d" into ms per level (index 0 = level 1).
func parseDelayLevels(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Fields(s) {
		if len(f) < 2 {
			return nil, fmt.Errorf("store config: messageDelayLevel %q: bad level %q", s, f)
		}
		unit := map[byte]int64{'s': 1000, 'm': 60000, 'h': 3600000, 'd': 86400000}[f[len(f)-1]]
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if unit == 0 || err != nil || n < 0 {
			return nil, fmt.Errorf("store config: messageDelayLevel %q: bad level %q", s, f)
		}
		out = append(out, n*unit)
	}
	return out, nil
}
