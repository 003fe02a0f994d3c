package pop

import "github.com/rocketgo/rocketgo/remoting"

// Bounds of a pop's invisible time (ms), POP_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME alike: Apache's proxy bounds
// (ProxyConfig.maxInvisibleTimeMills, 12 h; no lower bound on a change).
// Apache's broker takes any long, so a negative time makes a message due
// before it was popped and 2^63-1 parks a checkpoint for ever; rocketgo's
// broker refuses both, whoever asks, the proxy included.
const (
	MinInvisibleTimeMillis = 0
	MaxInvisibleTimeMillis = 12 * 3600 * 1000
)

// checkInvisibleTime refuses an invisible time outside the bounds with
// INVALID_PARAMETER and the proxy's wording.
func checkInvisibleTime(ms int64) error {
	if ms < MinInvisibleTimeMillis {
		return remoting.Refuse(remoting.InvalidParameter, nil, "the invisibleTime is too small. min is %d", MinInvisibleTimeMillis)
	}
	if ms > MaxInvisibleTimeMillis {
		return remoting.Refuse(remoting.InvalidParameter, nil, "the invisibleTime is too large. max is %d", MaxInvisibleTimeMillis)
	}
	return nil
}
