package processor

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// errorResponse is the translation point for errors no handler mapped to a
// specific code: a bad or missing header field is the client's fault and is
// answered SYSTEM_ERROR with the reason, as Apache's header decoder does;
// anything else is logged here, once, and answered SYSTEM_ERROR.
func errorResponse(log *zerolog.Logger, req *remoting.Command, err error) *remoting.Command {
	if !errors.Is(err, remoting.ErrMissingField) && !errors.Is(err, remoting.ErrBadField) {
		log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	}
	return remoting.NewResponse(req, remoting.SystemError, err.Error())
}
