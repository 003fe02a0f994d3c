package processor

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// errorCodes maps sentinel errors that services still return bare to
// Apache's response code and remark. A service refuses with a
// broker.Refusal; this table shrinks as the remaining ones do too.
var errorCodes = [...]struct {
	err    error
	code   int32
	remark string
}{
	{broker.ErrConfigBlackListed, remoting.NoPermission, "Can not update config in black list."},
}

// mappedError answers err with its code and remark: a broker.Refusal's
// (whatever wraps it), else errorCodes'. No remark is made from an error's
// text.
func mappedError(req *remoting.Command, err error) (*remoting.Command, bool) {
	var r *broker.Refusal
	if errors.As(err, &r) {
		return remoting.NewResponse(req, r.Code, r.Remark), true
	}
	for _, m := range errorCodes {
		if errors.Is(err, m.err) {
			return remoting.NewResponse(req, m.code, m.remark), true
		}
	}
	return nil, false
}

// errorResponse is the one translation point of errors to answers: a
// refusal or a mapped sentinel gets its code and remark; a bad or missing
// header field is the client's fault and is answered SYSTEM_ERROR with the
// reason, as Apache's header decoder does; anything else is logged here,
// once, and answered SYSTEM_ERROR.
func errorResponse(log *zerolog.Logger, req *remoting.Command, err error) *remoting.Command {
	if resp, ok := mappedError(req, err); ok {
		return resp
	}
	if !errors.Is(err, remoting.ErrMissingField) && !errors.Is(err, remoting.ErrBadField) {
		log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	}
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}
