// Package remotingtest holds test helpers about Remoting answers, for the
// services' and the handlers' tests.
package remotingtest

import (
	"errors"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// WantRefusal fails t unless err is a *remoting.Refusal (whatever wraps
// it) with code and remark.
func WantRefusal(t testing.TB, err error, code int32, remark string) {
	t.Helper()
	var r *remoting.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("err %v, want a refusal %d", err, code)
	}
	if r.Code != code || r.Remark != remark {
		t.Fatalf("refusal %d %q, want %d %q", r.Code, r.Remark, code, remark)
	}
}
