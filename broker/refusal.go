package broker

import "fmt"

// Refusal is a request the broker will not carry out, as the client is to
// be told: a Remoting response code and its remark (Apache's words where
// Apache refuses the same). Services return it, possibly wrapped; the
// processor answers it as is, in one place (processor/errors.go), so no
// remark is ever made by trimming an error's text. Err, when set, is the
// sentinel it stands for (errors.Is sees through a Refusal).
type Refusal struct {
	Code   int32
	Remark string
	Err    error
}

func (r *Refusal) Error() string { return r.Remark }
func (r *Refusal) Unwrap() error { return r.Err }

// refuse builds a Refusal standing for sentinel (may be nil).
func refuse(code int32, sentinel error, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Remark: fmt.Sprintf(format, args...), Err: sentinel}
}
