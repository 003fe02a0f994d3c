package admin

import (
	"errors"

	"github.com/rocketgo/rocketgo/remoting"
)

// ErrMessageNotFound: an index query found no message.
var ErrMessageNotFound = errors.New("admin: message not found")

// QueryMessageRequest is QUERY_MESSAGE (QueryMessageRequestHeader): the
// messages of Topic indexed under Key (a KEYS token, or with UniqKey the
// client's message id, UNIQ_KEY) stored within [Begin, End] ms.
type QueryMessageRequest struct {
	Topic  string
	Key    string
	MaxNum int32
	Begin  int64
	End    int64
	// UniqKey is the request's _UNIQUE_KEY_QUERY flag
	// (MixAll.UNIQUE_MSG_QUERY_FLAG): MaxNum is then defaultQueryMaxNum.
	UniqKey bool
}

// QueryMessageResult is what QueryMessage found: the records as stored,
// concatenated (a copy), and the newest index file's end values, which the
// answer carries found or not.
type QueryMessageResult struct {
	Body                     []byte
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// QueryMessage is QUERY_MESSAGE (Apache's QueryMessageProcessor): at most
// min(maxNum, maxMsgsNumBatch) records. Nothing found is the refusal
// QUERY_NOT_FOUND with Apache's remark, returned with the result, whose
// index values the answer still carries.
func (s *Service) QueryMessage(r QueryMessageRequest) (QueryMessageResult, error) {
	maxNum := int(r.MaxNum)
	if r.UniqKey {
		maxNum = s.d.Config().DefaultQueryMaxNum
	}
	res := s.d.Store.QueryMessage(nil, r.Topic, r.Key, maxNum, r.Begin, r.End)
	out := QueryMessageResult{Body: res.Body, IndexLastUpdateTimestamp: res.IndexLastUpdateTimestamp,
		IndexLastUpdatePhyoffset: res.IndexLastUpdatePhyoffset}
	if res.Count == 0 {
		return out, remoting.Refuse(remoting.QueryNotFound, ErrMessageNotFound, "can not find message, maybe time range not correct")
	}
	return out, nil
}
