package controller

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// Header decoders. Apache's decodeCommandCustomHeader throws on a missing
// @CFNotNull field or a number that does not parse, and its handlers throw
// on the nulls they dereference; both answer SYSTEM_ERROR. These return
// errors wrapping remoting.ErrMissingField / ErrBadField for those cases.

// optInt64 parses an optional Long field: nil when absent.
func optInt64(req *remoting.Command, key string) (*int64, error) {
	v, ok := req.Lookup(key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q", remoting.ErrBadField, key, v)
	}
	return &n, nil
}

// optInt32 parses an optional Integer field: nil when absent.
func optInt32(req *remoting.Command, key string) (*int32, error) {
	v, ok := req.Lookup(key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q", remoting.ErrBadField, key, v)
	}
	m := int32(n)
	return &m, nil
}

// checkLong parses an optional primitive long only to refuse one that does
// not parse (invokeTime).
func checkLong(req *remoting.Command, key string) error {
	_, err := optInt64(req, key)
	return err
}

type alterRequest struct {
	BrokerName  string
	MasterID    *int64
	MasterEpoch *int32
	Body        syncStateSetBody
}

func decodeAlter(req *remoting.Command) (alterRequest, error) {
	var a alterRequest
	var err error
	if a.MasterID, err = optInt64(req, "masterBrokerId"); err != nil {
		return a, err
	}
	if a.MasterEpoch, err = optInt32(req, "masterEpoch"); err != nil {
		return a, err
	}
	if err = checkLong(req, "invokeTime"); err != nil {
		return a, err
	}
	if a.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return a, err
	}
	if a.Body, err = decodeSyncStateSet(req.Body); err != nil {
		return a, fmt.Errorf("%w: %w", remoting.ErrBadField, err)
	}
	return a, nil
}

func decodeElect(req *remoting.Command) (electRequest, error) {
	var e electRequest
	var err error
	if e.Cluster, err = req.RequireStr("clusterName"); err != nil {
		return e, err
	}
	if e.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return e, err
	}
	if e.BrokerID, err = req.Int64("brokerId"); err != nil {
		return e, err
	}
	if _, err = req.RequireStr("designateElect"); err != nil {
		return e, err
	}
	e.Designate = req.Bool("designateElect")
	if err = checkLong(req, "invokeTime"); err != nil {
		return e, err
	}
	return e, nil
}

type registerRequest struct {
	Cluster, BrokerName, Addr string
	BrokerID                  int64
}

func decodeRegister(req *remoting.Command) (registerRequest, error) {
	var r registerRequest
	var err error
	r.Cluster = req.Str("clusterName")
	if r.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return r, err
	}
	if r.BrokerID, err = req.Int64("brokerId"); err != nil {
		return r, err
	}
	if r.Addr, err = req.RequireStr("brokerAddress"); err != nil {
		return r, err
	}
	return r, checkLong(req, "invokeTime")
}

type applyRequest struct {
	Cluster, BrokerName, CheckCode string
	BrokerID                       int64
}

func decodeApply(req *remoting.Command) (applyRequest, error) {
	var a applyRequest
	var err error
	a.Cluster = req.Str("clusterName")
	if a.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return a, err
	}
	if a.BrokerID, err = req.Int64("appliedBrokerId"); err != nil {
		return a, err
	}
	if a.CheckCode, err = req.RequireStr("registerCheckCode"); err != nil {
		return a, err
	}
	return a, nil
}

func decodeClean(req *remoting.Command) (cleanRequest, error) {
	var c cleanRequest
	var err error
	c.Cluster = req.Str("clusterName")
	if c.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return c, err
	}
	c.IDsToClean = req.Str("brokerControllerIdsToClean")
	c.CleanLiving = req.Bool("isCleanLivingBroker")
	return c, checkLong(req, "invokeTime")
}

func decodeHeartbeat(req *remoting.Command) (heartbeat, bool, error) {
	var h heartbeat
	var err error
	if h.Cluster, err = req.RequireStr("clusterName"); err != nil {
		return h, false, err
	}
	if h.BrokerAddr, err = req.RequireStr("brokerAddr"); err != nil {
		return h, false, err
	}
	if h.BrokerName, err = req.RequireStr("brokerName"); err != nil {
		return h, false, err
	}
	id, err := optInt64(req, "brokerId")
	if err != nil {
		return h, false, err
	}
	if h.Epoch, err = optInt32(req, "epoch"); err != nil {
		return h, false, err
	}
	if h.MaxOffset, err = optInt64(req, "maxOffset"); err != nil {
		return h, false, err
	}
	if h.ConfirmOffset, err = optInt64(req, "confirmOffset"); err != nil {
		return h, false, err
	}
	if h.TimeoutMillis, err = optInt64(req, "heartbeatTimeoutMills"); err != nil {
		return h, false, err
	}
	if h.ElectionPriority, err = optInt32(req, "electionPriority"); err != nil {
		return h, false, err
	}
	if id == nil {
		return h, false, nil
	}
	h.BrokerID = *id
	return h, true, nil
}
