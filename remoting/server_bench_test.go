package remoting

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// nopHandler answers every request with an empty SUCCESS.
type nopHandler struct{}

func (nopHandler) Serve(_ *Conn, req *Command) *Command { return NewResponse(req, Success, "") }

// BenchmarkServerPipelined measures the server's per-request cost over a real
// socket: one connection, batches of 64 pipelined requests shaped like a
// send's (a dozen header fields, 1 KiB body), answered inline. The client
// side allocates nothing, so allocs/op are the server's.
func BenchmarkServerPipelined(b *testing.B) { benchPipelined(b, nil) }

// BenchmarkServerPipelinedTLS is BenchmarkServerPipelined over TLS
// (permissive mode, self-signed certificate): the bridge's cost.
func BenchmarkServerPipelinedTLS(b *testing.B) {
	c := DefaultTLSConfig()
	c.Mode = TLSPermissive
	t, err := NewTLS(c, testutil.Logger())
	if err != nil {
		b.Fatal(err)
	}
	benchPipelined(b, t)
}

func benchPipelined(b *testing.B, t *TLS) {
	for _, ser := range []SerializeType{JSON, RocketMQ} {
		b.Run(ser.String(), func(b *testing.B) {
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1, TLS: t}, nopHandler{}, testutil.Logger())
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			var nc net.Conn
			var err error
			if t != nil {
				nc, err = tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true})
			} else {
				nc, err = net.Dial("tcp", s.Addr())
			}
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			const batch = 64
			req := &Command{Code: SendMessageV2, Opaque: 7, Serialize: ser, Body: make([]byte, 1024),
				ExtFields: Fields(map[string]string{
					"a": "PG", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "3", "f": "0", "g": "1700000000000", "h": "0",
					"i": "KEYS\x01k1\x02UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D0000\x02WAIT\x01true\x02", "j": "0", "k": "false", "m": "false",
				})}
			var out []byte
			for range batch {
				out = AppendFrame(out, req)
			}
			in := make([]byte, 64<<10)
			var lp [4]byte
			b.ReportAllocs()
			b.SetBytes(int64(len(out) / batch))
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				if _, err := nc.Write(out); err != nil {
					b.Fatal(err)
				}
				for range batch {
					if _, err := io.ReadFull(nc, lp[:]); err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(nc, in[:binary.BigEndian.Uint32(lp[:])]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
