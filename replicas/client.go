package replicas

// Controller requests as Apache's BrokerOuterAPI sends them (header field
// names of the 5.3.3 *RequestHeader classes). Requests that change state
// go to the controller leader, found with CONTROLLER_GET_METADATA_INFO
// (1005) over the controllerAddr list; heartbeats go to every controller,
// one way, because each controller keeps its own heartbeat table.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// ErrNoLeader is returned when no controller in the list names a leader.
var ErrNoLeader = errors.New("no controller leader")

// RefusedError is a controller's answer other than SUCCESS.
type RefusedError struct {
	Code   int32
	Remark string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("controller refused: code %d: %s", e.Code, e.Remark)
}

// ReplicaState is a broker set's master and SyncStateSet as a controller
// answered them (register, elect, get replica info).
type ReplicaState struct {
	MasterID          *int64 // nil: the set has no master
	MasterAddr        string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	SyncStateSet      []int64
}

// Client talks to the controllers of controllerAddr.
type Client struct {
	rc      *remoting.Client
	addrs   []string
	timeout time.Duration

	mu     sync.Mutex
	leader string
}

// NewClient returns a client for controllerAddr (Apache's broker key:
// addresses separated by ';'). rc is the broker's remoting client.
func NewClient(rc *remoting.Client, controllerAddr string, timeout time.Duration) *Client {
	var addrs []string
	for _, a := range strings.Split(controllerAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return &Client{rc: rc, addrs: addrs, timeout: timeout}
}

// Timeout is the wait for one controller answer.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Addrs returns the controller addresses.
func (c *Client) Addrs() []string { return append([]string(nil), c.addrs...) }

// Leader asks the controllers in turn who leads and remembers the answer.
func (c *Client) Leader(ctx context.Context) (string, error) {
	var errs []error
	for _, a := range c.addrs {
		resp, err := c.call(ctx, a, remoting.NewRequest(remoting.ControllerGetMetadataInfo, nil, nil))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		leader := resp.Str("controllerLeaderAddress")
		if resp.Str("isLeader") == "true" {
			leader = a
		}
		if leader != "" {
			c.mu.Lock()
			c.leader = leader
			c.mu.Unlock()
			return leader, nil
		}
	}
	if len(errs) == 0 { // every controller answered; none has a leader yet
		return "", fmt.Errorf("%w among %v: none elected yet", ErrNoLeader, c.addrs)
	}
	return "", fmt.Errorf("%w among %v: %w", ErrNoLeader, c.addrs, errors.Join(errs...))
}

func (c *Client) call(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rc.Invoke(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("controller %s code %d: %w", addr, req.Code, err)
	}
	if resp.Code != remoting.Success {
		return resp, &RefusedError{Code: resp.Code, Remark: resp.Remark}
	}
	return resp, nil
}

// toLeader sends to the remembered leader, looking it up first and once
// more when the answer is CONTROLLER_NOT_LEADER or the call fails.
func (c *Client) toLeader(ctx context.Context, code int32, ext map[string]string, body ...byte) (*remoting.Command, error) {
	c.mu.Lock()
	leader := c.leader
	c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if leader == "" {
			var err error
			if leader, err = c.Leader(ctx); err != nil {
				return nil, err
			}
		}
		resp, err := c.call(ctx, leader, remoting.NewRequest(code, ext, body))
		var ref *RefusedError
		if err == nil || attempt > 0 || (errors.As(err, &ref) && ref.Code != remoting.ControllerNotLeader) {
			return resp, err
		}
		leader = ""
	}
}

// NextBrokerID is CONTROLLER_GET_NEXT_BROKER_ID (1012).
func (c *Client) NextBrokerID(ctx context.Context, cluster, brokerName string) (int64, error) {
	resp, err := c.toLeader(ctx, remoting.ControllerGetNextBrokerID,
		map[string]string{"clusterName": cluster, "brokerName": brokerName})
	if err != nil {
		return 0, err
	}
	id, err := resp.Int64("nextBrokerId")
	if err != nil {
		return 0, fmt.Errorf("next broker id: %w", err)
	}
	return id, nil
}

// ApplyBrokerID is CONTROLLER_APPLY_BROKER_ID (1013).
func (c *Client) ApplyBrokerID(ctx context.Context, cluster, brokerName string, id int64, checkCode string) error {
	_, err := c.toLeader(ctx, remoting.ControllerApplyBrokerID, map[string]string{"clusterName": cluster,
		"brokerName": brokerName, "appliedBrokerId": strconv.FormatInt(id, 10), "registerCheckCode": checkCode})
	return err
}

// Register is CONTROLLER_REGISTER_BROKER (1003).
func (c *Client) Register(ctx context.Context, cluster, brokerName string, id int64, addr string) (ReplicaState, error) {
	return c.state(ctx, remoting.ControllerRegisterBroker, map[string]string{"clusterName": cluster,
		"brokerName": brokerName, "brokerId": strconv.FormatInt(id, 10), "brokerAddress": addr,
		"invokeTime": strconv.FormatInt(time.Now().UnixMilli(), 10)})
}

// Elect is CONTROLLER_ELECT_MASTER (1002) as a broker sends it: it asks
// to become master itself, not designated. CONTROLLER_MASTER_STILL_EXIST
// carries the current master and is an answer, as in Apache's brokerElect.
func (c *Client) Elect(ctx context.Context, cluster, brokerName string, id int64) (ReplicaState, error) {
	resp, err := c.toLeader(ctx, remoting.ControllerElectMaster, map[string]string{"clusterName": cluster,
		"brokerName": brokerName, "brokerId": strconv.FormatInt(id, 10), "designateElect": "false",
		"invokeTime": strconv.FormatInt(time.Now().UnixMilli(), 10)})
	var ref *RefusedError
	if err != nil && !(errors.As(err, &ref) && ref.Code == remoting.ControllerMasterStillExist) {
		return ReplicaState{}, err
	}
	return decodeState(resp)
}

// AlterSyncStateSet is CONTROLLER_ALTER_SYNC_STATE_SET (1001): the master
// (id, epoch) proposes set as the successor of SyncStateSet epoch
// setEpoch; the controller answers the accepted set and its new epoch.
func (c *Client) AlterSyncStateSet(ctx context.Context, brokerName string, masterID int64, masterEpoch int32,
	set []int64, setEpoch int32) ([]int64, int32, error) {
	ids := slices.Sorted(slices.Values(set))
	body := []byte(`{"syncStateSet":[`)
	for i, id := range ids {
		if i > 0 {
			body = append(body, ',')
		}
		body = strconv.AppendInt(body, id, 10)
	}
	body = append(body, `],"syncStateSetEpoch":`...)
	body = strconv.AppendInt(body, int64(setEpoch), 10)
	body = append(body, '}')
	resp, err := c.toLeader(ctx, remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": brokerName,
		"masterBrokerId": strconv.FormatInt(masterID, 10), "masterEpoch": strconv.FormatInt(int64(masterEpoch), 10)}, body...)
	if err != nil {
		return nil, 0, err
	}
	st, err := decodeState(resp)
	if err != nil {
		return nil, 0, err
	}
	return st.SyncStateSet, st.SyncStateSetEpoch, nil
}

// ReplicaInfo is CONTROLLER_GET_REPLICA_INFO (1004).
func (c *Client) ReplicaInfo(ctx context.Context, brokerName string) (ReplicaState, error) {
	return c.state(ctx, remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": brokerName})
}

func (c *Client) state(ctx context.Context, code int32, ext map[string]string) (ReplicaState, error) {
	resp, err := c.toLeader(ctx, code, ext)
	if err != nil {
		return ReplicaState{}, err
	}
	return decodeState(resp)
}

// decodeState reads the master fields of the response header and the
// SyncStateSet body ({"syncStateSet":[1,2],"syncStateSetEpoch":3}; the
// elect response's body nests it beside brokerMemberGroup).
func decodeState(resp *remoting.Command) (ReplicaState, error) {
	var s ReplicaState
	if v, ok := resp.Lookup("masterBrokerId"); ok && v != "" && v != "null" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, fmt.Errorf("masterBrokerId %q: %w", v, err)
		}
		s.MasterID = &id
	}
	s.MasterAddr = resp.Str("masterAddress")
	if v, ok := resp.Lookup("masterEpoch"); ok {
		e, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return s, fmt.Errorf("masterEpoch %q: %w", v, err)
		}
		s.MasterEpoch = int32(e)
	}
	if v, ok := resp.Lookup("syncStateSetEpoch"); ok {
		e, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return s, fmt.Errorf("syncStateSetEpoch %q: %w", v, err)
		}
		s.SyncStateSetEpoch = int32(e)
	}
	if len(resp.Body) > 0 {
		var body struct {
			SyncStateSet      []int64 `json:"syncStateSet"`
			SyncStateSetEpoch *int32  `json:"syncStateSetEpoch"`
		}
		// The elect body's brokerAddrs map has fastjson's bare integer keys.
		if err := json.Unmarshal(config.QuoteBareKeys(resp.Body), &body); err != nil {
			return s, fmt.Errorf("sync state set body: %w", err)
		}
		s.SyncStateSet = body.SyncStateSet
		if body.SyncStateSetEpoch != nil {
			s.SyncStateSetEpoch = *body.SyncStateSetEpoch
		}
	}
	return s, nil
}

// Heartbeat is what BROKER_HEARTBEAT (904) carries.
type Heartbeat struct {
	Cluster, BrokerName, BrokerAddr string
	BrokerID                        int64
	Epoch                           int32 // last epoch in the epoch file, -1 when empty
	MaxOffset, ConfirmOffset        int64
	TimeoutMillis                   int64 // controllerHeartBeatTimeoutMills
	ElectionPriority                int32
}

// SendHeartbeat sends hb one way to every controller; the errors of those
// that could not be reached are joined.
func (c *Client) SendHeartbeat(ctx context.Context, hb Heartbeat) error {
	var errs []error
	for _, a := range c.addrs {
		req := remoting.NewRequest(remoting.BrokerHeartbeat, map[string]string{
			"clusterName": hb.Cluster, "brokerAddr": hb.BrokerAddr, "brokerName": hb.BrokerName,
			"brokerId": strconv.FormatInt(hb.BrokerID, 10), "epoch": strconv.FormatInt(int64(hb.Epoch), 10),
			"maxOffset": strconv.FormatInt(hb.MaxOffset, 10), "confirmOffset": strconv.FormatInt(hb.ConfirmOffset, 10),
			"heartbeatTimeoutMills": strconv.FormatInt(hb.TimeoutMillis, 10),
			"electionPriority":      strconv.FormatInt(int64(hb.ElectionPriority), 10),
		}, nil)
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		err := c.rc.InvokeOneway(cctx, a, req)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("heartbeat to %s: %w", a, err))
		}
	}
	return errors.Join(errs...)
}
