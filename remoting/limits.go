package remoting

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// Limits bound what clients can make a server hold: connections, idle
// connections, input read but not yet served, output not yet sent, and
// request headers. Crossing one closes the connection (or refuses it) with a
// sampled log line, or answers the request with an error; it never ends the
// process. Field tags are the config keys: Apache's NettyServerConfig keys
// where Apache has one, rocketgo's own otherwise. broker.Config and
// namesrv.Config embed Limits, so both servers read the same keys.
//
// A zero value keeps every bound off except the output marks (Apache's 0:
// the transport's default) and the connection limit (derived from the open
// file limit); DefaultLimits is what the binaries run with.
type Limits struct {
	// ServerChannelMaxIdleTimeSeconds closes a connection nothing was read
	// from for that long (Apache: 120; 0 never). Clients heartbeat every 30 s
	// and brokers register every 30 s, so live peers never idle out.
	ServerChannelMaxIdleTimeSeconds int `key:"serverChannelMaxIdleTimeSeconds"`
	// WriteBufferHighWaterMark: while more than this many bytes of a
	// connection's output wait to be sent, its requests are not read (they
	// wait in the input buffer); below WriteBufferLowWaterMark they are
	// again. 0 (Apache's default) means 8 MiB and 4 MiB here, sized so that
	// a client reading its answers is never throttled (see DefaultHighWater).
	WriteBufferHighWaterMark int `key:"writeBufferHighWaterMark"`
	WriteBufferLowWaterMark  int `key:"writeBufferLowWaterMark"`
	// ServerMaxConnections: connections above it are accepted and closed at
	// once. 0 derives it from RLIMIT_NOFILE (ConnLimitFromRlimit).
	ServerMaxConnections int `key:"serverMaxConnections"`
	// ServerIncompleteFrameTimeoutMillis closes a connection whose frame,
	// once begun, is not complete after that long (0: no limit).
	ServerIncompleteFrameTimeoutMillis int64 `key:"serverIncompleteFrameTimeoutMillis"`
	// ServerInputBufferMaxBytes bounds, across all connections, the input
	// read and not yet served: incomplete frames, and requests held back
	// while their connection's output is above the high-water mark. A
	// connection that would take more is closed (0: no bound).
	ServerInputBufferMaxBytes int64 `key:"serverInputBufferMaxBytes"`
	// ServerSlowConsumerTimeoutMillis closes a connection whose output stayed
	// above the high-water mark that long (0: never). Output above four times
	// the high-water mark closes it at once.
	ServerSlowConsumerTimeoutMillis int64 `key:"serverSlowConsumerTimeoutMillis"`
	// ServerMaxHeaderBytes: a frame announcing a larger header closes the
	// connection before the header is read (0: only the 16 MiB frame limit).
	ServerMaxHeaderBytes int `key:"serverMaxHeaderBytes"`
	// ServerMaxHeaderFields: a request with more header fields is answered
	// SYSTEM_ERROR without being served; decoding stops storing fields
	// there (0: no limit).
	ServerMaxHeaderFields int `key:"serverMaxHeaderFields"`
}

// Built-in output marks, for WriteBufferHighWaterMark / WriteBufferLowWaterMark 0.
// A pull answer is at most 256 KiB; a client keeping 128 of them in flight
// and reading them as they come has at most the socket buffer (a few MiB)
// queued beyond the kernel, so 8 MiB never throttles a reading client.
const (
	DefaultHighWater = 8 << 20
	DefaultLowWater  = 4 << 20
)

// DefaultLimits returns the limits the binaries run with.
func DefaultLimits() Limits {
	return Limits{
		ServerChannelMaxIdleTimeSeconds: 120,
		// 0: the built-in marks, as Apache's 0 means Netty's.
		WriteBufferHighWaterMark: 0,
		WriteBufferLowWaterMark:  0,
		ServerMaxConnections:     0,
		// A 16 MiB frame at 1 MiB/s still arrives; a stalled one is dropped.
		ServerIncompleteFrameTimeoutMillis: 30_000,
		// Thirty-two 4 MiB messages arriving at once, or eight maximal frames.
		ServerInputBufferMaxBytes:       128 << 20,
		ServerSlowConsumerTimeoutMillis: 10_000,
		// The largest legitimate header is a send's 32767 characters of
		// properties, at worst escaped to six JSON bytes each: 192 KiB.
		ServerMaxHeaderBytes: 256 << 10,
		// Apache's request headers have at most about 30 fields.
		ServerMaxHeaderFields: 256,
	}
}

// Validate checks the limits.
func (l Limits) Validate() error {
	switch {
	case l.ServerChannelMaxIdleTimeSeconds < 0:
		return fmt.Errorf("serverChannelMaxIdleTimeSeconds %d is negative", l.ServerChannelMaxIdleTimeSeconds)
	case l.WriteBufferHighWaterMark < 0 || l.WriteBufferLowWaterMark < 0:
		return fmt.Errorf("writeBufferHighWaterMark %d / writeBufferLowWaterMark %d: negative",
			l.WriteBufferHighWaterMark, l.WriteBufferLowWaterMark)
	case l.highWater() < l.lowWater():
		return fmt.Errorf("writeBufferLowWaterMark %d is above writeBufferHighWaterMark %d", l.lowWater(), l.highWater())
	case l.ServerMaxConnections < 0:
		return fmt.Errorf("serverMaxConnections %d is negative", l.ServerMaxConnections)
	case l.ServerIncompleteFrameTimeoutMillis < 0:
		return fmt.Errorf("serverIncompleteFrameTimeoutMillis %d is negative", l.ServerIncompleteFrameTimeoutMillis)
	case l.ServerInputBufferMaxBytes < 0:
		return fmt.Errorf("serverInputBufferMaxBytes %d is negative", l.ServerInputBufferMaxBytes)
	case l.ServerSlowConsumerTimeoutMillis < 0:
		return fmt.Errorf("serverSlowConsumerTimeoutMillis %d is negative", l.ServerSlowConsumerTimeoutMillis)
	case l.ServerMaxHeaderBytes < 0:
		return fmt.Errorf("serverMaxHeaderBytes %d is negative", l.ServerMaxHeaderBytes)
	case l.ServerMaxHeaderFields < 0:
		return fmt.Errorf("serverMaxHeaderFields %d is negative", l.ServerMaxHeaderFields)
	}
	return nil
}

func (l Limits) highWater() int {
	if l.WriteBufferHighWaterMark == 0 {
		return max(DefaultHighWater, l.WriteBufferLowWaterMark)
	}
	return l.WriteBufferHighWaterMark
}

func (l Limits) lowWater() int {
	if l.WriteBufferLowWaterMark == 0 {
		return min(DefaultLowWater, l.highWater()/2)
	}
	return l.WriteBufferLowWaterMark
}

func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// ConnLimitFromRlimit is the connection limit for serverMaxConnections 0:
// the open file limit (Go raises the soft limit to the hard one at start-up)
// less a reserve of an eighth, at least 64, for the store's files, the
// event loops' descriptors and the descriptor each accept briefly needs
// beside the connection's own.
func ConnLimitFromRlimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<24 {
		return 1 << 20 // unknown or unlimited: accept errors are the bound
	}
	n := int(rl.Cur)
	return max(n-max(64, n/8), n/2, 1)
}

// LogFileLimit logs the open file limit the process runs with, at start-up:
// each connection takes a descriptor, and serverMaxConnections 0 is derived
// from it. Go has already raised the soft limit to the hard one.
func LogFileLimit(log zerolog.Logger) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		log.Warn().Err(err).Msg("open file limit unknown")
		return
	}
	ev := log.Info()
	if rl.Cur < 4096 {
		ev = log.Warn() // fewer connections than a busy cluster needs; raise the hard limit (ulimit -Hn)
	}
	ev.Uint64("soft", rl.Cur).Uint64("hard", rl.Max).Int("derivedMaxConnections", ConnLimitFromRlimit()).
		Msg("open file limit")
}

// Why the server closed a connection (Conn.ClosedByServer).
var (
	// ErrIdle: nothing was read for serverChannelMaxIdleTimeSeconds.
	ErrIdle = errors.New("remoting: connection idle")
	// ErrFrameTimeout: a frame stayed incomplete for serverIncompleteFrameTimeoutMillis.
	ErrFrameTimeout = errors.New("remoting: incomplete frame timed out")
	// ErrInputBudget: the connection's input would exceed serverInputBufferMaxBytes.
	ErrInputBudget = errors.New("remoting: input buffer budget exceeded")
	// ErrSlowConsumer: the connection's output stayed above the high-water
	// mark for serverSlowConsumerTimeoutMillis, or reached four times it.
	ErrSlowConsumer = errors.New("remoting: slow consumer")
	// ErrHeaderTooLarge: a frame announced a header above serverMaxHeaderBytes.
	ErrHeaderTooLarge = errors.New("remoting: header too large")
	// ErrTooManyFields: a header with more than serverMaxHeaderFields fields
	// (answered, not closed).
	ErrTooManyFields = errors.New("remoting: too many header fields")
)
