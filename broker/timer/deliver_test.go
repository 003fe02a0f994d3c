package timer

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

func TestTransientDelivery(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("reput: %w", store.ErrClosed), true},
		{store.ErrNotStarted, true},
		{fmt.Errorf("put T: %w", store.ErrDiskFull), true},
		{fmt.Errorf("map: %w", syscall.ENOMEM), true},
		{fmt.Errorf("open: %w", syscall.EMFILE), true},
		{fmt.Errorf("put: %w", store.ErrTopicTooLong), false},
		{fmt.Errorf("put: %w", store.ErrPropertiesTooLarge), false},
		{fmt.Errorf("put: %w", store.ErrMessageTooLarge), false},
		{fmt.Errorf("reput: %w", message.ErrTopicInvalid), false},
		{errors.New("reput record at 5: staged message without REAL_TOPIC"), false},
		{store.ErrNotFound, false},
		{errors.New("anything else"), false},
	} {
		if got := transientDelivery(tc.err); got != tc.want {
			t.Errorf("transientDelivery(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	var r retryState
	var last int64
	for i := 0; i < 12; i++ {
		at := r.failed(1000)
		if at-1000 < last || at-1000 > retryMax.Milliseconds() {
			t.Fatalf("attempt %d: pause %d ms after %d", i, at-1000, last)
		}
		last = at - 1000
	}
	if last != retryMax.Milliseconds() {
		t.Errorf("pause capped at %d ms, want %d", last, retryMax.Milliseconds())
	}
	if r.ok(); r.at != 0 || r.fails != 0 {
		t.Errorf("ok left %+v", r)
	}
}
