package processor

import (
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerFilter(t remoting.Table) {
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
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode check client body: "+err.Error())
	}
	if sd := b.SubscriptionData; sd != nil {
		if err := p.pulls.CheckFilter(sd.ExpressionType, sd.SubString); err != nil {
			return p.fail(req, err)
		}
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
