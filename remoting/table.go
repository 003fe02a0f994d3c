package remoting

import "strconv"

// HandlerFunc serves one request code; see Handler for the contract.
type HandlerFunc func(c *Conn, req *Command) *Command

// Table dispatches requests by code: the broker's (processor) and the name
// server's tables are each one of these. It is filled before the server
// starts and read-only afterwards.
type Table map[int32]HandlerFunc

// Serve implements Handler; a code without a handler gets Apache's
// REQUEST_CODE_NOT_SUPPORTED and remark.
func (t Table) Serve(c *Conn, req *Command) *Command {
	if h := t[req.Code]; h != nil {
		return h(c, req)
	}
	return NewResponse(req, RequestCodeNotSupported, " request type "+strconv.Itoa(int(req.Code))+" not supported")
}
