package processor

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// mappedError answers a broker.Refusal (whatever wraps it) with its code
// and remark: services refuse only that way, so this is the whole error
// table. No remark is made from an error's text.
func mappedError(req *remoting.Command, err error) (*remoting.Command, bool) {
	var r *remoting.Refusal
	if errors.As(err, &r) {
		return remoting.NewResponse(req, r.Code, r.Remark), true
	}
	return nil, false
}

// errorResponse is the one translation point of errors to answers: a
// refusal gets its code and remark; a bad or missing header field is the
// client's fault and is answered SYSTEM_ERROR with the reason, as Apache's
// header decoder does; anything else is logged here, once, and answered
// SYSTEM_ERROR.
func errorResponse(log *zerolog.Logger, req *remoting.Command, err error) *remoting.Command {
	if resp, ok := mappedError(req, err); ok {
		return resp
	}
	if !errors.Is(err, remoting.ErrMissingField) && !errors.Is(err, remoting.ErrBadField) {
		log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	}
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}
