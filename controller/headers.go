package controller

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// Header decoders, lenient as Apache 5.3.3's decodeCommandCustomHeader: a
// field that is absent or does not parse (a @CFNotNull one too) is logged
// there and left at its default — null, or the header class's initial
// value (ElectMasterRequestHeader's brokerId -1). What Apache's handlers
// then dereference (a null broker name, a null check code) throws and is
// answered SYSTEM_ERROR: those cases return errors wrapping
// remoting.ErrMissingField here (tested against Apache's controller in
// compat-tests/controller_diff_test.go).

// optInt64 is a Long field: nil when absent or unparsable.
func optInt64(req *remoting.Command, key string) *int64 {
	v, ok := req.Lookup(key)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// optInt32 is an Integer field: nil when absent or unparsable.
func optInt32(req *remoting.Command, key string) *int32 {
	v, ok := req.Lookup(key)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return nil
	}
	m := int32(n)
	return &m
}

// optStr is a String field: nil when absent.
func optStr(req *remoting.Command, key string) *string {
	v, ok := req.Lookup(key)
	if !ok {
		return nil
	}
	return &v
}

// npe is what Apache answers where its handler dereferences a null field.
func npe(key string) error {
	return fmt.Errorf("%w: %s (java.lang.NullPointerException)", remoting.ErrMissingField, key)
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
	a.MasterID = optInt64(req, "masterBrokerId")
	a.MasterEpoch = optInt32(req, "masterEpoch")
	// The body is decoded first, then the set is looked up by name.
	if a.Body, err = decodeSyncStateSet(req.Body); err != nil {
		return a, fmt.Errorf("%w: %w", remoting.ErrBadField, err)
	}
	name := optStr(req, "brokerName")
	if name == nil {
		return a, npe("brokerName")
	}
	a.BrokerName = *name
	return a, nil
}

func decodeElect(req *remoting.Command) (electRequest, error) {
	// ElectMasterRequestHeader's defaults: "", "", -1, false.
	e := electRequest{Cluster: req.Str("clusterName"), BrokerName: req.Str("brokerName"), BrokerID: -1, Designate: req.Bool("designateElect")}
	if id := optInt64(req, "brokerId"); id != nil {
		e.BrokerID = *id
	}
	return e, nil
}

type registerRequest struct {
	Cluster, BrokerName string
	BrokerID            *int64  // nil: Apache throws once it needs it
	Addr                *string // likewise
}

func decodeRegister(req *remoting.Command) (registerRequest, error) {
	r := registerRequest{Cluster: req.Str("clusterName"), BrokerID: optInt64(req, "brokerId"), Addr: optStr(req, "brokerAddress")}
	name := optStr(req, "brokerName")
	if name == nil {
		return r, npe("brokerName")
	}
	r.BrokerName = *name
	return r, nil
}

type applyRequest struct {
	Cluster, BrokerName, CheckCode string
	BrokerID                       int64
}

func decodeApply(req *remoting.Command) (applyRequest, error) {
	a := applyRequest{Cluster: req.Str("clusterName")}
	code := optStr(req, "registerCheckCode")
	if code == nil {
		return a, npe("registerCheckCode")
	}
	a.CheckCode = *code
	name := optStr(req, "brokerName")
	if name == nil {
		return a, npe("brokerName")
	}
	a.BrokerName = *name
	id := optInt64(req, "appliedBrokerId")
	if id == nil {
		return a, npe("appliedBrokerId")
	}
	a.BrokerID = *id
	return a, nil
}

func decodeClean(req *remoting.Command) (cleanRequest, error) {
	c := cleanRequest{Cluster: req.Str("clusterName"), IDsToClean: req.Str("brokerControllerIdsToClean"), CleanLiving: req.Bool("isCleanLivingBroker")}
	name := optStr(req, "brokerName")
	if name == nil {
		return c, npe("brokerName")
	}
	c.BrokerName = *name
	return c, nil
}

// decodeHeartbeat reports false when there is no broker id (Apache's
// CONTROLLER_INVALID_REQUEST); nothing else is refused.
func decodeHeartbeat(req *remoting.Command) (heartbeat, bool) {
	h := heartbeat{Cluster: req.Str("clusterName"), BrokerAddr: req.Str("brokerAddr"), BrokerName: req.Str("brokerName"),
		Epoch: optInt32(req, "epoch"), MaxOffset: optInt64(req, "maxOffset"), ConfirmOffset: optInt64(req, "confirmOffset"),
		TimeoutMillis: optInt64(req, "heartbeatTimeoutMills"), ElectionPriority: optInt32(req, "electionPriority")}
	id := optInt64(req, "brokerId")
	if id == nil {
		return h, false
	}
	h.BrokerID = *id
	return h, true
}
