package namesrv

// Compressed RegisterBrokerBody (REGISTER_BROKER with header compressed=true,
// Apache's RegisterBrokerBody.encode(true)): a zlib stream (Java's
// DeflaterOutputStream) of big-endian int32 lengths and counts:
//
//	int32 n, n bytes    DataVersion JSON {"counter":..,"stateVersion":..,"timestamp":..}
//	int32 topics
//	  topics × (int32 n, n bytes)  TopicConfig.encode():
//	                    "name readQueueNums writeQueueNums perm topicFilterType [attributes JSON]"
//	int32 n, n bytes    filterServerList JSON (["ip:port",...])
//	int32 m             5.x: topic queue mapping infos, m × (int32 n, n bytes JSON)
//
// topicSysFlag and order are not carried (they decode as 0 / false), as in
// Apache. The mapping infos are not read: rocketgo has no static topics.
//
// Outside bytes: every length is checked against what is left of the
// inflated budget before anything is allocated, so a deflate bomb or a
// length of 2^31-1 costs at most the budget, never more memory.

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxRegisterBodyInflated is the default inflated-size budget of a
// compressed registration (namesrv key registerBodyMaxInflatedBytes).
const DefaultMaxRegisterBodyInflated = 64 << 20

// IsZlib reports whether body starts with a zlib header (deflate, valid
// check bits). A JSON body starts with '{' or white space, never with it.
func IsZlib(body []byte) bool {
	return len(body) >= 2 && body[0]&0x0f == 8 && body[0]>>4 <= 7 &&
		(uint16(body[0])<<8|uint16(body[1]))%31 == 0
}

type inflater struct {
	r    io.Reader
	left int64 // inflated bytes still allowed
	buf  []byte
}

func (in *inflater) bytes(n int64, what string) ([]byte, error) {
	if n < 0 || n > in.left {
		return nil, fmt.Errorf("%w: register broker: %s length %d exceeds the %d bytes left of the inflated budget",
			ErrBadBody, what, n, in.left)
	}
	in.left -= n
	if int64(cap(in.buf)) < n {
		in.buf = make([]byte, n)
	}
	b := in.buf[:n]
	if _, err := io.ReadFull(in.r, b); err != nil {
		return nil, fmt.Errorf("%w: register broker: read %s: %v", ErrBadBody, what, err)
	}
	return b, nil
}

func (in *inflater) int32(what string) (int64, error) {
	b, err := in.bytes(4, what)
	if err != nil {
		return 0, err
	}
	return int64(int32(binary.BigEndian.Uint32(b))), nil
}

// DecodeCompressedRegisterBody decodes a compressed RegisterBrokerBody,
// inflating at most maxInflated bytes.
func DecodeCompressedRegisterBody(body []byte, maxInflated int64) (RegisterBody, error) {
	zr, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return RegisterBody{}, fmt.Errorf("%w: register broker: %v", ErrBadBody, err)
	}
	defer zr.Close()
	in := &inflater{r: zr, left: maxInflated}
	var rb RegisterBody
	n, err := in.int32("data version")
	if err != nil {
		return RegisterBody{}, err
	}
	b, err := in.bytes(n, "data version")
	if err != nil {
		return RegisterBody{}, err
	}
	if err := json.Unmarshal(b, &rb.TopicConfigSerializeWrapper.DataVersion); err != nil {
		return RegisterBody{}, fmt.Errorf("%w: register broker: data version: %v", ErrBadBody, err)
	}
	topics, err := in.int32("topic count")
	if err != nil {
		return RegisterBody{}, err
	}
	if topics < 0 || topics > in.left/4 { // each topic costs at least its length field
		return RegisterBody{}, fmt.Errorf("%w: register broker: %d topics", ErrBadBody, topics)
	}
	table := make(map[string]TopicConfig, min(topics, 1<<16))
	for i := int64(0); i < topics; i++ {
		if n, err = in.int32("topic config"); err != nil {
			return RegisterBody{}, err
		}
		if b, err = in.bytes(n, "topic config"); err != nil {
			return RegisterBody{}, err
		}
		tc, err := decodeTopicConfigLine(b)
		if err != nil {
			return RegisterBody{}, err
		}
		table[tc.TopicName] = tc
	}
	rb.TopicConfigSerializeWrapper.TopicConfigTable = table
	if n, err = in.int32("filter server list"); err != nil {
		return RegisterBody{}, err
	}
	if b, err = in.bytes(n, "filter server list"); err != nil {
		return RegisterBody{}, err
	}
	// Apache logs an undecodable list and goes on with an empty one.
	if json.Unmarshal(b, &rb.FilterServerList) != nil || rb.FilterServerList == nil {
		rb.FilterServerList = []string{}
	}
	return rb, nil
}

// decodeTopicConfigLine parses TopicConfig.encode() as TopicConfig.decode
// does: at least five space-separated fields, integers, a known filter type;
// the attributes (sixth field) are not kept by the name server.
func decodeTopicConfigLine(b []byte) (TopicConfig, error) {
	f := strings.SplitN(string(b), " ", 6)
	if len(f) < 5 || f[0] == "" {
		return TopicConfig{}, fmt.Errorf("%w: register broker: topic config %.64q", ErrBadBody, b)
	}
	var n [3]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 32)
		if err != nil {
			return TopicConfig{}, fmt.Errorf("%w: register broker: topic config %.64q: %v", ErrBadBody, b, err)
		}
		n[i] = v
	}
	if f[4] != "SINGLE_TAG" && f[4] != "MULTI_TAG" {
		return TopicConfig{}, fmt.Errorf("%w: register broker: topic config %.64q: filter type", ErrBadBody, b)
	}
	return TopicConfig{TopicName: f[0], ReadQueueNums: int32(n[0]), WriteQueueNums: int32(n[1]), Perm: int32(n[2])}, nil
}
