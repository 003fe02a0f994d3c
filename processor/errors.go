package processor

import (
	"errors"
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// errorCodes maps the owners' sentinel errors to Apache's response codes.
var errorCodes = [...]struct {
	err  error
	code int32
}{
	{broker.ErrGroupNotExist, remoting.SubscriptionGroupNotExist},
	{broker.ErrNoPermission, remoting.NoPermission},
	{broker.ErrTopicNotExist, remoting.TopicNotExist},
	{broker.ErrLookupFailed, remoting.SystemError},
	{broker.ErrConfigBlackListed, remoting.NoPermission},
}

// mappedError answers err with its code from errorCodes, if it has one. The
// remark drops the package prefix, as Apache's remarks have none.
func mappedError(req *remoting.Command, err error) (*remoting.Command, bool) {
	// A broker service's refusal carries its code and remark.
	var r *broker.Refusal
	if errors.As(err, &r) {
		return remoting.NewResponse(req, r.Code, r.Remark), true
	}
	// A refused name or queue count: INVALID_PARAMETER and the broker's
	// remark (Apache's where Apache refuses the same), whatever wraps it.
	var inv *broker.InvalidError
	if errors.As(err, &inv) {
		return remoting.NewResponse(req, remoting.InvalidParameter, inv.Remark), true
	}
	for _, m := range errorCodes {
		if errors.Is(err, m.err) {
			return remoting.NewResponse(req, m.code, strings.ReplaceAll(err.Error(), "broker: ", "")), true
		}
	}
	return nil, false
}

// errorResponse is the translation point for errors no handler mapped to a
// specific code: sentinels from errorCodes get theirs; a bad or missing header
// field is the client's fault and is answered SYSTEM_ERROR with the reason, as
// Apache's header decoder does; anything else is logged here, once, and
// answered SYSTEM_ERROR.
func errorResponse(log *zerolog.Logger, req *remoting.Command, err error) *remoting.Command {
	if resp, ok := mappedError(req, err); ok {
		return resp
	}
	if !errors.Is(err, remoting.ErrMissingField) && !errors.Is(err, remoting.ErrBadField) {
		log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	}
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}
