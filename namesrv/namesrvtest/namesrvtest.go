// Package namesrvtest holds name servers for tests: a fake that records
// registrations, and a real one on a free port.
package namesrvtest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/remoting"
)

// Namesrv records the topic tables REGISTER_BROKER brings it and answers
// every request SUCCESS.
type Namesrv struct {
	mu   sync.Mutex
	regs []map[string]namesrv.TopicConfig
}

// Serve is its remoting.Handler.
func (f *Namesrv) Serve(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if req.Code == remoting.RegisterBroker {
		rb, err := namesrv.DecodeRegisterBody(req.Body, req.Version)
		if err != nil {
			return remoting.NewResponse(req, remoting.SystemError, err.Error())
		}
		f.mu.Lock()
		f.regs = append(f.regs, rb.TopicConfigSerializeWrapper.TopicConfigTable)
		f.mu.Unlock()
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// Registrations are the topic tables registered so far, in order.
func (f *Namesrv) Registrations() []map[string]namesrv.TopicConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]namesrv.TopicConfig(nil), f.regs...)
}

// Start serves a fake name server on a free 127.0.0.1 port until the test
// ends and returns it with its address.
func Start(t testing.TB) (*Namesrv, string) {
	t.Helper()
	f := &Namesrv{}
	s := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1, Limits: remoting.DefaultLimits()}, f, zerolog.Nop())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return f, s.Addr()
}

// Run serves a real name server (Apache's defaults) on a free 127.0.0.1
// port, its kvConfig.json in a temporary folder, until the test ends.
func Run(t testing.TB) *namesrv.Server {
	t.Helper()
	cfg := namesrv.DefaultConfig()
	cfg.BindAddress, cfg.ListenPort = "127.0.0.1", 0
	cfg.KvConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	s, err := namesrv.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(s.Handlers()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}
