package controller

// JSON bodies as Apache's fastjson writes them (RemotingSerializable.encode):
// fields in alphabetical order, null fields left out, sets of ids as arrays.
// One difference: the member group's Map<Long,String> keys are quoted
// ({"1":"127.0.0.1:10911"}) where fastjson 1 and 2 leave them bare. Apache
// 5.5's mqadmin electMaster decodes the elect body as a BrokerMemberGroup,
// so fastjson2 skips the unknown brokerMemberGroup field, and its skipper
// refuses bare keys ("not support unquoted name"): the command fails
// against Apache's own controller after the election is done. Quoted keys
// are read by every Java reader (fastjson 1 in 5.3, fastjson2 in 5.5,
// brokers and tools) as Long keys.
//
//	SyncStateSet           {"syncStateSet":[1,2],"syncStateSetEpoch":3}
//	ElectMasterResponseBody {"brokerMemberGroup":{"brokerAddrs":{"1":"a"},"brokerName":"b","cluster":"c"},"syncStateSet":[1]}
//	BrokerReplicasInfo     {"replicasInfoTable":{"b":{"inSyncReplicas":[{"alive":true,"brokerAddress":"a","brokerId":1,"brokerName":"b"}],
//	                        "masterAddress":"a","masterBrokerId":1,"masterEpoch":1,"notInSyncReplicas":[],"syncStateSetEpoch":1}}}

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

func appendIDs(dst []byte, ids []int64) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, id, 10)
	}
	return append(dst, ']')
}

// appendString writes s as a JSON string the way fastjson does: quotes,
// backslashes and control characters escaped, nothing else.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return append(dst, '"')
}

// encodeSyncStateSet is SyncStateSet.encode().
func encodeSyncStateSet(ids []int64, epoch int32) []byte {
	b := append([]byte(nil), `{"syncStateSet":`...)
	b = appendIDs(b, ids)
	b = append(b, `,"syncStateSetEpoch":`...)
	b = strconv.AppendInt(b, int64(epoch), 10)
	return append(b, '}')
}

// memberGroup is BrokerMemberGroup.
type memberGroup struct {
	cluster, brokerName string
	ids                 []int64 // ascending
	addrs               map[int64]string
}

func appendMemberGroup(b []byte, g memberGroup) []byte {
	b = append(b, `{"brokerAddrs":{`...)
	for i, id := range g.ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '"', ':')
		b = appendString(b, g.addrs[id])
	}
	b = append(b, `},"brokerName":`...)
	b = appendString(b, g.brokerName)
	b = append(b, `,"cluster":`...)
	b = appendString(b, g.cluster)
	return append(b, '}')
}

// encodeElectBody is ElectMasterResponseBody.encode(); g nil leaves the
// member group out.
func encodeElectBody(g *memberGroup, set []int64) []byte {
	b := []byte{'{'}
	if g != nil {
		b = append(b, `"brokerMemberGroup":`...)
		b = appendMemberGroup(b, *g)
		b = append(b, ',')
	}
	b = append(b, `"syncStateSet":`...)
	b = appendIDs(b, set)
	return append(b, '}')
}

// replicaIdentity is BrokerReplicasInfo.ReplicaIdentity.
type replicaIdentity struct {
	brokerName string
	id         int64
	addr       string
	alive      bool
}

// replicasInfo is BrokerReplicasInfo.ReplicasInfo.
type replicasInfo struct {
	brokerName        string
	master            *int64
	masterAddr        string // "" = null
	masterEpoch       int32
	syncEpoch         int32
	inSync, notInSync []replicaIdentity
}

func appendIdentities(b []byte, rs []replicaIdentity) []byte {
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"alive":`...)
		b = strconv.AppendBool(b, r.alive)
		if r.addr != "" {
			b = append(b, `,"brokerAddress":`...)
			b = appendString(b, r.addr)
		}
		b = append(b, `,"brokerId":`...)
		b = strconv.AppendInt(b, r.id, 10)
		b = append(b, `,"brokerName":`...)
		b = appendString(b, r.brokerName)
		b = append(b, '}')
	}
	return append(b, ']')
}

// encodeReplicasInfo is BrokerReplicasInfo.encode(), sets in request order.
func encodeReplicasInfo(sets []replicasInfo) []byte {
	b := append([]byte(nil), `{"replicasInfoTable":{`...)
	for i, s := range sets {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s.brokerName)
		b = append(b, `:{"inSyncReplicas":`...)
		b = appendIdentities(b, s.inSync)
		if s.masterAddr != "" {
			b = append(b, `,"masterAddress":`...)
			b = appendString(b, s.masterAddr)
		}
		if s.master != nil {
			b = append(b, `,"masterBrokerId":`...)
			b = strconv.AppendInt(b, *s.master, 10)
		}
		b = append(b, `,"masterEpoch":`...)
		b = strconv.AppendInt(b, int64(s.masterEpoch), 10)
		b = append(b, `,"notInSyncReplicas":`...)
		b = appendIdentities(b, s.notInSync)
		b = append(b, `,"syncStateSetEpoch":`...)
		b = strconv.AppendInt(b, int64(s.syncEpoch), 10)
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// errNoBody is a request whose JSON body Apache dereferences without a check.
var errNoBody = errors.New("controller: request body is empty")

// syncStateSetBody is a decoded SyncStateSet body (ALTER_SYNC_STATE_SET).
type syncStateSetBody struct {
	SyncStateSet      []int64 `json:"syncStateSet"`
	SyncStateSetEpoch int32   `json:"syncStateSetEpoch"`
}

func decodeSyncStateSet(b []byte) (syncStateSetBody, error) {
	var s syncStateSetBody
	if len(b) == 0 {
		return s, errNoBody
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("controller: decode SyncStateSet: %w", err)
	}
	if s.SyncStateSet == nil {
		return s, errNoBody // Apache dereferences the missing set
	}
	return s, nil
}

// decodeBrokerNames decodes CONTROLLER_GET_SYNC_STATE_DATA's List<String>.
func decodeBrokerNames(b []byte) ([]string, error) {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("controller: decode broker names: %w", err)
	}
	return names, nil
}
