package autoswitch

// AutoSwitch frames, big-endian, no magic, no checksum. Every frame starts
// with the sender's connection state (HAConnectionState ordinal).
//
//	slave → master
//	  HANDSHAKE  0 state=1 (4) | 4 isSyncFromLastFile (2) | 6 isAsyncLearner (2) | 8 brokerId (8)   16 bytes
//	  TRANSFER   0 state=2 (4) | 4 slave max offset (8)                                            12 bytes
//
//	master → slave
//	  HANDSHAKE  0 state=1 (4) | 4 body size (4) | 8 master max offset (8) | 16 last epoch (4)     20 bytes
//	             body: body size / 12 entries of epoch (4) + start offset (8)
//	  TRANSFER   0 state=2 (4) | 4 body size (4) | 8 body start offset (8) | 16 epoch (4)
//	             | 20 epoch start offset (8) | 28 confirm offset (8)                                36 bytes
//	             body: commit log bytes of that epoch (size 0 = heartbeat)

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/store"
)

// State is HAConnectionState's ordinal.
type State int32

// Connection states.
const (
	StateReady State = iota
	StateHandshake
	StateTransfer
	StateSuspend
	StateShutdown
)

var stateNames = [...]string{"READY", "HANDSHAKE", "TRANSFER", "SUSPEND", "SHUTDOWN"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Frame sizes.
const (
	SlaveHandshakeSize       = 16
	SlaveReportSize          = 12
	MasterHandshakeHeaderLen = 20
	MasterTransferHeaderLen  = 36
	EpochEntrySize           = 12
)

// ErrFrame is wrapped by every refusal of a peer's frame; the connection
// is then closed (Apache's reader dies on the same input).
var ErrFrame = errors.New("bad autoswitch frame")

// SlaveFrame is one frame a slave sent: a handshake or an offset report.
type SlaveFrame struct {
	State            State
	SyncFromLastFile bool  // handshake
	AsyncLearner     bool  // handshake
	BrokerID         int64 // handshake
	MaxOffset        int64 // report
}

// AppendSlaveHandshake appends the slave's handshake.
func AppendSlaveHandshake(b []byte, syncFromLastFile, asyncLearner bool, brokerID int64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(StateHandshake))
	b = binary.BigEndian.AppendUint16(b, flag(syncFromLastFile))
	b = binary.BigEndian.AppendUint16(b, flag(asyncLearner))
	return binary.BigEndian.AppendUint64(b, uint64(brokerID))
}

// AppendSlaveReport appends the slave's max offset report.
func AppendSlaveReport(b []byte, maxOffset int64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(StateTransfer))
	return binary.BigEndian.AppendUint64(b, uint64(maxOffset))
}

func flag(v bool) uint16 {
	if v {
		return 1
	}
	return 0
}

// ParseSlaveFrame decodes the first frame of b; n = 0 when b holds less
// than a whole frame. A state other than HANDSHAKE or TRANSFER fails, as
// Apache's master only reads those two.
func ParseSlaveFrame(b []byte) (f SlaveFrame, n int, err error) {
	if len(b) < 4 {
		return f, 0, nil
	}
	f.State = State(int32(binary.BigEndian.Uint32(b)))
	switch f.State {
	case StateHandshake:
		if len(b) < SlaveHandshakeSize {
			return f, 0, nil
		}
		// Apache compares the shorts with 1: any other value is false.
		f.SyncFromLastFile = binary.BigEndian.Uint16(b[4:]) == 1
		f.AsyncLearner = binary.BigEndian.Uint16(b[6:]) == 1
		f.BrokerID = int64(binary.BigEndian.Uint64(b[8:]))
		return f, SlaveHandshakeSize, nil
	case StateTransfer:
		if len(b) < SlaveReportSize {
			return f, 0, nil
		}
		f.MaxOffset = int64(binary.BigEndian.Uint64(b[4:]))
		if f.MaxOffset < 0 {
			return f, 0, fmt.Errorf("slave max offset %d: %w", f.MaxOffset, ErrFrame)
		}
		return f, SlaveReportSize, nil
	}
	return f, 0, fmt.Errorf("slave frame in state %v: %w", f.State, ErrFrame)
}

// MasterFrame is one frame a master sent: its handshake (MaxOffset,
// LastEpoch, Epochs) or a transfer (Offset, Epoch, EpochStart, Confirm and
// Body, which aliases the parsed buffer).
type MasterFrame struct {
	State      State
	MaxOffset  int64 // handshake: the master's max offset
	LastEpoch  int32 // handshake
	Epochs     []store.EpochEntry
	Offset     int64 // transfer: where Body starts
	Epoch      int32 // transfer: the epoch of Body's bytes
	EpochStart int64 // transfer: that epoch's start offset
	Confirm    int64 // transfer: the master's confirm offset
	Body       []byte
}

// AppendMasterHandshake appends the master's handshake with its epoch
// entries (oldest first).
func AppendMasterHandshake(b []byte, maxOffset int64, lastEpoch int32, entries []store.EpochEntry) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(StateHandshake))
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)*EpochEntrySize))
	b = binary.BigEndian.AppendUint64(b, uint64(maxOffset))
	b = binary.BigEndian.AppendUint32(b, uint32(lastEpoch))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.Epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.StartOffset))
	}
	return b
}

// AppendMasterTransferHeader appends a transfer header for bodySize bytes
// starting at offset (the caller writes the body after it).
func AppendMasterTransferHeader(b []byte, bodySize int, offset int64, epoch int32, epochStart, confirm int64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(StateTransfer))
	b = binary.BigEndian.AppendUint32(b, uint32(bodySize))
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(epoch))
	b = binary.BigEndian.AppendUint64(b, uint64(epochStart))
	return binary.BigEndian.AppendUint64(b, uint64(confirm))
}

// ParseMasterFrame decodes the first frame of b; n = 0 when b holds less
// than a whole frame. A body above maxBody, a negative size or offset (but
// an empty master's heartbeat at -1), a handshake body that is not whole
// entries, or another state fails.
func ParseMasterFrame(b []byte, maxBody int) (f MasterFrame, n int, err error) {
	if len(b) < 8 {
		return f, 0, nil
	}
	f.State = State(int32(binary.BigEndian.Uint32(b)))
	size := int64(int32(binary.BigEndian.Uint32(b[4:])))
	if size < 0 || size > int64(maxBody) {
		return f, 0, fmt.Errorf("body size %d (max %d): %w", size, maxBody, ErrFrame)
	}
	var hdr int
	switch f.State {
	case StateHandshake:
		hdr = MasterHandshakeHeaderLen
		if size%EpochEntrySize != 0 {
			return f, 0, fmt.Errorf("handshake body of %d bytes: %w", size, ErrFrame)
		}
	case StateTransfer:
		hdr = MasterTransferHeaderLen
	default:
		return f, 0, fmt.Errorf("master frame in state %v: %w", f.State, ErrFrame)
	}
	if len(b) < hdr+int(size) {
		return f, 0, nil
	}
	body := b[hdr : hdr+int(size)]
	if f.State == StateHandshake {
		f.MaxOffset = int64(binary.BigEndian.Uint64(b[8:]))
		f.LastEpoch = int32(binary.BigEndian.Uint32(b[16:]))
		if f.MaxOffset < 0 {
			return f, 0, fmt.Errorf("master max offset %d: %w", f.MaxOffset, ErrFrame)
		}
		f.Epochs = make([]store.EpochEntry, 0, len(body)/EpochEntrySize)
		for i := 0; i < len(body); i += EpochEntrySize {
			f.Epochs = append(f.Epochs, store.EpochEntry{Epoch: int32(binary.BigEndian.Uint32(body[i:])),
				StartOffset: int64(binary.BigEndian.Uint64(body[i+4:]))})
		}
		return f, hdr + int(size), nil
	}
	f.Offset = int64(binary.BigEndian.Uint64(b[8:]))
	f.Epoch = int32(binary.BigEndian.Uint32(b[16:]))
	f.EpochStart = int64(binary.BigEndian.Uint64(b[20:]))
	f.Confirm = int64(binary.BigEndian.Uint64(b[28:]))
	// An Apache master with an empty commit log sends heartbeats at
	// offset -1 (its nextTransferFromWhere before any data,
	// AutoSwitchHAConnection.sendHeartbeatIfNeeded): accepted without a
	// body, as Apache's slave accepts them.
	heartbeatOfEmpty := f.Offset == -1 && size == 0
	if (f.Offset < 0 && !heartbeatOfEmpty) || f.EpochStart < 0 {
		return f, 0, fmt.Errorf("transfer at %d, epoch start %d: %w", f.Offset, f.EpochStart, ErrFrame)
	}
	f.Body = body
	return f, hdr + int(size), nil
}
