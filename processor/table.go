package processor

import (
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// HandlerFunc serves one request code; see remoting.Handler for the contract.
type HandlerFunc func(c *remoting.Conn, req *remoting.Command) *remoting.Command

// Table dispatches requests by code. It is filled before the server starts and
// read-only afterwards.
type Table map[int32]HandlerFunc

// Serve implements remoting.Handler.
func (t Table) Serve(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if h := t[req.Code]; h != nil {
		return h(c, req)
	}
	return remoting.NewResponse(req, remoting.RequestCodeNotSupported,
		" request type "+strconv.Itoa(int(req.Code))+" not supported")
}
