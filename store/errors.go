package store

import "errors"

// Sentinel errors (wrapped with context where they are returned).
var (
	ErrClosed             = errors.New("store: closed")
	ErrNotStarted         = errors.New("store: not started")
	ErrMessageTooLarge    = errors.New("store: message too large")
	ErrPropertiesTooLarge = errors.New("store: properties too large")
	ErrTopicTooLong       = errors.New("store: topic too long")
	// ErrBadTopic: a topic outside ^[%|a-zA-Z0-9_-]+$, which cannot name a
	// consume queue directory (paths.go).
	ErrBadTopic = errors.New("store: topic name not allowed")
	// ErrBadQueueID: a negative queue id.
	ErrBadQueueID = errors.New("store: queue id not allowed")
	ErrBadBatch   = errors.New("store: bad batch")
	// ErrFlushTimeout: the commit log was not flushed within
	// syncFlushTimeout (the broker answers FLUSH_DISK_TIMEOUT, 10).
	ErrFlushTimeout = errors.New("store: flush timeout")
	// ErrReplicaTimeout: replicas did not acknowledge within their timeout
	// (FLUSH_SLAVE_TIMEOUT, 12).
	ErrReplicaTimeout = errors.New("store: replica timeout")
	// ErrReplicaNotAvailable: a wait for replicas with none to ask
	// (SLAVE_NOT_AVAILABLE, 11).
	ErrReplicaNotAvailable = errors.New("store: replica not available")
	// ErrTruncated: a record a send waited on was cut by a replica
	// truncation (this store lost the master role before the record was
	// durable as asked, and the new master does not hold it).
	ErrTruncated = errors.New("store: record cut by a replica truncation")
	ErrCorrupt   = errors.New("store: corrupt data")
	// ErrReplica: a slave's store refuses Put; its commit log grows only
	// by AppendReplica.
	ErrReplica = errors.New("store: replica refuses writes")
	// ErrReplicaOffset: bytes for AppendReplica that do not start at the
	// end of the commit log, or cross a file end.
	ErrReplicaOffset = errors.New("store: replica append not at the commit log end")
	ErrBadFileSize   = errors.New("store: mapped file size differs from config")
	ErrLocked        = errors.New("store: locked by another process")
	ErrNotFound      = errors.New("store: message not found")
	ErrNoQueue       = errors.New("store: consume queue not found")
	// ErrResource marks the kernel refusing memory, a mapping or a
	// descriptor (ENOMEM, EMFILE, ENFILE): a condition to wait out, never
	// corrupt data (resource.go).
	ErrResource = errors.New("store: resource exhausted")
	// ErrDiskFull refuses writes while disk usage is above
	// diskSpaceWarningLevelRatio (Apache's DISK_FULL running flag; the
	// broker answers SERVICE_NOT_AVAILABLE, 14); it also marks ENOSPC and
	// EDQUOT from the file system.
	ErrDiskFull = errors.New("store: disk full")
)
