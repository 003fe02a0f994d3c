package compattest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

type garbageCase struct {
	name string
	data []byte
	// clientCloses: the client closes right after writing (truncated frame);
	// otherwise the server must close the connection by itself.
	clientCloses bool
}

func garbageCases() []garbageCase {
	be32 := func(v uint32) []byte {
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, v)
		return b
	}
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	valid := newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil)
	validHeader := valid.jsonHeader()
	validFrame := valid.encode()

	return []garbageCase{
		{name: "absurd_length_0x7fffffff", data: cat(be32(0x7fffffff), be32(uint32(len(validHeader))), validHeader)},
		{name: "absurd_length_0xffffffff", data: cat(be32(0xffffffff), be32(4), []byte("{}{}"))},
		{name: "length_0", data: cat(be32(0), be32(0))},
		{name: "length_2_lt_4", data: cat(be32(2), []byte{0, 0})},
		{name: "header_len_gt_frame", data: cat(be32(4+8), be32(1000), []byte("{\"code\":1"))[:16]},
		{name: "header_len_max_24bit", data: cat(be32(4+4), be32(0x00FFFFFF), []byte("{}{}"))},
		{name: "bad_json_header", data: frame(serializeJSON, []byte(`{"code":105,"opaque":`), nil)},
		{name: "non_json_garbage_header", data: frame(serializeJSON, []byte("\xff\xfe garbage \x00\x01"), []byte("body"))},
		{name: "unknown_serialize_type_5", data: frame(0x05, validHeader, nil)},
		{name: "truncated_frame_then_close", data: validFrame[:len(validFrame)/2], clientCloses: true},
		{name: "truncated_length_then_close", data: validFrame[:2], clientCloses: true},
	}
}

// expectServerClose reads until EOF/reset; a read deadline expiring means the
// server kept the connection open.
func expectServerClose(conn net.Conn, within time.Duration) error {
	_ = conn.SetReadDeadline(time.Now().Add(within))
	buf := make([]byte, 4096)
	got := 0
	for {
		n, err := conn.Read(buf)
		got += n
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("server did not close the connection within %s (read %d bytes meanwhile)", within, got)
		}
		return nil // EOF or connection reset: the server closed it
	}
}

// Scenario 9: malformed frames to BOTH servers.
func TestMalformedFrames(t *testing.T) {
	start := time.Now()
	c := sharedCluster(t)
	targets := []struct {
		name  string
		addr  string
		probe func() error
	}{
		{"namesrv", c.nsAddr, func() error {
			code, rd, remark, err := queryRoute(c.nsAddr, "TBW102")
			if err != nil {
				return err
			}
			if code != 0 || !rd.hasBroker(c.brokerAddr) {
				return fmt.Errorf("GET_ROUTEINFO_BY_TOPIC(105) TBW102 -> code %d remark %q", code, remark)
			}
			return nil
		}},
		{"broker", c.brokerAddr, func() error {
			_, err := getMaxOffset(c.brokerAddr, "TBW102", 0)
			return err
		}},
	}
	cases := 0
	for _, tg := range targets {
		for _, gc := range garbageCases() {
			t.Run(tg.name+"/"+gc.name, func(t *testing.T) {
				cases++
				conn, err := net.DialTimeout("tcp", tg.addr, 3*time.Second)
				if err != nil {
					t.Fatalf("dial %s: %v", tg.addr, err)
				}
				defer conn.Close()
				if _, err := conn.Write(gc.data); err != nil {
					t.Logf("write of %d garbage bytes: %v (server may have closed already)", len(gc.data), err)
				}
				if gc.clientCloses {
					conn.Close()
				} else if err := expectServerClose(conn, 5*time.Second); err != nil {
					t.Errorf("%s after %q (% x...): %v", tg.name, gc.name, head(gc.data), err)
				}
				if err := tg.probe(); err != nil {
					t.Fatalf("%s no longer answers a valid request on a new connection after %q: %v", tg.name, gc.name, err)
				}
			})
		}
	}
	if c.ns.exited() || c.broker.exited() {
		t.Fatalf("a server process exited during malformed-frame tests (namesrv=%v broker=%v)", c.ns.waitErr, c.broker.waitErr)
	}
	report(t, start, 0, 0, fmt.Sprintf("malformed_cases=%d", cases))
}

func head(b []byte) []byte {
	if len(b) > 12 {
		return b[:12]
	}
	return b
}

// Unknown request code -> REQUEST_CODE_NOT_SUPPORTED (3), same opaque,
// response flag set; the connection stays usable.
func TestUnknownRequestCode(t *testing.T) {
	start := time.Now()
	c := sharedCluster(t)
	for _, tg := range []struct{ name, addr string }{{"namesrv", c.nsAddr}, {"broker", c.brokerAddr}} {
		t.Run(tg.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", tg.addr, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := newRequest(9999, map[string]string{"x": "y"}, []byte("ignored"))
			resp, err := invokeOn(conn, req, 5*time.Second)
			if err != nil {
				t.Fatalf("%s: request code 9999: %v", tg.name, err)
			}
			if resp.Code != codeRequestCodeNotSupported {
				t.Errorf("%s: code 9999 -> response code %d, want 3 (REQUEST_CODE_NOT_SUPPORTED); %s", tg.name, resp.Code, resp)
			}
			if resp.Opaque != req.Opaque || !resp.isResponse() {
				t.Errorf("%s: response opaque=%d flag=%d, want opaque=%d and flag bit0 set", tg.name, resp.Opaque, resp.Flag, req.Opaque)
			}
			// Same connection still serves a valid request.
			var next *rawCmd
			if tg.name == "namesrv" {
				next = newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil)
			} else {
				next = newRequest(codeGetMaxOffset, map[string]string{"topic": "TBW102", "queueId": "0"}, nil)
			}
			r2, err := invokeOn(conn, next, 5*time.Second)
			if err != nil {
				t.Fatalf("%s: follow-up request code %d on same connection: %v", tg.name, next.Code, err)
			}
			if r2.Code != 0 {
				t.Errorf("%s: follow-up request code %d -> response code %d remark %q", tg.name, next.Code, r2.Code, r2.Remark)
			}
		})
	}
	report(t, start, 0, 0, "")
}
