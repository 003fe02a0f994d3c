package remoting

import "fmt"

// Refusal is a request a server will not carry out, as the client is to
// be told: a Remoting response code and its remark (Apache's words where
// Apache refuses the same). Services return it, possibly wrapped; each
// front end answers it in one place (processor/errors.go for Remoting,
// proxy/status.go for gRPC), so no remark is ever made by trimming an
// error's text. Err, when set, is the sentinel it stands for (errors.Is
// sees through a Refusal).
type Refusal struct {
	Code   int32
	Remark string
	Err    error
}

func (r *Refusal) Error() string { return r.Remark }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse builds a Refusal standing for sentinel (may be nil).
func Refuse(code int32, sentinel error, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Remark: fmt.Sprintf(format, args...), Err: sentinel}
}

// FAQSuggestTodo is FAQUrl.suggestTodo of Apache's FAQ page, which Apache
// appends to its remarks about a missing topic or group.
const FAQSuggestTodo = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// FAQGroupNotExist is FAQUrl.suggestTodo(SUBSCRIPTION_GROUP_NOT_EXIST).
const FAQGroupNotExist = FAQSuggestTodo
