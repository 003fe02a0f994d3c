package processor

import (
	"strings"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerFilter(t Table) {
	t[remoting.CheckClientConfig] = p.checkClientConfig
}

// checkClientBody is CheckClientRequestBody.
type checkClientBody struct {
	ClientID         string `json:"clientId"`
	Group            string `json:"group"`
	SubscriptionData *struct {
		Topic          string `json:"topic"`
		SubString      string `json:"subString"`
		ExpressionType string `json:"expressionType"`
	} `json:"subscriptionData"`
}

// checkClientConfig serves CHECK_CLIENT_CONFIG (46): Java consumers with a
// non-TAG subscription ask before starting whether the broker can filter it.
func (p *brokerProcs) checkClientConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b checkClientBody
	if err := jsoniter.Unmarshal(req.Body, &b); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode check client body: "+err.Error())
	}
	sd := b.SubscriptionData
	if sd == nil || isTagType(sd.ExpressionType) {
		return remoting.NewResponse(req, remoting.Success, "")
	}
	if !strings.EqualFold(sd.ExpressionType, "SQL92") || !p.b.Config().EnablePropertyFilter {
		return sql92Unsupported(req)
	}
	if _, err := p.b.Filters.Compile(sd.SubString); err != nil {
		return remoting.NewResponse(req, remoting.SubscriptionParseFailed, err.Error())
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
