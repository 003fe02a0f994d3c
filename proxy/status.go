package proxy

import (
	"context"
	"errors"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/remoting"
)

// The one translation point from broker answers and proxy checks to
// apache.rocketmq.v2.Code (Apache's ResponseBuilder / GrpcProxyException).

// refusal is a request the proxy answers with a v2 status instead of an RPC
// error (Apache's GrpcProxyException).
type refusal struct {
	code    v2.Code
	message string
}

func (r *refusal) Error() string { return r.code.String() + ": " + r.message }

func refuse(code v2.Code, msg string) error { return &refusal{code: code, message: msg} }

func okStatus() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: v2.Code_OK.String()} }

// statusOf turns err into the status Apache's ResponseBuilder.buildStatus(t)
// gives: a refusal keeps its code, a timeout is PROXY_TIMEOUT, a topic the
// name server does not know TOPIC_NOT_FOUND, anything else INTERNAL_SERVER_ERROR.
func statusOf(err error) *v2.Status {
	var r *refusal
	switch {
	case err == nil:
		return okStatus()
	case errors.As(err, &r):
		return &v2.Status{Code: r.code, Message: r.message}
	case errors.Is(err, errTopicNotFound):
		return &v2.Status{Code: v2.Code_TOPIC_NOT_FOUND, Message: err.Error()}
	case isTimeout(err):
		return &v2.Status{Code: v2.Code_PROXY_TIMEOUT, Message: err.Error()}
	default:
		return &v2.Status{Code: v2.Code_INTERNAL_SERVER_ERROR, Message: err.Error()}
	}
}

// codeOfRemoting maps a broker's Remoting response code to the v2 code as
// Apache's ResponseBuilder.buildCode does: six codes are mapped (and
// TOPIC_NOT_EXIST, which TopicRouteHelper.isTopicNotExistError catches
// first), everything else is INTERNAL_SERVER_ERROR with the broker's remark.
func codeOfRemoting(code int32) v2.Code {
	switch code {
	case remoting.Success:
		return v2.Code_OK
	case remoting.SystemBusy:
		return v2.Code_TOO_MANY_REQUESTS
	case remoting.RequestCodeNotSupported:
		return v2.Code_NOT_IMPLEMENTED
	case remoting.SubscriptionGroupNotExist:
		return v2.Code_CONSUMER_GROUP_NOT_FOUND
	case remoting.TopicNotExist:
		return v2.Code_TOPIC_NOT_FOUND
	case remoting.LmqQuotaExceeded:
		return v2.Code_LITE_TOPIC_QUOTA_EXCEEDED
	case remoting.LiteSubscriptionQuotaExceeded:
		return v2.Code_LITE_SUBSCRIPTION_QUOTA_EXCEEDED
	default:
		return v2.Code_INTERNAL_SERVER_ERROR
	}
}

// brokerRefusal wraps a broker's non-success answer.
func brokerRefusal(resp *remoting.Command) error {
	return refuse(codeOfRemoting(resp.Code), resp.Remark)
}

type timeout interface{ Timeout() bool }

func isTimeout(err error) bool {
	var t timeout
	if errors.As(err, &t) && t.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// codeMessageBodyEmpty is apache.rocketmq.v2.Code MESSAGE_BODY_EMPTY
// (41302), newer than the generated protos of the SDK module rocketgo uses.
const codeMessageBodyEmpty v2.Code = 41302
