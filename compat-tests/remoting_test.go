package compattest

// A tiny, independent RocketMQ remoting client used for readiness checks,
// route / offset queries and malformed-frame tests.
//
// Frame: [int32 length][int32 (serializeType<<24 | headerLen)][header][body]
// where length counts everything after itself.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

const (
	codeGetRouteInfoByTopic     = 105
	codeQueryConsumerOffset     = 14
	codeGetMaxOffset            = 30
	codeGetConsumerListByGroup  = 38
	codeHeartbeat               = 34
	codeRequestCodeNotSupported = 3
	codeTopicNotExist           = 17

	serializeJSON     = 0
	serializeRocketMQ = 1
)

var rawOpaque atomic.Int32

func init() { rawOpaque.Store(1_000_000) }

type rawCmd struct {
	Code          int
	Language      string
	Version       int
	Opaque        int32
	Flag          int
	Remark        string
	ExtFields     map[string]string
	Body          []byte
	SerializeType byte
	HeaderRaw     []byte
}

func (c *rawCmd) isResponse() bool { return c.Flag&1 == 1 }

func newRequest(code int, ext map[string]string, body []byte) *rawCmd {
	return &rawCmd{Code: code, Language: "GO", Version: 317, Opaque: rawOpaque.Add(1), ExtFields: ext, Body: body}
}

func (c *rawCmd) String() string {
	return fmt.Sprintf("{code=%d opaque=%d flag=%d remark=%q ext=%v bodyLen=%d ser=%d}",
		c.Code, c.Opaque, c.Flag, c.Remark, c.ExtFields, len(c.Body), c.SerializeType)
}

func (c *rawCmd) jsonHeader() []byte {
	h := map[string]any{
		"code":     c.Code,
		"language": c.Language,
		"version":  c.Version,
		"opaque":   c.Opaque,
		"flag":     c.Flag,
	}
	if c.Remark != "" {
		h["remark"] = c.Remark
	}
	if c.ExtFields != nil {
		h["extFields"] = c.ExtFields
	}
	b, _ := json.Marshal(h)
	return b
}

// frame builds a frame with an arbitrary serialize-type byte and header bytes.
func frame(serType byte, header, body []byte) []byte {
	buf := make([]byte, 8, 8+len(header)+len(body))
	binary.BigEndian.PutUint32(buf[0:], uint32(4+len(header)+len(body)))
	binary.BigEndian.PutUint32(buf[4:], uint32(serType)<<24|uint32(len(header)))
	buf = append(buf, header...)
	return append(buf, body...)
}

func (c *rawCmd) encode() []byte { return frame(serializeJSON, c.jsonHeader(), c.Body) }

const maxRawFrame = 64 << 20

func readFrame(r io.Reader) (*rawCmd, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if n < 4 || n > maxRawFrame {
		return nil, fmt.Errorf("bad frame length %d from server", n)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("reading %d-byte frame: %w", n, err)
	}
	word := binary.BigEndian.Uint32(data[:4])
	ser := byte(word >> 24)
	hlen := int(word & 0xFFFFFF)
	if hlen > len(data)-4 {
		return nil, fmt.Errorf("server frame header length %d > frame %d", hlen, len(data)-4)
	}
	header := data[4 : 4+hlen]
	cmd := &rawCmd{SerializeType: ser, HeaderRaw: header, Body: data[4+hlen:]}
	switch ser {
	case serializeJSON:
		if err := decodeJSONHeader(header, cmd); err != nil {
			return nil, fmt.Errorf("server JSON header %q: %w", header, err)
		}
	case serializeRocketMQ:
		if err := decodeRocketMQHeader(header, cmd); err != nil {
			return nil, fmt.Errorf("server ROCKETMQ header: %w", err)
		}
	default:
		return nil, fmt.Errorf("server used unknown serialize type %d", ser)
	}
	return cmd, nil
}

func decodeJSONHeader(h []byte, cmd *rawCmd) error {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(h))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return err
	}
	num := func(k string) int64 {
		switch v := m[k].(type) {
		case json.Number:
			i, _ := v.Int64()
			return i
		case string:
			i, _ := strconv.ParseInt(v, 10, 64)
			return i
		}
		return 0
	}
	cmd.Code = int(num("code"))
	cmd.Version = int(num("version"))
	cmd.Opaque = int32(num("opaque"))
	cmd.Flag = int(num("flag"))
	cmd.Language = fmt.Sprint(m["language"])
	if r, ok := m["remark"].(string); ok {
		cmd.Remark = r
	}
	if ext, ok := m["extFields"].(map[string]any); ok {
		cmd.ExtFields = make(map[string]string, len(ext))
		for k, v := range ext {
			cmd.ExtFields[k] = fmt.Sprint(v)
		}
	}
	return nil
}

func decodeRocketMQHeader(h []byte, cmd *rawCmd) error {
	r := bytes.NewReader(h)
	var (
		code    int16
		lang    byte
		version int16
		opaque  int32
		flag    int32
		rlen    int32
	)
	for _, v := range []any{&code, &lang, &version, &opaque, &flag, &rlen} {
		if err := binary.Read(r, binary.BigEndian, v); err != nil {
			return err
		}
	}
	cmd.Code, cmd.Language, cmd.Version, cmd.Opaque, cmd.Flag = int(code), strconv.Itoa(int(lang)), int(version), opaque, int(flag)
	if rlen > 0 {
		b := make([]byte, rlen)
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		cmd.Remark = string(b)
	}
	var elen int32
	if err := binary.Read(r, binary.BigEndian, &elen); err != nil {
		return err
	}
	cmd.ExtFields = map[string]string{}
	lr := io.LimitReader(r, int64(elen))
	for {
		var kl int16
		if err := binary.Read(lr, binary.BigEndian, &kl); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		k := make([]byte, kl)
		if _, err := io.ReadFull(lr, k); err != nil {
			return err
		}
		var vl int32
		if err := binary.Read(lr, binary.BigEndian, &vl); err != nil {
			return err
		}
		v := make([]byte, vl)
		if _, err := io.ReadFull(lr, v); err != nil {
			return err
		}
		cmd.ExtFields[string(k)] = string(v)
	}
}

// invokeOn sends req on an open connection and returns the response with the
// same opaque (server-initiated requests in between are skipped).
func invokeOn(conn net.Conn, req *rawCmd, timeout time.Duration) (*rawCmd, error) {
	_ = conn.SetDeadline(time.Now().Add(timeout))
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write(req.encode()); err != nil {
		return nil, fmt.Errorf("write request code %d: %w", req.Code, err)
	}
	for {
		resp, err := readFrame(conn)
		if err != nil {
			return nil, fmt.Errorf("request code %d: reading response: %w", req.Code, err)
		}
		if resp.isResponse() && resp.Opaque == req.Opaque {
			return resp, nil
		}
	}
}

// rawInvoke dials addr, sends one request and returns the response.
func rawInvoke(addr string, req *rawCmd, timeout time.Duration) (*rawCmd, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return invokeOn(conn, req, timeout)
}

// ---------------------------------------------------------------------------
// typed helpers

type queueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
}

type routeData struct {
	raw     string
	queues  []queueData
	brokers map[string]map[int64]string // brokerName -> id -> addr
}

func (r *routeData) hasBroker(addr string) bool {
	if r == nil {
		return false
	}
	for _, ids := range r.brokers {
		for _, a := range ids {
			if a == addr {
				return true
			}
		}
	}
	return false
}

func (r *routeData) writeQueues() int {
	n := 0
	for _, q := range r.queues {
		n += q.WriteQueueNums
	}
	return n
}

func (r *routeData) readQueues() int {
	n := 0
	for _, q := range r.queues {
		n += q.ReadQueueNums
	}
	return n
}

// parseRoute decodes a TopicRouteData body the way the Go client does
// (tolerating Java-style unquoted numeric keys in brokerAddrs).
func parseRoute(body []byte) (*routeData, error) {
	rd := &routeData{raw: string(body), brokers: map[string]map[int64]string{}}
	res := gjson.ParseBytes(body)
	if err := json.Unmarshal([]byte(res.Get("queueDatas").Raw), &rd.queues); err != nil {
		return rd, fmt.Errorf("queueDatas: %w (body %s)", err, body)
	}
	for _, bd := range res.Get("brokerDatas").Array() {
		name := bd.Get("brokerName").String()
		addrs := map[int64]string{}
		raw := strings.TrimSpace(bd.Get("brokerAddrs").Raw)
		if len(raw) >= 2 {
			for _, kv := range strings.Split(raw[1:len(raw)-1], ",") {
				i := strings.Index(kv, ":")
				if i < 0 {
					continue
				}
				id, _ := strconv.ParseInt(strings.Trim(strings.TrimSpace(kv[:i]), `"`), 10, 64)
				addrs[id] = strings.Trim(strings.TrimSpace(kv[i+1:]), `"`)
			}
		}
		rd.brokers[name] = addrs
	}
	return rd, nil
}

// queryRoute sends GET_ROUTEINFO_BY_TOPIC (105) to the namesrv.
func queryRoute(nsAddr, topic string) (code int, rd *routeData, remark string, err error) {
	resp, err := rawInvoke(nsAddr, newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": topic}, nil), 3*time.Second)
	if err != nil {
		return 0, nil, "", err
	}
	if resp.Code != 0 {
		return resp.Code, nil, resp.Remark, nil
	}
	rd, err = parseRoute(resp.Body)
	return 0, rd, resp.Remark, err
}

// queryConsumerOffset sends QUERY_CONSUMER_OFFSET (14) to the broker.
func queryConsumerOffset(brokerAddr, group, topic string, queueID int) (code int, offset int64, err error) {
	resp, err := rawInvoke(brokerAddr, newRequest(codeQueryConsumerOffset, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queueID),
	}, nil), 3*time.Second)
	if err != nil {
		return 0, 0, err
	}
	if resp.Code != 0 {
		return resp.Code, -1, nil
	}
	offset, err = strconv.ParseInt(resp.ExtFields["offset"], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("QUERY_CONSUMER_OFFSET response has no numeric offset: %s", resp)
	}
	return 0, offset, nil
}

// getMaxOffset sends GET_MAX_OFFSET (30) to the broker.
func getMaxOffset(brokerAddr, topic string, queueID int) (int64, error) {
	resp, err := rawInvoke(brokerAddr, newRequest(codeGetMaxOffset, map[string]string{
		"topic": topic, "queueId": strconv.Itoa(queueID),
	}, nil), 3*time.Second)
	if err != nil {
		return 0, err
	}
	if resp.Code != 0 {
		return 0, fmt.Errorf("GET_MAX_OFFSET(30) %s/%d -> code %d remark %q", topic, queueID, resp.Code, resp.Remark)
	}
	return strconv.ParseInt(resp.ExtFields["offset"], 10, 64)
}

// consumerList sends GET_CONSUMER_LIST_BY_GROUP (38) to the broker.
func consumerList(brokerAddr, group string) ([]string, error) {
	resp, err := rawInvoke(brokerAddr, newRequest(codeGetConsumerListByGroup, map[string]string{"consumerGroup": group}, nil), 3*time.Second)
	if err != nil {
		return nil, err
	}
	if resp.Code != 0 {
		return nil, fmt.Errorf("GET_CONSUMER_LIST_BY_GROUP(38) %s -> code %d remark %q", group, resp.Code, resp.Remark)
	}
	var ids []string
	for _, v := range gjson.GetBytes(resp.Body, "consumerIdList").Array() {
		ids = append(ids, v.String())
	}
	return ids, nil
}
