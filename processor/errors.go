package processor

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// fail answers req with code and the error's text as remark.
func fail(req *remoting.Command, code int32, err error) *remoting.Command {
	return remoting.NewResponse(req, code, err.Error())
}

// errorResponse is the one translation point from errors to response codes.
// Header errors become SYSTEM_ERROR with the Java decoder's kind of remark;
// unknown errors are logged here, once.
func errorResponse(log *zerolog.Logger, req *remoting.Command, err error) *remoting.Command {
	for _, m := range errorCodes {
		if errors.Is(err, m.err) {
			return fail(req, m.code, err)
		}
	}
	if errors.Is(err, remoting.ErrMissingField) || errors.Is(err, remoting.ErrBadField) {
		return fail(req, remoting.SystemError, err)
	}
	log.Error().Err(err).Int32("code", req.Code).Msg("request failed")
	return fail(req, remoting.SystemError, err)
}

// errorCodes maps sentinel errors of the owning packages to response codes;
// filled by the files that know those packages.
var errorCodes []struct {
	err  error
	code int32
}
