package processor

import (
	"github.com/rocketgo/rocketgo/remoting"
)

// completeSendReplies wraps the send handlers so that every answer to a send
// whose header decoded carries MSG_REGION and TRACE_ON, errors included:
// Apache's preSend adds both before any check (topic, permission, size), so
// its TOPIC_NOT_EXIST and MESSAGE_ILLEGAL answers have them. Only a header
// that does not decode gets a bare SYSTEM_ERROR. Found by TestReference.
func (p *brokerProcs) completeSendReplies(t Table) {
	for _, code := range []int32{remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage,
		remoting.SendReplyMessage, remoting.SendReplyMessageV2} {
		h := t[code]
		if h == nil {
			continue
		}
		t[code] = func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
			resp := h(c, req)
			if resp != nil && resp.Code != remoting.Success && sendHeaderDecodes(req) {
				if _, ok := resp.Lookup("MSG_REGION"); !ok {
					p.setSendExtras(resp)
				}
			}
			return resp
		}
	}
}

// sendHeaderDecodes reports whether the request carries every field Apache's
// header decoder requires (the long or the compact form).
func sendHeaderDecodes(req *remoting.Command) bool {
	required := sendRequiredV2[:]
	if req.Code == remoting.SendMessage || req.Code == remoting.SendReplyMessage {
		required = sendRequiredLong[:]
	}
	for _, k := range required {
		if _, ok := req.Lookup(k); !ok {
			return false
		}
	}
	return true
}

// The @CFNotNull fields of SendMessageRequestHeader and its compact V2 form.
var (
	sendRequiredLong = [...]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag"}
	sendRequiredV2 = [...]string{"a", "b", "c", "d", "e", "f", "g", "h"}
)
