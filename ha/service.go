package ha

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/store"
)

// CONTRACT SKELETON (issue #14): the API the broker wires against. The
// implementation replaces every body below; nothing here is done.

// Service is one broker's replication: as a master, the HA listener and its
// slaves; as a slave, the connection to the master.
type Service struct {
	cfg   Config
	store *store.Store
	log   zerolog.Logger
}

// Status is what the broker reports about replication (runtime info, the
// slave-read decision).
type Status struct {
	Role Role
	// Master side.
	MasterMaxOffset int64         // the store's max commit log offset
	Slaves          []SlaveStatus // connected slaves
	// Slave side.
	MasterHAAddr     string // where the slave connects ("" = unknown yet)
	Connected        bool   // the slave has a live connection to its master
	LastReadUnixMill int64  // when the slave last read from its master
}

// SlaveStatus is one connected slave as the master sees it.
type SlaveStatus struct {
	Addr      string
	AckOffset int64 // the slave's last reported max offset
}

// New makes the service for cfg.BrokerRole over st. listenAddr is the
// master's HA listener ("ip:port", port 0 picks one); ignored for a slave.
func New(cfg Config, listenAddr string, st *store.Store, log zerolog.Logger) (*Service, error) {
	return nil, errors.New("ha: not implemented")
}

// Start listens (master) or starts connecting (slave, once it knows its
// master). A SYNC_MASTER enables store.Replicated here.
func (s *Service) Start() error { return errors.New("ha: not implemented") }

// Shutdown closes the listener and every connection and waits for the
// goroutines.
func (s *Service) Shutdown(ctx context.Context) error { return nil }

// Addr is the master's bound HA listener address (tests listen on port 0).
func (s *Service) Addr() string { return "" }

// UpdateMasterAddress is the slave's master HA address from a name server's
// registration answer (haServerAddr); ignored when HAMasterAddress is set
// or the address is unchanged; "" disconnects.
func (s *Service) UpdateMasterAddress(addr string) {}

// Status is a snapshot of the replication state.
func (s *Service) Status() Status { return Status{Role: s.cfg.BrokerRole} }
