package proxy

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/message"
)

// messageOf is GrpcConverter.buildMessage: a stored message as the SDKs
// receive it. receiptHandle, when not "", overrides POP_CK.
func messageOf(rec *message.Record, props map[string]string, receiptHandle string) *v2.Message {
	user := make(map[string]string, len(props))
	for k, v := range props {
		if !reservedProperties[k] {
			user[k] = v
		}
	}
	sp := &v2.SystemProperties{}
	if t, ok := props[message.PropTags]; ok {
		sp.Tag = &t
	}
	if k, ok := props[message.PropKeys]; ok {
		sp.Keys = strings.Split(k, " ")
	}
	id := props[message.PropUniqClientMessageID]
	if id == "" && rec.StoreHost.IsValid() {
		id = message.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset)
	}
	sp.MessageId = id
	sum := md5.Sum(rec.Body)
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_MD5, Checksum: strings.ToUpper(hex.EncodeToString(sum[:]))}
	sp.BodyEncoding = v2.Encoding_IDENTITY
	if rec.SysFlag&message.FlagCompressed != 0 {
		sp.BodyEncoding = v2.Encoding_GZIP
	}
	sp.MessageType = grpcType(message.KindOfMap(props))
	if p := message.ParsePriority(props[message.PropPriority]); p >= 0 {
		sp.Priority = &[]int32{int32(p)}[0]
	}
	sp.BornTimestamp = timestamppb.New(time.UnixMilli(rec.BornTimestamp))
	bornHost := props["__BORNHOST"]
	if strings.TrimSpace(bornHost) == "" && rec.BornHost.IsValid() {
		bornHost = rec.BornHost.String()
	}
	sp.BornHost = bornHost
	sp.StoreTimestamp = timestamppb.New(time.UnixMilli(rec.StoreTimestamp))
	if rec.StoreHost.IsValid() {
		sp.StoreHost = rec.StoreHost.String()
	}
	if sec := props[message.PropTimerDelaySec]; sec != "" {
		if n, err := strconv.ParseInt(sec, 10, 64); err == nil {
			sp.DeliveryTimestamp = timestamppb.New(time.Now().Add(time.Duration(n) * time.Second))
		}
	} else if ms := props[message.PropTimerDeliverMs]; ms != "" {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(n))
		}
	}
	if g, ok := props[message.PropShardingKey]; ok {
		sp.MessageGroup = &g
	}
	if l, ok := props[message.PropLiteTopic]; ok {
		sp.LiteTopic = &l
	}
	if receiptHandle == "" {
		receiptHandle = props[message.PropPopCK]
	}
	if receiptHandle != "" {
		sp.ReceiptHandle = &receiptHandle
	}
	sp.QueueId = rec.QueueID
	sp.QueueOffset = &rec.QueueOffset
	sp.DeliveryAttempt = &[]int32{rec.ReconsumeTimes + 1}[0]
	if tc, ok := props[message.PropTraceContext]; ok {
		sp.TraceContext = &tc
	}
	return &v2.Message{Topic: &v2.Resource{Name: rec.Topic}, UserProperties: user, SystemProperties: sp, Body: rec.Body}
}

// grpcType is GrpcConverter.convertToGrpcMessageType.
func grpcType(k message.Kind) v2.MessageType {
	switch k {
	case message.KindTransaction:
		return v2.MessageType_TRANSACTION
	case message.KindDelay:
		return v2.MessageType_DELAY
	case message.KindFIFO:
		return v2.MessageType_FIFO
	case message.KindPriority:
		return v2.MessageType_PRIORITY
	case message.KindLite:
		return v2.MessageType_LITE
	}
	return v2.MessageType_NORMAL
}
