// Package store keeps messages on disk in Apache RocketMQ's layout: an
// Apache store directory opens as-is and ours opens in Apache.
//
//	<storePathRootDir>/
//	  commitlog/<20-digit start offset>          mapped, mappedFileSizeCommitLog bytes each
//	  consumequeue/<topic>/<queueId>/<20 digits>  mapped, 20-byte entries
//	  index/<yyyyMMddHHmmssSSS>                    mapped hash index by KEYS/UNIQ_KEY
//	  checkpoint                                   4096 bytes of timestamps
//	  epochFileCheckpoint (+ .bak)                 controller mode: epoch -> start offset (epochfile.go)
//	  abort                                        exists while the store is open
//	  lock                                         fcntl range lock [0,1)
//
// Owns: CommitLog, ConsumeQueue, IndexFile, checkpoint, the epoch file; flush, the
// waiters — the offset waiter (wait.go: completions keyed by commit log
// offset, fulfilled by the flush and by replica acknowledgements) and the
// arrival waiter (arrival.go: long-polling readers parked on queue
// positions, woken by the dispatcher or their deadline) — dispatch,
// recovery, cleanup (retention and disk-full refusal), the next commit log
// file made ahead (allocate.go), replication's view of the commit log
// (replica.go: a master's ReadReplica and NotifyAppended, a slave's
// AppendReplica).
// Never: parses frames; knows clients or request codes; makes a caller wait
// on fsync unless it asked (Wait, WaitFlush).
//
// Invariants:
//   - CommitLog offsets and queue offsets are assigned under the append lock
//     (Store.mu), never reused.
//   - Bytes below a mapped file's write position are immutable until
//     recovery truncates them (only before Start).
//   - Mapped files are unmapped only by recovery, DeleteTopic (consume
//     queues, under the queue's write lock), cleanup (the oldest commit log
//     file once fully flushed and dispatched, never the last; consume queue
//     and index files wholly below the commit log min offset, never the
//     last) and Shutdown after the goroutines stopped. They leave the list
//     under its write lock; munmap, msync and unlink happen after it is
//     released (io_test.go): the append path and pulls take those locks.
//     Readers that copy hold the file (refs) while they copy.
//   - A slice into a mapped file outlives the list's lock only while the
//     file is held (mappedFile refs; GetMessageViews until its Release).
//     Cleanup takes a held file out of the list and unlinks it; the last
//     release hands it to the unmapper goroutine. Only Shutdown unmaps held files, so it runs after
//     the network servers (whose writes read the slices) have stopped.
//   - Index files are written by the dispatcher and read by QueryMessage
//     under indexService.mu; after an abnormal exit the files newer than
//     the checkpoint's index timestamp are deleted and rebuilt from their
//     begin offset (Apache only from the recovery start).
//   - ConsumeQueue entries are built only by the dispatcher (or Open), in
//     commit log order; MaxOffset counts dispatched entries. A new queue's
//     entries are kept in memory until the creator made its first file;
//     the thorough consume queue flush and Shutdown make the missing ones
//     (queuefiles.go).
//   - Consume queue files are mapped on demand and at most
//     maxMappedConsumeQueueFiles stay mapped; blocks of every mapped file
//     are allocated before a store into them (fallocate, or zeros written
//     ahead of a consume queue's writer), so a full disk is an error,
//     never a SIGBUS.
//   - A replica store (Config.Replica, BecomeReplica) grows only by
//     AppendReplica, at its commit log end or, empty, at a file boundary;
//     Put is refused. Its MaxPhyOffset may end inside a record (a frame
//     split it): the dispatcher stops at such a record (splitAt) and goes
//     on when the rest arrives; consume queue entries take the records'
//     queue offsets, so they equal the master's.
//   - Every path is built by storePath from safe names (paths.go).
//   - Light message queues (lmq.go, enableLmq and enableMultiDispatch):
//     an LMQ entry is written only by the dispatcher, at the offset the
//     record's INNER_MULTI_QUEUE_OFFSET holds, which the append assigned
//     under Store.mu and wrote into the record before sizing it; LMQ queues
//     (queue 0 of a %LMQ% name) are in Store.lmqs, never in Store.cqs.
//   - Resource errors (ENOMEM, EMFILE, ENFILE, ENOSPC) are never taken for
//     corrupt data (resource.go).
//
// Goroutines: dispatch, commit log flush (+ group commit), consume queue
// and index flush, cleanup, commit log prefault, trim (unmaps cold pages,
// trim.go), consume queue file creator and unmapper (queuefiles.go), the
// arrival waiter's (runs the parked readers' wakes);
// started by Start, stopped and awaited by Shutdown.
//
// Lock order: Store.mu (append) → commitLog file list; Store.mu →
// Store.cqMu (an LMQ's first sight makes its queue, lmq.go); dispatcher: commit
// log file list (read) → Store.cqMu (released) → consumeQueue.wmu →
// consumeQueue file list, or (its pending entries full) consumeQueue.cmu
// → consumeQueue.wmu → consumeQueue file list; consumeQueue.wmu →
// Store.createMu; creator and flusher: consumeQueue.cmu → consumeQueue.wmu
// → consumeQueue file list; unmapper: Store.cqMu (released), then one
// consumeQueue.wmu → consumeQueue file list at a time; DeleteTopic:
// Store.cqMu → consumeQueue.cmu → consumeQueue.wmu → consumeQueue file
// list; dispatcher → indexService.mu. Cleanup: commit
// log file list (alone), then consumeQueue.wmu → consumeQueue file list,
// then indexService.maint → indexService.mu. Trim: commit log file list
// (read, released before trimming), then Store.cqMu (read) → consume
// queue file list (read), then indexService.mu (read). Park: the arrival
// waiter's mu → Store.cqMu (read); the dispatcher takes the arrival
// waiter's mu holding nothing else. Nothing holds Store.cqMu or a
// consume queue lock while taking Store.mu.
package store
