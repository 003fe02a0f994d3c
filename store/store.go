package store

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/message"
)

// ScheduleTopic is the delay-level staging topic whose consume queue tags
// slot holds the delivery time.
const ScheduleTopic = "SCHEDULE_TOPIC_XXXX"

// PutMessage is a message to append. Body and Properties are copied into
// the commit log; the caller keeps ownership.
type PutMessage struct {
	Topic                     string
	QueueID                   int32
	Flag                      int32
	Body                      []byte
	Properties                string
	SysFlag                   int32 // IPv6 host bits are set by the store
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
}

// PutResult reports where a message was stored.
type PutResult struct {
	PhysicalOffset int64
	QueueOffset    int64
	WroteBytes     int32
	StoreTimestamp int64
}

// queueKey identifies a topic/queue in the append lock's offset table.
type queueKey struct {
	topic   string
	queueID int32
}

// Store is Apache's DefaultMessageStore: commit log, consume queues,
// checkpoint, flush and dispatch.
type Store struct {
	cfg         Config
	log         zerolog.Logger
	sampled     zerolog.Logger // for what outside input can repeat: a burst, then quiet
	delayLevels []int64
	cqFileSize  int64
	cqRoot      string
	lockFile    *os.File
	ops         fileOps // system calls that can run out of resources; tests inject failures
	bootID      string  // this boot's, written to the abort file (abort.go)

	cl   commitLog
	ckpt *checkpoint
	idx  *indexService // nil unless MessageIndexEnable

	// mu is the append lock.
	mu           sync.Mutex
	queueOffsets map[queueKey]int64 // next queue offset per queue
	werr         error              // sticky write error
	stopped      bool               // Puts refused
	replica      bool               // a slave's: Puts refused, AppendReplica only (replica.go)
	stage        []byte             // records bound for writeAt (prefault.go)
	noPopulate   atomic.Bool        // MADV_POPULATE_WRITE unsupported (prefault.go)

	cqMu sync.RWMutex
	cqs  map[string]map[int32]*consumeQueue
	// lmqs holds queue 0 of every %LMQ% name, flat: an inner map per LMQ
	// would cost 200 bytes of the 512 one may take (lmq.go). Guarded by
	// cqMu; lmqNum is len(lmqs), readable without it.
	lmqs   map[string]*consumeQueue
	lmqNum atomic.Int64
	// lmqList is ForEachLMQ's copy of lmqs, kept for the next pass while
	// lmqListMu is free: at 100,000 LMQs one is 800 KB, and every metrics
	// scrape takes one. A pass that finds it in use makes its own.
	lmqListMu sync.Mutex
	lmqList   []*consumeQueue
	// lmqKeys: the LMQ queues the message being appended got offsets in
	// (append lock, lmq.go).
	lmqKeys []queueKey
	// cqDeleting: topics DeleteTopic is deleting the files of, closed when
	// done; the dispatcher makes no queue of theirs until then. Guarded by
	// cqMu.
	cqDeleting map[string]chan struct{}

	// Consume queue files (queuefiles.go): mapped ones and their limit,
	// bytes of entries waiting for a first file, queues waiting for the
	// creator.
	cqMapped   atomic.Int64
	cqMapLimit atomic.Int64
	pendBytes  atomic.Int64
	tailBytes  atomic.Int64 // buffers of the entries cold queues keep in memory (keepLocked)
	createMu   sync.Mutex
	createList []*consumeQueue // guarded by createMu
	createCh   chan struct{}
	unmapCh    chan struct{}

	// dispatch state: written only by the dispatcher (or Open before Start).
	reput           atomic.Int64 // commit log offset dispatched up to
	lastDispatchTs  atomic.Int64 // store time of the newest dispatched record
	dispatchStalled atomic.Bool  // dispatcher found an undecodable record
	// replicaDispatch: a slave's dispatcher waits at a record a frame
	// split (replica.go); splitAt is where it waits, -1 when it does not.
	replicaDispatch atomic.Bool
	splitAt         atomic.Int64
	// entries counts the consume queue entries written (mayMap measures
	// how fast a queue fills by it); round is the dispatcher's current
	// round, named by entries + 1 at its start: a queue's touched is the
	// round that last wrote it (the unmapper's idleness). Dispatcher only.
	round      uint64
	entries    uint64
	touched    []*consumeQueue
	onDispatch func(topic string, queueID int32, maxOffset int64)
	// dispatchMu is held by whoever dispatches (the dispatcher's rounds)
	// and by TruncateReplica, which must not run beside one.
	dispatchMu sync.Mutex
	// cutMu: the flusher and the prefaulter, which touch commit log
	// mappings without a hold, read-lock it; a replica's truncation
	// (confirm.go), which unmaps files, write-locks it.
	cutMu sync.RWMutex
	// The confirm offset gate (confirm.go): while confirmGate is set the
	// dispatcher stops at confirm.
	confirmGate atomic.Bool
	confirm     atomic.Int64

	dispatchCh chan struct{}
	flushCh    chan struct{}
	prefaultCh chan struct{}

	// waits answers Wait (wait.go); the flush goroutine fulfils Flushed.
	waits *offsetWaiter
	// appended wakes HA writers sleeping until the commit log grows
	// (replica.go).
	appended appendNotifier
	// arrivals parks long-polling readers until their queues grow
	// (arrival.go); the dispatcher wakes them.
	arrivals    arrivals
	flushFailed atomic.Bool // the first flush error was reported to waits

	// diskFull refuses puts (ErrDiskFull); set and cleared by checkSpace
	// (space.go), which the space goroutine, cleanup and Open call.
	diskFull       atomic.Bool
	spaceCh        chan struct{}
	lastSpaceCheck atomic.Int64     // unix ns
	checkEvery     atomic.Int64     // appended bytes between two readings
	usedRatios     [3]atomic.Uint64 // float64 bits: commit log, consume queue, index partitions at the last reading
	sinceCheck     int64            // appended since the last reading; append lock
	// A commit log file that could not be made for lack of a resource is
	// tried again only after rollRetryAt (append lock).
	rollErr     error
	rollRetryAt time.Time
	// alloc: the next commit log file, made ahead (allocate.go).
	alloc   allocator
	allocCh chan struct{}
	// reapList: commit log files whose last hold went, for the unmapper.
	reapMu   sync.Mutex
	reapList []*mappedFile // guarded by reapMu
	// hotTail: records within this many bytes of the end of the commit
	// log are read without a residency check (memory.go).
	hotTail int64
	// coldDistance: a pull reading further than this behind the end
	// suggests the slave (GetResult.SuggestPullingFromSlave): Apache's
	// physical memory × accessMessageInMemoryMaxRatio / 100, no floor.
	coldDistance int64
	// now is time.Now; tests replace it before Start.
	now func() time.Time

	started atomic.Bool
	closing atomic.Bool
	quit    chan struct{}

	manualDeletes atomic.Int32 // cleanup rounds left that delete whatever the hour (cleanup.go)
	wg            sync.WaitGroup
	shutOnce      sync.Once
	shutErr       error
}

// Open loads (and if needed recovers) the store under cfg.StorePathRootDir,
// rebuilds consume queue entries missing for records in the commit log, and
// marks the store open (abort file). Call Start to run flush and dispatch.
func Open(cfg Config, log zerolog.Logger) (*Store, error) { return openWith(cfg, log, hostOps()) }

// openWith is Open with the system calls tests may replace.
func openWith(cfg Config, log zerolog.Logger, ops fileOps) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	levels, _ := parseDelayLevels(cfg.MessageDelayLevel) // validated above
	s := &Store{
		cfg: cfg,
		log: log.With().Str("component", "store").Logger(),
		sampled: log.With().Str("component", "store").Logger().
			Sample(&zerolog.BurstSampler{Burst: 5, Period: 10 * time.Second}),
		delayLevels:  levels,
		cqFileSize:   cfg.cqFileSize(),
		hotTail:      hotTailFor(cfg.AccessMessageInMemoryMaxRatio),
		coldDistance: physicalMemory() / 100 * int64(cfg.AccessMessageInMemoryMaxRatio),
		cqRoot:       mustStorePath(cfg.StorePathRootDir, dirConsumeQueue),
		bootID:       readBootID(),
		queueOffsets: make(map[queueKey]int64),
		cqs:          make(map[string]map[int32]*consumeQueue),
		lmqs:         make(map[string]*consumeQueue),
		cqDeleting:   make(map[string]chan struct{}),
		dispatchCh:   make(chan struct{}, 1),
		flushCh:      make(chan struct{}, 1),
		prefaultCh:   make(chan struct{}, 1),
		allocCh:      make(chan struct{}, 1),
		alloc:        allocator{busy: -1, taken: -1},
		createCh:     make(chan struct{}, 1),
		unmapCh:      make(chan struct{}, 1),
		spaceCh:      make(chan struct{}, 1),
		quit:         make(chan struct{}),
		now:          time.Now,
		ops:          ops,
		waits:        newOffsetWaiter(),
		replica:      cfg.Replica,
	}
	s.replicaDispatch.Store(cfg.Replica)
	s.confirmGate.Store(cfg.ConfirmGate)
	s.splitAt.Store(-1)
	s.waits.end = &s.cl.maxOffset
	s.arrivals.init()
	s.cqMapLimit.Store(int64(cfg.MaxMappedConsumeQueueFiles))
	s.cl.q = mappedQueue{dir: cfg.commitLogDir(), fileSize: cfg.MappedFileSizeCommitLog, ops: &s.ops, reap: s.reapLater}
	if cfg.MessageIndexEnable {
		s.idx = newIndexService(cfg.StorePathRootDir, cfg.MaxHashSlotNum, cfg.MaxIndexNum, s.log, &s.ops, s.diskFull.Load)
	}
	for _, d := range []string{cfg.StorePathRootDir, s.cl.q.dir, s.cqRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("open store: create %s: %w", d, err)
		}
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	if err := s.load(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if err := writeAbort(s.abortPath(), s.bootID); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("open store: create abort file: %w", err)
	}
	if _, err := s.checkSpace(); err != nil {
		s.log.Error().Err(err).Msg("disk usage unknown at start-up")
	}
	s.waits.enable(Flushed, time.Duration(cfg.SyncFlushTimeout)*time.Millisecond, s.cl.flushedWhere.Load())
	return s, nil
}

func (s *Store) abortPath() string { return mustStorePath(s.cfg.StorePathRootDir, fileAbort) }

// lock takes the fcntl range lock [0,1) on <root>/lock, as Java's
// FileChannel.tryLock does.
func (s *Store) lock() error {
	path := mustStorePath(s.cfg.StorePathRootDir, fileLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open store: lock file: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		return fmt.Errorf("open store: lock %s: %w (%w)", path, ErrLocked, err)
	}
	if _, err := f.WriteAt([]byte("lock"), 0); err != nil {
		f.Close()
		return fmt.Errorf("open store: write lock file: %w", err)
	}
	s.lockFile = f
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Start runs the dispatch and flush goroutines.
func (s *Store) Start() error {
	if s.closing.Load() {
		return ErrClosed
	}
	if !s.started.CompareAndSwap(false, true) {
		return nil
	}
	s.goRun(s.dispatchLoop)
	s.goRun(s.flushCommitLogLoop)
	s.goRun(s.flushConsumeQueueLoop)
	s.goRun(s.cleanupLoop)
	s.goRun(s.prefaultLoop)
	s.goRun(s.allocLoop)
	s.signal(s.allocCh)
	s.goRun(s.trimLoop)
	s.goRun(s.createLoop)
	s.goRun(s.unmapLoop)
	s.goRun(s.spaceLoop)
	s.goRun(s.arrivalLoop)
	s.signal(s.dispatchCh)
	s.log.Info().Int64("maxPhyOffset", s.cl.maxOffset.Load()).Msg("store started")
	return nil
}

func (s *Store) goRun(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

func (s *Store) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// OnDispatch sets the function the dispatcher calls, without store locks
// held, after it built consume queue entries for a queue (at most once per
// queue per dispatch round). Set it before Start.
func (s *Store) OnDispatch(fn func(topic string, queueID int32, maxOffset int64)) {
	s.onDispatch = fn
}

// Shutdown stops accepting puts, lets dispatch catch up (bounded by ctx),
// stops the goroutines, flushes everything, writes the checkpoint, removes
// the abort file (only if all that succeeded) and unmaps. Idempotent.
func (s *Store) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() { s.shutErr = s.shutdown(ctx) })
	return s.shutErr
}

func (s *Store) shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()

	var errs []error
	caughtUp := true
	if s.started.Load() {
		for s.dispatchBehind() && !s.dispatchStalled.Load() {
			s.signal(s.dispatchCh)
			select {
			case <-ctx.Done():
				caughtUp = false
			case <-time.After(time.Millisecond):
			}
			if !caughtUp {
				break
			}
		}
	}
	close(s.quit)
	s.wg.Wait()
	s.arrivals.abandonAll()
	if err := s.dropAhead(); err != nil {
		errs = append(errs, err)
	}
	if !s.started.Load() {
		_ = s.dispatchAvailable() // catch up synchronously; behind is reported below
	}
	if s.dispatchBehind() {
		caughtUp = false
		errs = append(errs, fmt.Errorf("shutdown store: dispatch behind at %d of %d", s.reput.Load(), s.cl.maxOffset.Load()))
	}

	if err := s.flushCommitLog(0); err != nil {
		errs = append(errs, err)
	}
	s.waits.advance(Flushed, s.cl.flushedWhere.Load())
	s.waits.close(ErrClosed)
	// Queues whose entries are still only in memory get their files, in
	// parallel, within three quarters of the time left; what is left then
	// is re-dispatched at the next start (the abort file stays, and the
	// checkpoint does not cover it).
	var until time.Time
	if d, ok := ctx.Deadline(); ok {
		until = time.Now().Add(time.Until(d) * 3 / 4)
	}
	left, derr := s.drainPending(until, nil, 4)
	if left > 0 {
		errs = append(errs, fmt.Errorf("shutdown store: %d consume queues have entries only in memory, re-dispatched at the next start: %w",
			left, errors.Join(derr, ctx.Err())))
	}
	terr := s.writeTails()
	if terr != nil {
		errs = append(errs, fmt.Errorf("shutdown store: %w", terr))
	}
	if _, err := s.flushConsumeQueues(0, s.lastDispatchTs.Load()); err != nil {
		errs = append(errs, err)
	}
	if s.idx != nil {
		if ts, err := s.idx.flush(true); err != nil {
			errs = append(errs, err)
		} else if ts > 0 {
			s.ckpt.index.Store(ts)
		}
	}
	s.ckpt.physic.Store(s.cl.lastStoreTs.Load())
	if left == 0 && terr == nil {
		s.ckpt.logics.Store(s.lastDispatchTs.Load())
	}
	if err := s.ckpt.flush(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 && caughtUp {
		if err := os.Remove(s.abortPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("shutdown store: remove abort file: %w", err))
		} else if err := syncDir(s.cfg.StorePathRootDir); err != nil {
			errs = append(errs, fmt.Errorf("shutdown store: sync dir: %w", err))
		}
	}
	errs = append(errs, s.closeFiles())
	err := errors.Join(errs...)
	if err != nil {
		s.log.Error().Err(err).Msg("store shutdown")
	} else {
		s.log.Info().Msg("store shut down")
	}
	return err
}

// closeFiles unmaps everything and releases the lock (no flush).
func (s *Store) closeFiles() error {
	var errs []error
	errs = append(errs, s.cl.q.close())
	s.alloc.mu.Lock()
	if mf := s.alloc.ready; mf != nil { // a crash leaves it on disk (allocate.go)
		s.alloc.ready = nil
		errs = append(errs, mf.unmap())
	}
	s.alloc.mu.Unlock()
	if s.idx != nil {
		errs = append(errs, s.idx.close())
	}
	s.cqMu.Lock()
	s.eachCQLocked(func(cq *consumeQueue) {
		cq.wmu.Lock()
		cq.q.mu.Lock()
		cq.closed = true
		cq.q.mu.Unlock()
		errs = append(errs, cq.q.close())
		cq.wmu.Unlock()
	})
	s.cqMu.Unlock()
	if s.lockFile != nil {
		errs = append(errs, s.lockFile.Close())
		s.lockFile = nil
	}
	return errors.Join(errs...)
}

// Put appends one message. It never waits for disk: call WaitFlush for
// SYNC_FLUSH semantics. Transaction PREPARED/ROLLBACK records get queue
// offset 0 and no consume queue entry.
func (s *Store) Put(m *PutMessage) (PutResult, error) {
	lmq := s.lmqRoom(m)
	size, err := s.check(m, lmq)
	if err != nil {
		return PutResult{}, err
	}
	crc := message.BodyCRC(m.Body) // outside the lock
	s.assistPrefault(size)
	s.mu.Lock()
	res, err := s.putLocked(m, crc, lmq != 0)
	s.mu.Unlock()
	if err == nil {
		s.signal(s.dispatchCh)
		s.appended.notify()
	}
	return res, err
}

// check refuses what cannot be stored and returns the record's size, or
// its bound when the append adds up to room bytes of properties (lmq.go).
func (s *Store) check(m *PutMessage, room int) (int64, error) {
	switch {
	case len(m.Topic) == 0 || len(m.Topic) > MaxTopicLen:
		return 0, fmt.Errorf("put: topic of %d bytes: %w", len(m.Topic), ErrTopicTooLong)
	case len(m.Body) > s.cfg.MaxMessageSize:
		return 0, fmt.Errorf("put %s: body %d bytes: %w", m.Topic, len(m.Body), ErrMessageTooLarge)
	case len(m.Properties)+room > message.MaxPropertiesLen:
		return 0, fmt.Errorf("put %s: properties %d bytes (+%d): %w", m.Topic, len(m.Properties), room, ErrPropertiesTooLarge)
	}
	sysFlag := message.HostFlags(m.SysFlag, m.BornHost, m.StoreHost)
	size := int64(message.RecordSize(sysFlag, len(m.Body), len(m.Topic), len(m.Properties)+room))
	if size+message.BlankRecordSize > s.cl.q.fileSize {
		return 0, fmt.Errorf("put %s: record larger than a commit log file: %w", m.Topic, ErrMessageTooLarge)
	}
	return size, nil
}

func hasQueueOffset(sysFlag int32) bool {
	t := message.TransactionType(sysFlag)
	return t == message.TransactionNot || t == message.TransactionCommit
}

func (s *Store) putLocked(m *PutMessage, crc int32, lmq bool) (PutResult, error) {
	if s.stopped {
		return PutResult{}, ErrClosed
	}
	if s.replica {
		return PutResult{}, fmt.Errorf("put %s: %w", m.Topic, ErrReplica)
	}
	if s.diskFull.Load() {
		s.signal(s.spaceCh) // taken again as soon as space is back
		return PutResult{}, fmt.Errorf("put %s: %w", m.Topic, ErrDiskFull)
	}
	if s.werr != nil {
		return PutResult{}, s.werr
	}
	key := queueKey{m.Topic, m.QueueID}
	var qoff int64
	if hasQueueOffset(m.SysFlag) {
		var seen bool
		if qoff, seen = s.queueOffsets[key]; !seen {
			if err := s.firstSightLocked(&key); err != nil {
				return PutResult{}, err
			}
		}
	} else if err := checkQueueName(m.Topic, m.QueueID); err != nil {
		return PutResult{}, fmt.Errorf("put: %w", err)
	}
	props := m.Properties
	if lmq {
		props = s.lmqAssignLocked(props)
	}
	now := time.Now().UnixMilli()
	r := message.Record{
		QueueID:                   m.QueueID,
		Flag:                      m.Flag,
		QueueOffset:               qoff,
		SysFlag:                   m.SysFlag,
		BornTimestamp:             m.BornTimestamp,
		BornHost:                  m.BornHost,
		StoreTimestamp:            now,
		StoreHost:                 m.StoreHost,
		ReconsumeTimes:            m.ReconsumeTimes,
		PreparedTransactionOffset: m.PreparedTransactionOffset,
		BodyCRC:                   crc,
		Body:                      m.Body,
		Topic:                     m.Topic,
		Properties:                props,
	}
	size := r.EncodedSize()
	mf, pos, err := s.reserveLocked(int64(size))
	if err != nil {
		return PutResult{}, err
	}
	r.PhysicalOffset = mf.start + pos
	b, err := message.AppendRecord(s.appendDstLocked(mf, pos, int64(size)), &r)
	if err == nil {
		err = s.writeLocked(mf, pos, b)
	}
	if err != nil {
		return PutResult{}, fmt.Errorf("put %s: %w", m.Topic, err) // nothing published
	}
	s.publishLocked(mf, pos+int64(size), now)
	s.wroteLocked(int64(size))
	if hasQueueOffset(m.SysFlag) {
		s.queueOffsets[key] = qoff + 1
	}
	if lmq {
		s.lmqBumpLocked()
	}
	return PutResult{PhysicalOffset: r.PhysicalOffset, QueueOffset: qoff, WroteBytes: int32(size), StoreTimestamp: now}, nil
}

// firstSightLocked checks a queue the offset table does not know yet: its
// topic and id must be able to name a consume queue directory. Known
// queues passed this check, so the append path costs nothing more. The
// key's topic is cloned: the table keeps it for good, and the caller's
// string may point into a larger buffer (a connection's header arena).
func (s *Store) firstSightLocked(key *queueKey) error {
	if err := checkQueueName(key.topic, key.queueID); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	key.topic = strings.Clone(key.topic)
	return nil
}

// reserveLocked returns the file and position where size bytes fit,
// closing the current file with a BLANK record and rolling over if needed.
func (s *Store) reserveLocked(size int64) (*mappedFile, int64, error) {
	mf := s.cl.q.lastLocked() // only this goroutine (append lock) changes the list
	if mf != nil {
		pos := mf.wrote.Load()
		if pos+size+message.BlankRecordSize <= mf.size {
			return mf, pos, nil
		}
		if left := mf.size - pos; left >= message.BlankRecordSize {
			b := message.AppendBlank(s.appendDstLocked(mf, pos, message.BlankRecordSize), int32(left))
			if err := s.writeLocked(mf, pos, b); err != nil {
				return nil, 0, fmt.Errorf("close commit log file: %w", err)
			}
		}
		s.publishLocked(mf, mf.size, s.cl.lastStoreTs.Load())
		if err := mf.closeFD(); err != nil { // never written again
			s.log.Warn().Err(err).Str("file", mf.path).Msg("close full commit log file")
		}
	}
	start := s.cl.maxOffset.Load()
	if mf != nil {
		start = mf.start + mf.size
	}
	if s.rollErr != nil && time.Now().Before(s.rollRetryAt) {
		return nil, 0, s.rollErr
	}
	s.signal(s.spaceCh)           // a roll: read the usage
	nf, err := s.takeAhead(start) // made ahead, off the append lock
	if err == nil {
		s.cl.q.mu.Lock()
		s.cl.q.files = append(s.cl.q.files, nf)
		s.cl.q.mu.Unlock()
		s.signal(s.allocCh) // the one after: the allocator sees nf listed
	}
	if err != nil {
		err = fmt.Errorf("roll commit log: %w", err)
		if isResource(err) {
			// Not the data's fault, nor for good (space may be freed): this
			// append is refused, the next roll is tried after a second.
			s.rollErr, s.rollRetryAt = err, time.Now().Add(time.Second)
			s.sampled.Error().Err(err).Msg("commit log roll failed, writes refused for now")
			return nil, 0, err
		}
		s.werr = err
		s.log.Error().Err(err).Msg("commit log roll failed, refusing writes")
		return nil, 0, s.werr
	}
	s.rollErr = nil
	return nf, 0, nil
}

// publishLocked makes bytes up to pos in mf visible to readers.
func (s *Store) publishLocked(mf *mappedFile, pos int64, storeTs int64) {
	if pos+prefaultAhead/2 > mf.populated.Load() && pos < mf.size {
		s.signal(s.prefaultCh)
	}
	mf.wrote.Store(pos)
	s.cl.maxOffset.Store(mf.start + pos)
	s.cl.lastStoreTs.Store(storeTs)
}

// PutBatch appends messages of one topic/queue atomically with consecutive
// queue offsets, all in one commit log file, and appends their results to
// res. Transaction PREPARED/ROLLBACK messages are refused (ErrBadBatch).
func (s *Store) PutBatch(ms []PutMessage, res []PutResult) ([]PutResult, error) {
	if len(ms) == 0 {
		return res, nil
	}
	var total int64
	var crcBuf [64]int32 // the body CRCs are computed outside the lock
	crcs := crcBuf[:0]
	if len(ms) > len(crcBuf) {
		crcs = make([]int32, 0, len(ms))
	}
	crcs = crcs[:len(ms)]
	for i := range ms {
		m := &ms[i]
		if m.Topic != ms[0].Topic || m.QueueID != ms[0].QueueID || !hasQueueOffset(m.SysFlag) {
			return nil, fmt.Errorf("put batch %s: message %d: %w", ms[0].Topic, i, ErrBadBatch)
		}
		size, err := s.check(m, 0)
		if err != nil {
			return nil, err
		}
		total += size
		crcs[i] = message.BodyCRC(m.Body)
	}
	if total+message.BlankRecordSize > s.cl.q.fileSize {
		return nil, fmt.Errorf("put batch %s: %d bytes: %w", ms[0].Topic, total, ErrMessageTooLarge)
	}
	at := len(res)
	res = slices.Grow(res, len(ms))[:at+len(ms)]
	s.assistPrefault(total)
	s.mu.Lock()
	err := s.putBatchLocked(ms, crcs, total, res[at:])
	s.mu.Unlock()
	if err != nil {
		return res[:at], err
	}
	s.signal(s.dispatchCh)
	s.appended.notify()
	return res, nil
}

func (s *Store) putBatchLocked(ms []PutMessage, crcs []int32, total int64, res []PutResult) error {
	if s.stopped {
		return ErrClosed
	}
	if s.replica {
		return fmt.Errorf("put batch %s: %w", ms[0].Topic, ErrReplica)
	}
	if s.diskFull.Load() {
		s.signal(s.spaceCh)
		return fmt.Errorf("put batch %s: %w", ms[0].Topic, ErrDiskFull)
	}
	if s.werr != nil {
		return s.werr
	}
	key := queueKey{ms[0].Topic, ms[0].QueueID}
	qoff, seen := s.queueOffsets[key]
	if !seen {
		if err := s.firstSightLocked(&key); err != nil {
			return err
		}
	}
	mf, pos, err := s.reserveLocked(total)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	p := pos
	b := s.appendDstLocked(mf, pos, total)
	for i := range ms {
		m := &ms[i]
		r := message.Record{
			QueueID: m.QueueID, Flag: m.Flag, QueueOffset: qoff + int64(i), PhysicalOffset: mf.start + p,
			SysFlag: m.SysFlag, BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreTimestamp: now,
			StoreHost: m.StoreHost, ReconsumeTimes: m.ReconsumeTimes, PreparedTransactionOffset: m.PreparedTransactionOffset,
			BodyCRC: crcs[i], Body: m.Body, Topic: m.Topic, Properties: m.Properties,
		}
		var err error
		if b, err = message.AppendRecord(b, &r); err != nil {
			return fmt.Errorf("put batch %s: %w", m.Topic, err) // nothing published yet
		}
		size := pos + int64(len(b)) - p
		res[i] = PutResult{PhysicalOffset: r.PhysicalOffset, QueueOffset: r.QueueOffset, WroteBytes: int32(size), StoreTimestamp: now}
		p += size
	}
	if err := s.writeLocked(mf, pos, b); err != nil {
		return fmt.Errorf("put batch %s: %w", ms[0].Topic, err)
	}
	s.publishLocked(mf, p, now)
	s.wroteLocked(total)
	s.queueOffsets[key] = qoff + int64(len(ms))
	return nil
}

// dispatchBehind reports whether the dispatcher has complete records left
// to index: a slave's dispatcher waiting at a record a frame split is not
// behind (the rest never comes once appends stopped).
func (s *Store) dispatchBehind() bool {
	r := s.reput.Load()
	return r < s.dispatchEnd() && r != s.splitAt.Load()
}

// findCQ returns the consume queue or nil.
func (s *Store) findCQ(topic string, queueID int32) *consumeQueue {
	s.cqMu.RLock()
	defer s.cqMu.RUnlock()
	return s.cqLocked(topic, queueID)
}

// cqLocked returns the consume queue or nil; caller holds cqMu. Queue 0
// of a %LMQ% name is in lmqs, every other queue in cqs.
func (s *Store) cqLocked(topic string, queueID int32) *consumeQueue {
	if queueID == 0 && isLMQ(topic) {
		return s.lmqs[topic]
	}
	return s.cqs[topic][queueID]
}

// addCQLocked lists a new queue; caller holds cqMu for writing.
func (s *Store) addCQLocked(cq *consumeQueue) {
	if cq.queueID == 0 && isLMQ(cq.topic) {
		s.lmqs[cq.topic] = cq
		s.lmqNum.Store(int64(len(s.lmqs)))
		return
	}
	qs := s.cqs[cq.topic]
	if qs == nil {
		qs = make(map[int32]*consumeQueue)
		s.cqs[cq.topic] = qs
	}
	qs[cq.queueID] = cq
}

// eachCQLocked calls fn with every consume queue; caller holds cqMu, fn
// must not change the tables.
func (s *Store) eachCQLocked(fn func(cq *consumeQueue)) {
	for _, qs := range s.cqs {
		for _, cq := range qs {
			fn(cq)
		}
	}
	for _, cq := range s.lmqs {
		fn(cq)
	}
}

// cqCountLocked is the number of consume queues; caller holds cqMu.
func (s *Store) cqCountLocked() int {
	n := len(s.lmqs)
	for _, qs := range s.cqs {
		n += len(qs)
	}
	return n
}

// findOrCreateCQ is used by the dispatcher; topic may be a view, it is
// copied only when a queue is created. A topic or queue id that cannot
// name a directory (a record an older version wrote) gets no queue: nil,
// and the record is skipped with a (sampled) log line.
func (s *Store) findOrCreateCQ(topic []byte, queueID int32) *consumeQueue {
	s.cqMu.RLock()
	cq := s.cqLocked(string(topic), queueID)
	s.cqMu.RUnlock()
	if cq != nil {
		return cq
	}
	dir, err := cqDir(s.cqRoot, string(topic), queueID)
	if err != nil {
		s.sampled.Warn().Err(err).Msg("record skipped by dispatch, its topic cannot name a consume queue")
		return nil
	}
	s.cqMu.Lock()
	defer s.cqMu.Unlock()
	for {
		ch := s.cqDeleting[string(topic)]
		if ch == nil {
			break
		}
		// DeleteTopic is removing the files of the topic's old queues:
		// a new queue must not make files in the directory meanwhile.
		s.cqMu.Unlock()
		<-ch
		s.cqMu.Lock()
	}
	if cq = s.cqLocked(string(topic), queueID); cq == nil {
		cq = newConsumeQueue(dir, string(topic), queueID, s)
		s.addCQLocked(cq)
	}
	return cq
}

// allQueues lists every consume queue.
func (s *Store) allQueues() []*consumeQueue {
	s.cqMu.RLock()
	defer s.cqMu.RUnlock()
	out := make([]*consumeQueue, 0, s.cqCountLocked())
	s.eachCQLocked(func(cq *consumeQueue) { out = append(out, cq) })
	return out
}

// MaxOffset is one past the last dispatched entry of the queue (0 if unknown).
func (s *Store) MaxOffset(topic string, queueID int32) int64 {
	if cq := s.findCQ(topic, queueID); cq != nil {
		return cq.maxLogical.Load()
	}
	return 0
}

// MinOffset is the first readable entry of the queue (0 if unknown).
func (s *Store) MinOffset(topic string, queueID int32) int64 {
	if cq := s.findCQ(topic, queueID); cq != nil {
		return cq.minLogical.Load()
	}
	return 0
}

// MaxPhyOffset is the end of the commit log.
func (s *Store) MaxPhyOffset() int64 { return s.cl.maxOffset.Load() }

// MinPhyOffset is the start of the first commit log file.
func (s *Store) MinPhyOffset() int64 { return s.cl.minOffset() }

// DispatchedPhyOffset is how far the dispatcher has indexed the commit log.
func (s *Store) DispatchedPhyOffset() int64 { return s.reput.Load() }

// FlushedPhyOffset is the commit log offset msync'ed to disk up to.
func (s *Store) FlushedPhyOffset() int64 { return s.cl.flushedWhere.Load() }

// MessageAt returns a copy of the whole record stored at phyOffset.
func (s *Store) MessageAt(phyOffset int64) ([]byte, error) {
	var hdr [8]byte
	b, ok := s.cl.read(hdr[:0], phyOffset, 8)
	if !ok {
		return nil, fmt.Errorf("message at %d: %w", phyOffset, ErrNotFound)
	}
	size := int32(be32(b))
	magic := int32(be32(b[4:]))
	if (magic != message.MagicV1 && magic != message.MagicV2) || size < int32(message.RecordSize(0, 0, 0, 0)) {
		return nil, fmt.Errorf("message at %d: no record there: %w", phyOffset, ErrNotFound)
	}
	rec, ok := s.cl.read(make([]byte, 0, size), phyOffset, size)
	if !ok {
		return nil, fmt.Errorf("message at %d: %w", phyOffset, ErrNotFound)
	}
	return rec, nil
}

// DeleteTopic drops the topic's consume queues (files included) and its
// queue offsets. Commit log records stay until cleanup.
func (s *Store) DeleteTopic(topic string) error {
	dir, err := storePath(s.cqRoot, topic)
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	// The queues leave the table under cqMu; their files are unmapped and
	// unlinked after it (pulls and the dispatcher take cqMu), while the
	// topic is marked deleting so that the dispatcher does not make a new
	// queue's files on top of those being deleted.
	done := make(chan struct{})
	s.cqMu.Lock()
	for {
		ch := s.cqDeleting[topic]
		if ch == nil {
			break
		}
		s.cqMu.Unlock()
		<-ch // another DeleteTopic of the same topic
		s.cqMu.Lock()
	}
	qs := s.cqs[topic]
	delete(s.cqs, topic)
	if lq := s.lmqs[topic]; lq != nil {
		if qs == nil {
			qs = make(map[int32]*consumeQueue, 1)
		}
		qs[0] = lq
		delete(s.lmqs, topic)
		s.lmqNum.Store(int64(len(s.lmqs)))
	}
	s.cqDeleting[topic] = done
	s.cqMu.Unlock()
	var errs []error
	for _, cq := range qs {
		errs = append(errs, cq.destroy())
	}
	if err := s.ops.removeAll(dir); err != nil {
		errs = append(errs, err)
	}
	s.cqMu.Lock()
	delete(s.cqDeleting, topic)
	s.cqMu.Unlock()
	close(done)
	s.mu.Lock()
	if isLMQ(topic) && len(qs) == 1 && qs[0] != nil {
		// 100,000 LMQs deleted one by one must not scan the table each time.
		delete(s.queueOffsets, queueKey{topic, 0})
	} else {
		for k := range s.queueOffsets {
			if k.topic == topic {
				delete(s.queueOffsets, k)
			}
		}
	}
	s.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	return nil
}

// Topics lists the topics with consume queues and their queue ids, sorted.
// LMQs are not topics and are left out (LmqNum, ForEachLMQ).
func (s *Store) Topics() map[string][]int32 {
	s.cqMu.RLock()
	defer s.cqMu.RUnlock()
	out := make(map[string][]int32, len(s.cqs))
	for t, qs := range s.cqs {
		ids := make([]int32, 0, len(qs))
		for id := range qs {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		out[t] = ids
	}
	return out
}

// tagsCode computes the consume queue tags slot for a record.
func (s *Store) tagsCode(v *message.RecordView) int64 {
	if string(v.Topic) == ScheduleTopic {
		lvl := message.PropertyBytes(v.Properties, message.PropDelayTimeLevel)
		if len(lvl) > 0 {
			n, err := strconv.Atoi(string(lvl))
			if err == nil && n > 0 && len(s.delayLevels) > 0 {
				n = min(n, len(s.delayLevels))
				return v.StoreTimestamp + s.delayLevels[n-1]
			}
			return v.StoreTimestamp + 1000
		}
	}
	return message.TagsHashBytes(message.PropertyBytes(v.Properties, message.PropTags))
}

// storeTimeAt reads the store timestamp of the record of entry e.
func (s *Store) storeTimeAt(e cqEntry) (int64, bool) {
	if e.filler() {
		return 0, false
	}
	return s.cl.recordStoreTimestamp(e.phy)
}

// OffsetByTime returns the first queue offset whose record was stored at
// or after ts (ms), clamped to [MinOffset, MaxOffset].
func (s *Store) OffsetByTime(topic string, queueID int32, ts int64) int64 {
	cq := s.findCQ(topic, queueID)
	if cq == nil {
		return 0
	}
	lo, hi := cq.minLogical.Load(), cq.maxLogical.Load()
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, ok := cq.entry(mid)
		t, ok2 := s.storeTimeAt(e)
		if !ok || !ok2 || t < ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// OffsetByTimeUpper is OffsetByTime's upper boundary (Apache's
// BoundaryType.UPPER): the last queue offset whose record was stored at or
// before ts; 0 when every record is later, as Apache answers.
func (s *Store) OffsetByTimeUpper(topic string, queueID int32, ts int64) int64 {
	cq := s.findCQ(topic, queueID)
	if cq == nil {
		return 0
	}
	lo, hi := cq.minLogical.Load(), cq.maxLogical.Load()
	if lo == hi {
		return 0
	}
	min := lo
	for lo < hi { // the first offset stored after ts
		mid := lo + (hi-lo)/2
		e, ok := cq.entry(mid)
		t, ok2 := s.storeTimeAt(e)
		if !ok || !ok2 || t <= ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == min {
		return 0
	}
	return lo - 1
}

// EarliestMessageTime is the store time of the queue's first readable message.
func (s *Store) EarliestMessageTime(topic string, queueID int32) (int64, error) {
	cq := s.findCQ(topic, queueID)
	if cq == nil {
		return 0, fmt.Errorf("earliest message time %s-%d: %w", topic, queueID, ErrNoQueue)
	}
	for idx := cq.minLogical.Load(); idx < cq.maxLogical.Load(); idx++ {
		e, ok := cq.entry(idx)
		if !ok {
			break
		}
		if t, ok := s.storeTimeAt(e); ok {
			return t, nil
		}
	}
	return 0, fmt.Errorf("earliest message time %s-%d: %w", topic, queueID, ErrNotFound)
}

// SetCommitLogReadAhead advises the kernel on every mapped commit log file:
// normal read-ahead (MADV_NORMAL) or none (MADV_RANDOM), as Apache's
// scanFileAndSetReadMode for SET_COMMITLOG_READ_MODE. Files mapped later
// get the kernel's default.
func (s *Store) SetCommitLogReadAhead(on bool) {
	advice := unix.MADV_RANDOM
	if on {
		advice = unix.MADV_NORMAL
	}
	s.cl.q.mu.RLock()
	defer s.cl.q.mu.RUnlock()
	for _, mf := range s.cl.q.files {
		if mf.data == nil || mf.unmapped.Load() {
			continue
		}
		// An error (EINVAL on an odd kernel) only leaves the old advice.
		_ = unix.Madvise(mf.data, advice)
	}
}
