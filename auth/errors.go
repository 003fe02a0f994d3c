package auth

import (
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// refuse is an AuthenticationException or AuthorizationException: the
// answer is NO_PERMISSION with its message (handleAuthException, the
// pipelines).
func refuse(msg string) *remoting.Refusal {
	return &remoting.Refusal{Code: remoting.NoPermission, Remark: msg}
}

// systemErrorRemark is handleAuthException's answer to anything else.
const systemErrorRemark = "An system error occurred, please try again later."

func systemError(err error) *remoting.Refusal {
	return &remoting.Refusal{Code: remoting.SystemError, Remark: systemErrorRemark, Err: err}
}

// errNoSubject is an ACL edit without a subject Apache can read: a
// NullPointerException there, answered as any other error.
var errNoSubject = systemError(nil)

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
