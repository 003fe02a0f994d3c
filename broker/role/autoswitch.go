package role

// AutoSwitch HA in controller mode: the broker starts
// ha/autoswitch's Service on haListenPort instead of the classic one and
// drives it from the role changes (roleswitch.go): BecomeMaster before the
// master takes writes, BecomeSlave once the slave refuses them, the
// controller's SyncStateSet on every answer that carries a newer one.
// The Service asks the controller to change the set through the broker's
// replicas.Client (CONTROLLER_ALTER_SYNC_STATE_SET 1001) and drives
// store.Replicated; a SYNC_MASTER send asks it first whether to wait for
// replicas at all (SendNeedsReplicas, through ReplicaNeed).
//
// A slave follows its master's HA address: the controller names the
// master's remoting address only, so the slave reads the master's
// brokerIP2 and haListenPort from GET_BROKER_CONFIG (26); when the master
// does not answer, it assumes Apache's default, listenPort+1 on the
// master's host (Apache learns the address from the name servers'
// registration answers instead, which lag behind a failover).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/ha/autoswitch"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// autoReplicator is what controller mode uses of autoswitch.Service.
type autoReplicator interface {
	Replicator
	BecomeMaster(epoch int32, selfID int64, syncStateSet []int64, setEpoch int32) error
	BecomeSlave(masterHAAddr string, masterEpoch int32, selfID int64) error
	SyncStateSetChanged(set []int64, setEpoch int32)
	ConfirmOffset() int64
	SendNeedsReplicas() (bool, error)
}

var _ autoReplicator = (*autoswitch.Service)(nil)

// autoswitchConfig is the Service's configuration: the broker's keys
// (Config.Controller.AutoSwitch), and the controller asked to change the
// SyncStateSet through the role's client.
func (s *Service) autoswitchConfig(cfg *Config) autoswitch.Config {
	ac := cfg.Controller.AutoSwitch
	brokerName := cfg.BrokerName
	ac.AlterSyncStateSet = func(masterID int64, masterEpoch int32, set []int64, setEpoch int32) ([]int64, int32, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.ctrl.client.AlterSyncStateSet(ctx, brokerName, masterID, masterEpoch, set, setEpoch)
	}
	return ac
}

// startAutoSwitch makes and starts the Service (StartHA, after the store).
func (s *Service) startAutoSwitch(cfg *Config) error {
	svc, err := autoswitch.New(s.autoswitchConfig(cfg), cfg.HAListen, s.d.Store, s.ctrl.epochs, s.root)
	if err != nil {
		return fmt.Errorf("broker: autoswitch ha: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("broker: start autoswitch ha: %w", err)
	}
	s.repl.svc = svc
	s.ctrl.auto = svc
	s.log.Info().Str("haListen", svc.Addr()).Msg("autoswitch replication started")
	return nil
}

// masterHAAddr is the HA address of the master whose remoting address is
// addr: its brokerIP2:haListenPort (GET_BROKER_CONFIG), else
// host:listenPort+1.
func (s *Service) masterHAAddr(addr string, log zerolog.Logger) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := s.client.Invoke(ctx, addr, remoting.NewRequest(remoting.GetBrokerConfig, nil, nil))
	if err == nil && resp.Code == remoting.Success {
		if ha := haAddrFromProperties(resp.Body, addr); ha != "" {
			return ha
		}
	}
	host, port, splitErr := net.SplitHostPort(addr)
	p, convErr := strconv.Atoi(port)
	if splitErr != nil || convErr != nil {
		return addr
	}
	guess := net.JoinHostPort(host, strconv.Itoa(p+1))
	log.Warn().Err(err).Str("masterAddr", addr).Str("masterHAAddr", guess).
		Msg("master's configuration not read: its HA address assumed at listenPort+1")
	return guess
}

// haAddrFromProperties reads brokerIP2 (else the host of addr) and
// haListenPort (0: listenPort+1) from a GET_BROKER_CONFIG body.
func haAddrFromProperties(body []byte, addr string) string {
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	port, _ := strconv.Atoi(kv["haListenPort"])
	if port <= 0 {
		lp, err := strconv.Atoi(kv["listenPort"])
		if err != nil || lp <= 0 {
			return ""
		}
		port = lp + 1
	}
	host := kv["brokerIP2"]
	if host == "" {
		host = kv["brokerIP1"]
	}
	if host == "" {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			return ""
		}
		host = h
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// masterRole is the brokerRole a controller-mode master serves with:
// SYNC_MASTER as Apache sets it, whose acknowledgements the Service
// drives; ASYNC_MASTER without one.
func (c *controlled) masterRole() ha.Role {
	if c.auto != nil {
		return ha.SyncMaster
	}
	return ha.AsyncMaster
}

// confirmOffset is what the heartbeats report.
func (c *controlled) confirmOffset(st *store.Store) int64 {
	if c.auto != nil {
		return c.auto.ConfirmOffset()
	}
	return st.MaxPhyOffset()
}

// ReplicaNeed is a controller-mode SYNC_MASTER send's durability, decided
// before the append as Apache's CommitLog decides it: a message that does
// not wait for the store (WAIT false) is not checked; a SyncStateSet
// smaller than minInSyncReplicas refuses the send (SYSTEM_ERROR, nothing
// stored); when the acks needed are the master's alone, the send does not
// wait for replicas. Outside controller mode need stands.
func (s *Service) ReplicaNeed(need store.Durability, props string) (store.Durability, error) {
	if s.ctrl == nil {
		return need, nil
	}
	return s.ctrl.replicaNeed(need, props)
}

func (c *controlled) replicaNeed(need store.Durability, props string) (store.Durability, error) {
	if c.auto == nil || message.Property(props, message.PropWaitStoreMsgOK) == "false" {
		return need, nil
	}
	wait, err := c.auto.SendNeedsReplicas()
	if err != nil {
		return 0, remoting.Refuse(remoting.SystemError, err, "in-sync replicas not enough")
	}
	if !wait {
		need &^= store.Replicated
	}
	return need, nil
}
